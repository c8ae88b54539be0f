//! Duel tokens: opaque, signed, self-contained. A token carries everything the outcome needs
//! (experiment, the rankers compared, when it was issued and until when an outcome is accepted,
//! the state version it was selected from, and a random duel id), so issuing a duel writes
//! nothing to the database. The signature is HMAC-SHA256 with a secret shared by all replicas
//! through the database; a forged or altered token fails verification.
//!
//! Two layouts: a two-ranker duel keeps the fixed layout it always had (format 1), so tokens
//! issued before multi-ranker experiments existed still verify; a query of a multi-ranker
//! experiment (format 3) ends with the number of rankers and their indices. A duel issued for a
//! unit or a segment (format 5) wraps either layout and adds the unit's keyed hash and the
//! segment's index after it, so the tokens without them keep their exact bytes. The same wrapper's
//! flags say which layer chose the duel (the policy or the decision's confirmation layer), with
//! no further bytes; a token without either flag (issued before they existed) does not say.
//!
//! An interleaving token goes to the browser, and its interleaving says which ranker drafted
//! each shown document: read, it would let a script click for the ranker it wants. So it is
//! encrypted, not only signed: ChaCha20-Poly1305 (ring's AEAD), under a key drawn for each token
//! from the secret and 16 random bytes the token carries, so no key and nonce pair is ever used
//! twice however many tokens are issued. Interleaving tokens of the earlier, signed-only formats
//! (2 and 4) still verify, so those handed out before an upgrade keep working; none are issued.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use ring::aead;
use sha2::Sha256;

use crate::bandit::Chooser;
use crate::interleave::Interleaving;

type HmacSha256 = Hmac<Sha256>;

const FORMAT: u8 = 1;
/// First byte of an interleaving token: different from a duel token's, so neither kind of token
/// is ever accepted as the other.
const INTERLEAVING_FORMAT: u8 = 2;
/// First byte of a multi-ranker duel's payload.
const MULTI_FORMAT: u8 = 3;
/// First byte of an interleaving token of a multi-ranker duel (its payload has no fixed length).
const MULTI_INTERLEAVING_FORMAT: u8 = 4;
/// First byte of a duel payload that carries a unit hash or a segment: then the inner payload
/// (format 1 or 3), a flags byte, the unit hash (flag 1) and the segment index (flag 2).
const CONTEXT_FORMAT: u8 = 5;
/// First byte of an export cursor's payload: never a token's, so neither is accepted as the other.
const CURSOR_FORMAT: u8 = 6;
const HAS_UNIT: u8 = 1;
const HAS_SEGMENT: u8 = 2;
/// Flags of a duel chosen by the policy, and by the decision's confirmation layer (at most one).
const CHOSEN_BY_POLICY: u8 = 4;
const CHOSEN_BY_CONFIRMATION: u8 = 8;
const KNOWN_FLAGS: u8 = HAS_UNIT | HAS_SEGMENT | CHOSEN_BY_POLICY | CHOSEN_BY_CONFIRMATION;
/// Bytes of a unit's keyed hash kept in tokens and outcome rows (128 bits: no collisions among
/// any realistic number of units).
pub const UNIT_HASH_LEN: usize = 16;
/// First byte of an encrypted interleaving token: then its salt and the sealed signed-format
/// payload (format 2 or 4 and what follows it, without the MAC).
const SEALED_INTERLEAVING_FORMAT: u8 = 6;
/// Random bytes of an encrypted token from which its key is drawn.
const SALT_LEN: usize = 16;
/// Bytes reserved for a sealed token before base64: room for two 10-document lists of short
/// ids, so its buffer is seldom grown while it is written.
const SEALED_CAPACITY: usize = 512;
/// What the key of encrypted tokens is drawn from the secret with, so it differs from the MAC key.
const SEALING_CONTEXT: &[u8] = b"joust interleaving token sealing v1";
/// Bytes of the MAC kept in the token: 128 bits is ample against forgery.
const MAC_LEN: usize = 16;
const NONCE_LEN: usize = 16;
const PAYLOAD_LEN: usize = 1 + 8 + 4 + 4 + 8 + 8 + 8 + NONCE_LEN;
/// A multi-ranker payload before its ranker indices: format, experiment, issued, expires,
/// version, nonce, count.
const MULTI_HEADER_LEN: usize = 1 + 8 + 8 + 8 + 8 + NONCE_LEN + 2;

