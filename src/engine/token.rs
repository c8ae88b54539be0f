//! Duel tokens: opaque, signed, self-contained. A token carries everything the outcome needs
//! (experiment, the two rankers, when it was issued and until when an outcome is accepted, the
//! state version it was selected from, and a random duel id), so issuing a duel writes nothing to
//! the database. The signature is HMAC-SHA256 with a secret shared by all replicas through the
//! database; a forged or altered token fails verification.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::interleave::Interleaving;

type HmacSha256 = Hmac<Sha256>;

const FORMAT: u8 = 1;
/// First byte of an interleaving token: different from a duel token's, so neither kind of token
/// is ever accepted as the other.
const INTERLEAVING_FORMAT: u8 = 2;
/// Bytes of the MAC kept in the token: 128 bits is ample against forgery.
const MAC_LEN: usize = 16;
const NONCE_LEN: usize = 16;
const PAYLOAD_LEN: usize = 1 + 8 + 4 + 4 + 8 + 8 + 8 + NONCE_LEN;

/// What a duel token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuelClaims {
    pub experiment_id: i64,
    pub first: u32,
    pub second: u32,
    pub issued_at_ms: i64,
    pub expires_at_ms: i64,
    pub state_version: i64,
    pub nonce: [u8; NONCE_LEN],
}

impl DuelClaims {
    /// The duel's unique id, a UUID (v7: time-ordered) in its canonical text form: the key that
    /// makes its outcome exactly-once.
    pub fn duel_id(&self) -> String {
        self.duel_uuid().to_string()
    }

    /// The duel id as the outcome table's key.
    pub fn duel_uuid(&self) -> uuid::Uuid {
        uuid::Uuid::from_bytes(self.nonce)
    }

    /// A UUIDv7 nonce: 48 bits of milliseconds, then random bits (with the version and variant
    /// bits set), so duel ids sort by issue time.
    pub fn uuid_v7_nonce(issued_at_ms: i64, random: [u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
        let mut n = random;
        n[..6].copy_from_slice(&issued_at_ms.to_be_bytes()[2..]);
        n[6] = 0x70 | (n[6] & 0x0f);
        n[8] = 0x80 | (n[8] & 0x3f);
        n
    }

    fn encode(&self) -> [u8; PAYLOAD_LEN] {
        let mut out = [0u8; PAYLOAD_LEN];
        let mut w = 0;
        let mut put = |bytes: &[u8]| {
            out[w..w + bytes.len()].copy_from_slice(bytes);
            w += bytes.len();
        };
        put(&[FORMAT]);
        put(&self.experiment_id.to_be_bytes());
        put(&self.first.to_be_bytes());
        put(&self.second.to_be_bytes());
        put(&self.issued_at_ms.to_be_bytes());
        put(&self.expires_at_ms.to_be_bytes());
        put(&self.state_version.to_be_bytes());
        put(&self.nonce);
        out
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != PAYLOAD_LEN || bytes[0] != FORMAT {
            return None;
        }
        let i64_at = |at: usize| i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        Some(DuelClaims {
            experiment_id: i64_at(1),
            first: u32_at(9),
            second: u32_at(13),
            issued_at_ms: i64_at(17),
            expires_at_ms: i64_at(25),
            state_version: i64_at(33),
            nonce: bytes[41..41 + NONCE_LEN].try_into().unwrap(),
        })
    }
}

/// Signs and verifies duel tokens with one secret.
#[derive(Clone)]
pub struct TokenSigner {
    key: Vec<u8>,
}

impl TokenSigner {
    pub fn new(secret: &[u8]) -> Self {
        TokenSigner {
            key: secret.to_vec(),
        }
    }

    fn mac(&self, payload: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(payload);
        mac
    }

