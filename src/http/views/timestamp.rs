//! Timestamps in answers on the hot path (a duel's and an interleaving's `expires_at`), written
//! straight into a small buffer: the same text as chrono's serialisation of a UTC time
//! (RFC 3339, `Z`, milliseconds shown unless they are zero), which goes through `fmt` and cost
//! a sizeable part of a duel's answer.

use serde::{Serialize, Serializer};

use crate::api::rfc3339;

/// A UTC time of whole milliseconds since the epoch, serialised as RFC 3339.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp(pub i64);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 24];
        match write_rfc3339(self.0, &mut buf) {
            Some(len) => serializer.serialize_str(
                std::str::from_utf8(&buf[..len]).expect("the formatter writes ASCII"),
            ),
            // Outside years 1-9999 (never a duel's expiry): chrono's own text.
            None => chrono::DateTime::from_timestamp_millis(self.0).serialize(serializer),
        }
    }
}

/// Writes `ms` as `YYYY-MM-DDTHH:MM:SS[.mmm]Z`; `None` outside years 1 to 9999.
fn write_rfc3339(ms: i64, out: &mut [u8; 24]) -> Option<usize> {
    out[..19].copy_from_slice(&rfc3339::date_time(ms.div_euclid(1000))?);
    let millis = ms.rem_euclid(1000) as u32;
    if millis == 0 {
        out[19] = b'Z';
        return Some(20);
    }
    out[19] = b'.';
    rfc3339::digits(&mut out[20..23], millis);
    out[23] = b'Z';
    Some(24)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn chrono_text(ms: i64) -> String {
        serde_json::to_string(&chrono::DateTime::from_timestamp_millis(ms).unwrap()).unwrap()
    }

    #[test]
    fn writes_what_chrono_writes() {
        let mut cases = vec![
            0,
            1,
            999,
            1000,
            -1,
            -1000,
            951_782_400_000,     // 2000-02-29
            951_868_799_999,     // 2000-02-29T23:59:59.999
            4_107_542_400_000,   // 2100-03-01
            253_402_300_799_999, // 9999-12-31T23:59:59.999
            -62_135_596_800_000, // 0001-01-01
            1_795_000_000_000,
        ];
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for _ in 0..20_000 {
            cases.push(rng.random_range(-62_135_596_800_000..253_402_300_800_000));
            // Whole seconds, which chrono writes without a fraction.
            cases.push(rng.random_range(-62_135_596_800..253_402_300_800) * 1000);
        }
        for ms in cases {
            let ours = serde_json::to_string(&Timestamp(ms)).unwrap();
            assert_eq!(ours, chrono_text(ms), "{ms}");
        }
    }

    #[test]
    fn falls_back_to_chrono_outside_four_digit_years() {
        for ms in [
            -62_135_596_800_001,
            253_402_300_800_000,
            -100_000_000_000_000,
        ] {
            assert_eq!(
                serde_json::to_string(&Timestamp(ms)).unwrap(),
                chrono_text(ms)
            );
        }
    }
}