/// The rankers a duel compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DuelRankers {
    /// A two-ranker duel of a pairwise experiment, in the order selected (the same ranker twice
    /// for a self-duel).
    Pair { first: u32, second: u32 },
    /// One query of a multi-ranker experiment: 1 to m distinct rankers, in the order selected.
    Set(Vec<u32>),
}

/// What a duel token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuelClaims {
    pub experiment_id: i64,
    pub rankers: DuelRankers,
    pub issued_at_ms: i64,
    pub expires_at_ms: i64,
    pub state_version: i64,
    pub nonce: [u8; NONCE_LEN],
    /// The keyed hash of the unit the duel was issued for, if the request named one.
    pub unit: Option<[u8; UNIT_HASH_LEN]>,
    /// The index of the segment the request named, if any.
    pub segment: Option<u16>,
    /// Which layer chose the duel; `None` in tokens issued before tokens said.
    pub chosen_by: Option<Chooser>,
}

impl DuelClaims {
    /// The rankers' indices in token order (both sides of a pair, even when they are the same).
    pub fn ranker_indices(&self) -> Vec<u32> {
        match &self.rankers {
            DuelRankers::Pair { first, second } => vec![*first, *second],
            DuelRankers::Set(set) => set.clone(),
        }
    }

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

    fn encode(&self) -> Vec<u8> {
        if self.unit.is_none() && self.segment.is_none() && self.chosen_by.is_none() {
            return self.encode_plain();
        }
        let mut out = vec![CONTEXT_FORMAT];
        out.extend_from_slice(&self.encode_plain());
        let flags = if self.unit.is_some() { HAS_UNIT } else { 0 }
            | if self.segment.is_some() {
                HAS_SEGMENT
            } else {
                0
            }
            | match self.chosen_by {
                None => 0,
                Some(Chooser::Policy) => CHOSEN_BY_POLICY,
                Some(Chooser::Confirmation) => CHOSEN_BY_CONFIRMATION,
            };
        out.push(flags);
        if let Some(unit) = &self.unit {
            out.extend_from_slice(unit);
        }
        if let Some(segment) = self.segment {
            out.extend_from_slice(&segment.to_be_bytes());
        }
        out
    }