    pub fn sign(&self, claims: &DuelClaims) -> String {
        let payload = claims.encode();
        let tag = self.mac(&payload).finalize().into_bytes();
        let mut bytes = payload.to_vec();
        bytes.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The claims of a token this service signed, or `None` for anything else.
    pub fn verify(&self, token: &str) -> Option<DuelClaims> {
        let bytes = URL_SAFE_NO_PAD.decode(token.trim()).ok()?;
        if bytes.len() != PAYLOAD_LEN + MAC_LEN {
            return None;
        }
        let (payload, tag) = bytes.split_at(PAYLOAD_LEN);
        // verify_truncated_left compares in constant time.
        self.mac(payload).verify_truncated_left(tag).ok()?;
        DuelClaims::decode(payload)
    }
}

/// What an interleaving token says: its duel, and the interleaving shown for it (the shown
/// documents and what crediting clicks on them needs).
#[derive(Debug, Clone, PartialEq)]
pub struct InterleavingClaims {
    pub duel: DuelClaims,
    pub interleaving: Interleaving<String>,
}

impl TokenSigner {
    /// An interleaving token: the duel's claims, then the interleaving as compact JSON, signed
    /// together. Everything the click credit needs travels with the token, so the interleave call
    /// writes nothing to the database.
    pub fn sign_interleaving(&self, claims: &InterleavingClaims) -> String {
        let mut bytes = vec![INTERLEAVING_FORMAT];
        bytes.extend_from_slice(&claims.duel.encode());
        serde_json::to_writer(&mut bytes, &claims.interleaving).expect("interleavings serialise");
        let tag = self.mac(&bytes).finalize().into_bytes();
        bytes.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The claims of an interleaving token this service signed, or `None` for anything else.
    pub fn verify_interleaving(&self, token: &str) -> Option<InterleavingClaims> {
        let bytes = URL_SAFE_NO_PAD.decode(token.trim()).ok()?;
        if bytes.len() < 1 + PAYLOAD_LEN + MAC_LEN || bytes[0] != INTERLEAVING_FORMAT {
            return None;
        }
        let (signed, tag) = bytes.split_at(bytes.len() - MAC_LEN);
        self.mac(signed).verify_truncated_left(tag).ok()?;
        let duel = DuelClaims::decode(&signed[1..1 + PAYLOAD_LEN])?;
        let interleaving = serde_json::from_slice(&signed[1 + PAYLOAD_LEN..]).ok()?;
        Some(InterleavingClaims { duel, interleaving })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> DuelClaims {
        DuelClaims {
            experiment_id: 42,
            first: 3,
            second: 7,
            issued_at_ms: 1_700_000_000_000,
            expires_at_ms: 1_700_000_600_000,
            state_version: 9,
            nonce: [5; NONCE_LEN],
        }
    }

    #[test]
    fn duel_ids_are_uuid_v7_in_issue_order() {
        let a = DuelClaims {
            nonce: DuelClaims::uuid_v7_nonce(1_700_000_000_000, [0xff; NONCE_LEN]),
            ..claims()
        };
        let b = DuelClaims {
            nonce: DuelClaims::uuid_v7_nonce(1_700_000_000_001, [0x00; NONCE_LEN]),
            ..claims()
        };
        let id = a.duel_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7", "{id}");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert!(a.duel_id() < b.duel_id());
    }

    #[test]
    fn round_trip() {
        let s = TokenSigner::new(b"secret");
        let token = s.sign(&claims());
        assert_eq!(s.verify(&token), Some(claims()));
    }

    #[test]
    fn altered_or_foreign_tokens_fail() {
        let s = TokenSigner::new(b"secret");
        let token = s.sign(&claims());
        let mut bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 1;
            assert_eq!(
                s.verify(&URL_SAFE_NO_PAD.encode(&bytes)),
                None,
                "flip at byte {i}"
            );
            bytes[i] ^= 1;
        }
        assert_eq!(TokenSigner::new(b"other").verify(&token), None);
        assert_eq!(s.verify("not a token"), None);
        assert_eq!(s.verify(""), None);
    }

    fn interleaving_claims() -> InterleavingClaims {
        use crate::interleave::{Method, interleave};
        use rand::SeedableRng;
        let a: Vec<String> = ["d1", "d2", "d3"].iter().map(|s| s.to_string()).collect();
        let b: Vec<String> = ["d2", "d4"].iter().map(|s| s.to_string()).collect();
        let mut rng = crate::bandit::BanditRng::seed_from_u64(1);
        let method = Method::from_name("team_draft").unwrap();
        InterleavingClaims {
            duel: claims(),
            interleaving: interleave(&method, &[&a, &b], 10, &mut rng).unwrap(),
        }
    }

    #[test]
    fn interleaving_tokens_round_trip() {
        let s = TokenSigner::new(b"secret");
        let token = s.sign_interleaving(&interleaving_claims());
        assert_eq!(s.verify_interleaving(&token), Some(interleaving_claims()));
    }

    #[test]
    fn duel_and_interleaving_tokens_are_not_interchangeable() {
        let s = TokenSigner::new(b"secret");
        let duel = s.sign(&claims());
        let interleaving = s.sign_interleaving(&interleaving_claims());
        assert_eq!(s.verify_interleaving(&duel), None);
        assert_eq!(s.verify(&interleaving), None);
    }

    #[test]
    fn altered_interleaving_tokens_fail() {
        let s = TokenSigner::new(b"secret");
        let token = s.sign_interleaving(&interleaving_claims());
        let mut bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 1;
            assert_eq!(
                s.verify_interleaving(&URL_SAFE_NO_PAD.encode(&bytes)),
                None,
                "flip at byte {i}"
            );
            bytes[i] ^= 1;
        }
        assert_eq!(TokenSigner::new(b"other").verify_interleaving(&token), None);
    }
}
