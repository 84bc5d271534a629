//! Node ids and actor ids: 128-bit values written as 32 lowercase hex characters, and the
//! recipe that mints a node id from the node's own fields (SPEC section 1).

use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;

/// A node id or an actor identity: 16 bytes, shown as 32 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Id(pub [u8; 16]);

/// An actor is any 32-hex identity a worker keeps.
pub type Actor = Id;

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Id {
    /// Parses exactly 32 hex characters, either case. `what` names the argument in the error.
    pub fn parse(text: &str, what: &str) -> Result<Id> {
        let bytes = text.as_bytes();
        if bytes.len() != 32 {
            return Err(Error::invalid(format!(
                "{what} must be 32 hex characters, got {} characters: {text:?}",
                text.chars().count()
            )));
        }
        let mut out = [0u8; 16];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let hi = hex_val(pair[0]);
            let lo = hex_val(pair[1]);
            match (hi, lo) {
                (Some(h), Some(l)) => out[i] = (h << 4) | l,
                _ => {
                    return Err(Error::invalid(format!(
                        "{what} must be 32 hex characters [0-9a-f], got {text:?}"
                    )))
                }
            }
        }
        Ok(Id(out))
    }

    /// The 32 lowercase hex characters.
    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(32);
        for b in self.0 {
            s.push(HEX[(b >> 4) as usize] as char);
            s.push(HEX[(b & 15) as usize] as char);
        }
        s
    }

    /// The short form `list` prints: the first 8 hex characters and `...`.
    pub fn short(&self) -> String {
        let mut s = self.hex();
        s.truncate(8);
        s.push_str("...");
        s
    }

    /// Mints a node id: the first 16 bytes of SHA-256 over `claimdag-node-v1`, workspace,
    /// kind, parent id ("" when none) and the trimmed summary, each as its UTF-8 byte length
    /// (8 bytes, big endian) followed by its bytes.
    pub fn mint(workspace: &str, kind: &str, parent: Option<Id>, summary: &str) -> Id {
        let parent_hex = parent.map(|p| p.hex()).unwrap_or_default();
        let mut h = Sha256::new();
        for part in [
            "claimdag-node-v1",
            workspace,
            kind,
            parent_hex.as_str(),
            summary.trim(),
        ] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        let digest = h.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        Id(out)
    }

    /// True when the hex form starts with `prefix` (lowercase hex).
    pub fn starts_with_hex(&self, prefix: &str) -> bool {
        let hex = self.hex();
        hex.starts_with(prefix)
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.hex())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut buf = [0u8; 32];
        for (i, b) in self.0.iter().enumerate() {
            buf[2 * i] = HEX[(b >> 4) as usize];
            buf[2 * i + 1] = HEX[(b & 15) as usize];
        }
        // The buffer holds only ASCII hex digits.
        s.serialize_str(std::str::from_utf8(&buf).unwrap_or_default())
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Id, D::Error> {
        let s: std::borrow::Cow<'de, str> = Deserialize::deserialize(d)?;
        Id::parse(&s, "id").map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_either_case_and_prints_lowercase() {
        let id = Id::parse("000000000000000000000000000000AB", "actor").unwrap();
        assert_eq!(id.hex(), "000000000000000000000000000000ab");
        assert_eq!(id.short(), "00000000...");
    }

    #[test]
    fn parse_refuses_wrong_length_and_alphabet() {
        assert!(Id::parse("abc", "id").is_err());
        assert!(Id::parse("g0000000000000000000000000000000", "id").is_err());
        assert!(Id::parse("é000000000000000000000000000000", "id").is_err());
    }

    #[test]
    fn mint_follows_the_recipe() {
        // Independent computation of the recipe for one input.
        let mut h = Sha256::new();
        for part in ["claimdag-node-v1", "", "task", "", "hello"] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        let d = h.finalize();
        let id = Id::mint("", "task", None, "  hello \n");
        assert_eq!(&id.0[..], &d[..16]);
        assert_ne!(id, Id::mint("ws", "task", None, "hello"));
        assert_ne!(id, Id::mint("", "bug", None, "hello"));
        assert_ne!(id, Id::mint("", "task", Some(id), "hello"));
    }
}