    /// The payload without unit or segment (formats 1 and 3).
    fn encode_plain(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PAYLOAD_LEN);
        match &self.rankers {
            DuelRankers::Pair { first, second } => {
                out.push(FORMAT);
                out.extend_from_slice(&self.experiment_id.to_be_bytes());
                out.extend_from_slice(&first.to_be_bytes());
                out.extend_from_slice(&second.to_be_bytes());
                self.encode_times(&mut out);
            }
            DuelRankers::Set(set) => {
                out.push(MULTI_FORMAT);
                out.extend_from_slice(&self.experiment_id.to_be_bytes());
                self.encode_times(&mut out);
                let count =
                    u16::try_from(set.len()).expect("a query shows at most u16::MAX rankers");
                out.extend_from_slice(&count.to_be_bytes());
                for r in set {
                    out.extend_from_slice(&r.to_be_bytes());
                }
            }
        }
        out
    }

    fn encode_times(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.issued_at_ms.to_be_bytes());
        out.extend_from_slice(&self.expires_at_ms.to_be_bytes());
        out.extend_from_slice(&self.state_version.to_be_bytes());
        out.extend_from_slice(&self.nonce);
    }

    /// Decodes a payload at the start of `bytes`; returns the claims and the payload's length.
    fn decode_prefix(bytes: &[u8]) -> Option<(Self, usize)> {
        if *bytes.first()? != CONTEXT_FORMAT {
            return Self::decode_plain_prefix(bytes);
        }
        let (mut claims, inner) = Self::decode_plain_prefix(&bytes[1..])?;
        let mut at = 1 + inner;
        let flags = *bytes.get(at)?;
        at += 1;
        let chosen = flags & (CHOSEN_BY_POLICY | CHOSEN_BY_CONFIRMATION);
        if flags == 0 || flags & !KNOWN_FLAGS != 0 {
            return None;
        }
        claims.chosen_by = match chosen {
            0 => None,
            CHOSEN_BY_POLICY => Some(Chooser::Policy),
            CHOSEN_BY_CONFIRMATION => Some(Chooser::Confirmation),
            _ => return None,
        };
        if flags & HAS_UNIT != 0 {
            claims.unit = Some(bytes.get(at..at + UNIT_HASH_LEN)?.try_into().ok()?);
            at += UNIT_HASH_LEN;
        }
        if flags & HAS_SEGMENT != 0 {
            claims.segment = Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
            at += 2;
        }
        Some((claims, at))
    }

    fn decode_plain_prefix(bytes: &[u8]) -> Option<(Self, usize)> {
        let i64_at = |at: usize| i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        let nonce_at =
            |at: usize| -> [u8; NONCE_LEN] { bytes[at..at + NONCE_LEN].try_into().unwrap() };
        match *bytes.first()? {
            FORMAT if bytes.len() >= PAYLOAD_LEN => Some((
                DuelClaims {
                    experiment_id: i64_at(1),
                    rankers: DuelRankers::Pair {
                        first: u32_at(9),
                        second: u32_at(13),
                    },
                    issued_at_ms: i64_at(17),
                    expires_at_ms: i64_at(25),
                    state_version: i64_at(33),
                    nonce: nonce_at(41),
                    unit: None,
                    segment: None,
                    chosen_by: None,
                },
                PAYLOAD_LEN,
            )),
            MULTI_FORMAT if bytes.len() >= MULTI_HEADER_LEN => {
                let count_at = MULTI_HEADER_LEN - 2;
                let count =
                    u16::from_be_bytes(bytes[count_at..count_at + 2].try_into().unwrap()) as usize;
                let len = MULTI_HEADER_LEN + 4 * count;
                if count == 0 || bytes.len() < len {
                    return None;
                }
                let set = (0..count)
                    .map(|i| u32_at(MULTI_HEADER_LEN + 4 * i))
                    .collect();
                Some((
                    DuelClaims {
                        experiment_id: i64_at(1),
                        rankers: DuelRankers::Set(set),
                        issued_at_ms: i64_at(9),
                        expires_at_ms: i64_at(17),
                        state_version: i64_at(25),
                        nonce: nonce_at(33),
                        unit: None,
                        segment: None,
                        chosen_by: None,
                    },
                    len,
                ))
            }
            _ => None,
        }
    }

    /// Decodes a whole payload.
    fn decode(bytes: &[u8]) -> Option<Self> {
        match Self::decode_prefix(bytes)? {
            (claims, len) if len == bytes.len() => Some(claims),
            _ => None,
        }
    }
}

/// Signs and verifies duel tokens, and seals and opens interleaving tokens, with one secret.
#[derive(Clone)]
pub struct TokenSigner {
    /// The HMAC keyed once: keying hashes the key's inner and outer pads, which every token
    /// would otherwise pay again; a clone of the keyed state is a copy.
    keyed: HmacSha256,
    /// The HMAC that draws each sealed token's key from its salt, keyed once likewise.
    sealing: HmacSha256,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenSigner { .. }")
    }
}

impl TokenSigner {
    pub fn new(secret: &[u8]) -> Self {
        let keyed = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
        let mut root = keyed.clone();
        root.update(SEALING_CONTEXT);
        let sealing = HmacSha256::new_from_slice(&root.finalize().into_bytes())
            .expect("HMAC takes keys of any length");
        TokenSigner { keyed, sealing }
    }

    /// The AEAD key of the sealed token with `salt`.
    fn sealing_key(&self, salt: &[u8]) -> aead::LessSafeKey {
        let mut mac = self.sealing.clone();
        mac.update(salt);
        let key = mac.finalize().into_bytes();
        aead::LessSafeKey::new(
            aead::UnboundKey::new(&aead::CHACHA20_POLY1305, &key).expect("a 32-byte key"),
        )
    }

    fn mac(&self, payload: &[u8]) -> HmacSha256 {
        let mut mac = self.keyed.clone();
        mac.update(payload);
        mac
    }

    pub fn sign(&self, claims: &DuelClaims) -> String {
        let mut bytes = claims.encode();
        let tag = self.mac(&bytes).finalize().into_bytes();
        bytes.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The claims of a token this service signed, or `None` for anything else.
    pub fn verify(&self, token: &str) -> Option<DuelClaims> {
        let bytes = URL_SAFE_NO_PAD.decode(token.trim()).ok()?;
        if bytes.len() <= MAC_LEN {
            return None;
        }
        let (payload, tag) = bytes.split_at(bytes.len() - MAC_LEN);
        // verify_truncated_left compares in constant time.
        self.mac(payload).verify_truncated_left(tag).ok()?;
        DuelClaims::decode(payload)
    }
}

impl TokenSigner {
    /// An export cursor: `body` after its own format byte, signed with the tokens' secret (which
    /// all replicas share and which outlives restarts), so a cursor resumes on any replica and a
    /// forged or altered one is refused.
    pub fn sign_cursor(&self, body: &[u8]) -> String {
        let mut bytes = Vec::with_capacity(1 + body.len() + MAC_LEN);
        bytes.push(CURSOR_FORMAT);
        bytes.extend_from_slice(body);
        let tag = self.mac(&bytes).finalize().into_bytes();
        bytes.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The body of a cursor this service signed, or `None` for anything else (a duel token
    /// included).
    pub fn verify_cursor(&self, cursor: &str) -> Option<Vec<u8>> {
        let bytes = URL_SAFE_NO_PAD.decode(cursor.trim()).ok()?;
        if bytes.len() <= MAC_LEN + 1 || bytes[0] != CURSOR_FORMAT {
            return None;
        }
        let (payload, tag) = bytes.split_at(bytes.len() - MAC_LEN);
        self.mac(payload).verify_truncated_left(tag).ok()?;
        Some(payload[1..].to_vec())
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
    /// An interleaving token: the duel's claims, then the interleaving as compact JSON, sealed
    /// together (see the module docs). Everything the click credit needs travels with the token,
    /// so the interleave call writes nothing to the database.
    #[cfg(test)]
    pub fn sign_interleaving(&self, claims: &InterleavingClaims) -> String {
        self.seal_interleaving(&claims.duel, &claims.interleaving)
    }

    /// [`Self::sign_interleaving`] of the duel and an interleaving of any document type that
    /// serialises as strings do: the interleave call builds its interleaving over the posted
    /// lists' `&str`s, copying no document id, and the token's bytes are those of the same
    /// interleaving of `String`s.
    pub fn seal_interleaving<D: serde::Serialize>(
        &self,
        duel: &DuelClaims,
        interleaving: &Interleaving<D>,
    ) -> String {
        let format = match duel.rankers {
            DuelRankers::Pair { .. } => INTERLEAVING_FORMAT,
            DuelRankers::Set(_) => MULTI_INTERLEAVING_FORMAT,
        };
        let mut bytes = Vec::with_capacity(SEALED_CAPACITY);
        bytes.push(SEALED_INTERLEAVING_FORMAT);
        let salt: [u8; SALT_LEN] = rand::random();
        bytes.extend_from_slice(&salt);
        let sealed_from = bytes.len();
        bytes.push(format);
        bytes.extend_from_slice(&duel.encode());
        serde_json::to_writer(&mut bytes, interleaving).expect("interleavings serialise");
        let (header, payload) = bytes.split_at_mut(sealed_from);
        // Each key seals one token, so the all-zero nonce is never reused under a key.
        let tag = self
            .sealing_key(&header[1..])
            .seal_in_place_separate_tag(
                aead::Nonce::assume_unique_for_key([0; aead::NONCE_LEN]),
                aead::Aad::from(&header[..1]),
                payload,
            )
            .expect("payloads are far below the AEAD's limit");
        bytes.extend_from_slice(tag.as_ref());
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The claims of an interleaving token this service issued, or `None` for anything else.
    pub fn verify_interleaving(&self, token: &str) -> Option<InterleavingClaims> {
        let mut bytes = URL_SAFE_NO_PAD.decode(token.trim()).ok()?;
        let signed = if *bytes.first()? == SEALED_INTERLEAVING_FORMAT {
            if bytes.len() < 1 + SALT_LEN + aead::CHACHA20_POLY1305.tag_len() {
                return None;
            }
            let (header, sealed) = bytes.split_at_mut(1 + SALT_LEN);
            let opened = self
                .sealing_key(&header[1..])
                .open_in_place(
                    aead::Nonce::assume_unique_for_key([0; aead::NONCE_LEN]),
                    aead::Aad::from(&header[..1]),
                    sealed,
                )
                .ok()?;
            &*opened
        } else {
            // A signed-only token of the earlier formats.
            if bytes.len() < 1 + MAC_LEN {
                return None;
            }
            let (signed, tag) = bytes.split_at(bytes.len() - MAC_LEN);
            self.mac(signed).verify_truncated_left(tag).ok()?;
            signed
        };
        Self::read_interleaving(signed)
    }

    /// Reads an authenticated payload of format 2 or 4.
    fn read_interleaving(signed: &[u8]) -> Option<InterleavingClaims> {
        let (duel, len) = DuelClaims::decode_prefix(signed.get(1..)?)?;
        // The outer format must name the payload's kind, so one token has one reading.
        let expected = match duel.rankers {
            DuelRankers::Pair { .. } => INTERLEAVING_FORMAT,
            DuelRankers::Set(_) => MULTI_INTERLEAVING_FORMAT,
        };
        if signed[0] != expected {
            return None;
        }
        let interleaving = serde_json::from_slice(&signed[1 + len..]).ok()?;
        Some(InterleavingClaims { duel, interleaving })
    }

    /// A token of the earlier, signed-only interleaving format, as issued before tokens were
    /// sealed (for the test that they still verify).
    #[cfg(test)]
    fn sign_interleaving_unsealed(&self, claims: &InterleavingClaims) -> String {
        let format = match claims.duel.rankers {
            DuelRankers::Pair { .. } => INTERLEAVING_FORMAT,
            DuelRankers::Set(_) => MULTI_INTERLEAVING_FORMAT,
        };
        let mut bytes = vec![format];
        bytes.extend_from_slice(&claims.duel.encode());
        serde_json::to_writer(&mut bytes, &claims.interleaving).expect("interleavings serialise");
        let tag = self.mac(&bytes).finalize().into_bytes();
        bytes.extend_from_slice(&tag[..MAC_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> DuelClaims {
        DuelClaims {
            experiment_id: 42,
            rankers: DuelRankers::Pair {
                first: 3,
                second: 7,
            },
            issued_at_ms: 1_700_000_000_000,
            expires_at_ms: 1_700_000_600_000,
            state_version: 9,
            nonce: [5; NONCE_LEN],
            unit: None,
            segment: None,
            chosen_by: None,
        }
    }

    #[test]
    fn unit_and_segment_tokens_round_trip_and_resist_tampering() {
        let s = TokenSigner::new(b"secret");
        let variants = [
            (Some([7u8; UNIT_HASH_LEN]), None, None),
            (None, Some(3u16), None),
            (Some([9u8; UNIT_HASH_LEN]), Some(0u16), None),
            (None, None, Some(Chooser::Policy)),
            (None, None, Some(Chooser::Confirmation)),
            (
                Some([9u8; UNIT_HASH_LEN]),
                Some(2u16),
                Some(Chooser::Confirmation),
            ),
        ];
        for (unit, segment, chosen_by) in variants {
            for base in [claims(), set_claims(vec![2, 0, 5])] {
                let c = DuelClaims {
                    unit,
                    segment,
                    chosen_by,
                    ..base
                };
                let token = s.sign(&c);
                assert_eq!(s.verify(&token), Some(c.clone()));
                let mut bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
                for i in 0..bytes.len() {
                    bytes[i] ^= 1;
                    assert_eq!(s.verify(&URL_SAFE_NO_PAD.encode(&bytes)), None, "flip {i}");
                    bytes[i] ^= 1;
                }
                let mut il = interleaving_claims();
                il.duel = c;
                let token = s.sign_interleaving(&il);
                assert_eq!(s.verify_interleaving(&token), Some(il));
                assert_eq!(s.verify(&token), None);
            }
        }
        // A plain duel keeps its bytes.
        assert_eq!(claims().encode()[0], FORMAT);
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

    fn set_claims(set: Vec<u32>) -> DuelClaims {
        DuelClaims {
            rankers: DuelRankers::Set(set),
            ..claims()
        }
    }

    #[test]
    fn pair_tokens_keep_their_fixed_layout() {
        // Tokens handed out before multi-ranker experiments existed must still verify.
        assert_eq!(claims().encode().len(), PAYLOAD_LEN);
        assert_eq!(claims().encode()[0], FORMAT);
        let s = TokenSigner::new(b"secret");
        let bytes = URL_SAFE_NO_PAD.decode(s.sign(&claims())).unwrap();
        assert_eq!(bytes.len(), PAYLOAD_LEN + MAC_LEN);
    }

    #[test]
    fn multi_ranker_tokens_round_trip_and_resist_tampering() {
        let s = TokenSigner::new(b"secret");
        for set in [vec![5], vec![0, 9], vec![8, 1, 3, 2, 7, 4, 6, 0]] {
            let token = s.sign(&set_claims(set.clone()));
            assert_eq!(s.verify(&token), Some(set_claims(set.clone())));
            assert_eq!(set_claims(set.clone()).ranker_indices(), set);
            let mut bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
            for i in 0..bytes.len() {
                bytes[i] ^= 1;
                assert_eq!(
                    s.verify(&URL_SAFE_NO_PAD.encode(&bytes)),
                    None,
                    "flip at {i}"
                );
                bytes[i] ^= 1;
            }
            // Truncated or extended payloads fail too (the MAC covers the length).
            assert_eq!(s.verify(&URL_SAFE_NO_PAD.encode(&bytes[1..])), None);
        }
    }

    #[test]
    fn multi_ranker_interleaving_tokens_round_trip() {
        let s = TokenSigner::new(b"secret");
        let mut claims = interleaving_claims();
        claims.duel = set_claims(vec![4, 2, 9]);
        let token = s.sign_interleaving(&claims);
        assert_eq!(s.verify_interleaving(&token), Some(claims.clone()));
        assert_eq!(s.verify(&token), None);
        let duel = s.sign(&claims.duel);
        assert_eq!(s.verify_interleaving(&duel), None);
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
    fn an_interleaving_of_borrowed_ids_seals_as_the_same_interleaving_of_strings() {
        use crate::interleave::{METHODS, Method, interleave};
        use rand::SeedableRng;
        let s = TokenSigner::new(b"secret");
        // Ids that JSON escapes too, and lists long enough for the hashed document sets.
        let a: Vec<String> = (0..40).map(|i| format!("d\"{i}\u{e9}")).collect();
        let b: Vec<String> = (0..40)
            .map(|i| format!("d\"{}\u{e9}", (i * 7) % 45))
            .collect();
        let (a_ids, b_ids): (Vec<&str>, Vec<&str>) = (
            a.iter().map(String::as_str).collect(),
            b.iter().map(String::as_str).collect(),
        );
        for info in METHODS {
            let method = Method::from_name(info.name).unwrap();
            for seed in 0..5 {
                let rng = || crate::bandit::BanditRng::seed_from_u64(seed);
                let owned = interleave(&method, &[&a, &b], 10, &mut rng()).unwrap();
                let borrowed = interleave(&method, &[&a_ids, &b_ids], 10, &mut rng()).unwrap();
                let token = s.seal_interleaving(&claims(), &borrowed);
                let expected = InterleavingClaims {
                    duel: claims(),
                    interleaving: owned,
                };
                assert_eq!(
                    s.verify_interleaving(&token),
                    Some(expected),
                    "{}",
                    info.name
                );
            }
        }
    }

    #[test]
    fn interleaving_tokens_reveal_no_team_and_differ_each_time() {
        let s = TokenSigner::new(b"secret");
        let claims = interleaving_claims();
        let token = s.sign_interleaving(&claims);
        let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        let plain = serde_json::to_vec(&claims.interleaving).unwrap();
        assert!(String::from_utf8_lossy(&plain).contains("teams"));
        // Not the JSON, nor any 6-byte piece of it, appears in the token.
        for piece in plain.windows(6) {
            assert!(
                !bytes.windows(6).any(|w| w == piece),
                "{:?} readable in the token",
                String::from_utf8_lossy(piece)
            );
        }
        assert_ne!(
            s.sign_interleaving(&claims),
            token,
            "a fresh salt per token"
        );
        assert_eq!(s.verify_interleaving(&token), Some(claims.clone()));
        // Tokens issued before sealing keep verifying.
        let old = s.sign_interleaving_unsealed(&claims);
        assert_eq!(s.verify_interleaving(&old), Some(claims));
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
