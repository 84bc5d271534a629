//! Node ids and actor ids: 128-bit values written as 32 lowercase hex characters, and the
//! recipe that mints a node id from the node's own fields (docs/reference.md, "Nodes").

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;

/// A node id or an actor identity: 16 bytes, shown as 32 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Id(pub [u8; 16]);

/// An id or actor argument that was refused; the message names the argument and says what
/// was wrong. It becomes the core's `invalid_input` error (`From<IdError> for Error`) with
/// the same message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdError(pub String);

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IdError {}

/// An actor is any 32-hex identity a worker keeps.
pub type Actor = Id;

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Id {
    /// Parses exactly 32 hex characters, either case. `what` names the argument in the error.
    pub fn parse(text: &str, what: &str) -> Result<Id, IdError> {
        let bytes = text.as_bytes();
        if bytes.len() != 32 {
            return Err(IdError(format!(
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
                    return Err(IdError(format!(
                        "{what} must be 32 hex characters [0-9a-f], got {text:?}"
                    )))
                }
            }
        }
        Ok(Id(out))
    }

    /// Exactly 32 lowercase hex characters, as a file written by claimdag holds them.
    pub fn from_hex(text: &[u8]) -> Option<Id> {
        if text.len() != 32 {
            return None;
        }
        let mut out = [0u8; 16];
        // Any character that is not lowercase hex sets a high bit.
        let mut bad = 0u8;
        for (o, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
            let (h, l) = (LOWER_HEX[pair[0] as usize], LOWER_HEX[pair[1] as usize]);
            bad |= h | l;
            *o = (h << 4) | (l & 15);
        }
        (bad & 0xf0 == 0).then_some(Id(out))
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

    /// The actor minted from a name (docs/reference.md, "The actor recipe"): the first 16 bytes of SHA-256 over
    /// `claimdag-actor-v1` and the name, each as its UTF-8 byte length (8 bytes, big
    /// endian) followed by its bytes. A name is 1-64 characters of `[A-Za-z0-9._@-]`.
    ///
    /// ```
    /// let a = claimdag::Actor::from_name("codex-1").unwrap();
    /// assert_eq!(a, claimdag::Actor::parse_actor("name:codex-1", "actor").unwrap());
    /// assert!(claimdag::Actor::from_name("no spaces").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<Id, IdError> {
        let ok = (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'@' | b'-'));
        if !ok {
            return Err(IdError(format!(
                "an actor name must be 1-64 characters of [A-Za-z0-9._@-], got {name:?}"
            )));
        }
        let mut h = Sha256::new();
        for part in ["claimdag-actor-v1", name] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        let digest = h.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        Ok(Id(out))
    }

    /// The actor a name stands for, the name given as `NAME` or as `name:NAME` (what
    /// `claimdag actor` and the Python module's `actor` take).
    pub fn from_name_arg(name: &str) -> Result<Id, IdError> {
        Id::from_name(name.strip_prefix("name:").unwrap_or(name))
    }

    /// An actor as a user writes it: 32 hex characters (either case), or `name:NAME` for
    /// the actor minted from NAME ([`Id::from_name`]), exactly: nothing around it is
    /// trimmed, as [`Id::from_name`] trims nothing. `what` names the argument.
    pub fn parse_actor(text: &str, what: &str) -> Result<Id, IdError> {
        let t = text;
        match t.strip_prefix("name:") {
            Some(name) => Id::from_name(name).map_err(|IdError(m)| IdError(format!("{what}: {m}"))),
            None => Id::parse(t, what)
                .map_err(|IdError(m)| IdError(format!("{m} (or name:NAME for a named actor)"))),
        }
    }

    /// True when the hex form starts with `prefix` (lowercase hex).
    pub fn starts_with_hex(&self, prefix: &str) -> bool {
        let hex = self.hex();
        hex.starts_with(prefix)
    }
}

/// The value of each hex digit byte, 0xff for any other byte.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut c = 0;
    while c < 10 {
        t[b'0' as usize + c] = c as u8;
        c += 1;
    }
    let mut c = 0;
    while c < 6 {
        t[b'a' as usize + c] = 10 + c as u8;
        t[b'A' as usize + c] = 10 + c as u8;
        c += 1;
    }
    t
};

/// The value of each lowercase hex character; 0xff for every other byte.
pub const LOWER_HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 16 {
        t[b"0123456789abcdef"[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// The value of 1 to 16 lowercase hex characters, as claimdag's files write numbers; `None`
/// for anything else.
pub fn lower_hex_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let mut bad = 0u8;
    let v = b.iter().fold(0u64, |acc, &c| {
        let v = LOWER_HEX[c as usize];
        bad |= v;
        (acc << 4) | (v & 15) as u64
    });
    (bad & 0xf0 == 0).then_some(v)
}

fn hex_val(c: u8) -> Option<u8> {
    match HEX_VALUE[c as usize] {
        0xff => None,
        v => Some(v),
    }
}

impl std::hash::Hash for Id {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(&self.0);
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
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("32 hex characters")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<Id, E> {
                Id::parse(s, "id").map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

impl schemars::JsonSchema for Id {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Id".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9a-f]{32}$",
            "description": "32 lowercase hex characters"
        })
    }
}

/// Hashes an [`Id`] by its first 8 bytes: ids are SHA-256 output (or actor identities
/// chosen by workers), so they need no further mixing, and lookups stay cheap.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // An Id hashes as one 16-byte write of well-mixed bytes; mix both halves so that
        // actor ids like 00..07 (all entropy at the end) spread too.
        for chunk in bytes.chunks(8) {
            let mut c = [0u8; 8];
            c[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(29) ^ u64::from_le_bytes(c))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
}

/// A `HashMap` keyed by [`Id`] with [`IdHasher`].
pub type IdMap<V> = std::collections::HashMap<Id, V, std::hash::BuildHasherDefault<IdHasher>>;

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
    fn actor_names_follow_the_recipe() {
        let mut h = Sha256::new();
        for part in ["claimdag-actor-v1", "codex-1"] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        let d = h.finalize();
        let a = Id::from_name("codex-1").unwrap();
        assert_eq!(&a.0[..], &d[..16]);
        assert_eq!(Id::parse_actor("name:codex-1", "actor").unwrap(), a);
        assert_eq!(Id::from_name_arg("name:codex-1").unwrap(), a);
        assert_eq!(Id::from_name_arg("codex-1").unwrap(), a);
        assert_eq!(
            Id::parse_actor(&a.hex().to_uppercase(), "actor").unwrap(),
            a
        );
        for bad in [
            "name:",
            "name:a b",
            "name:é",
            // Taken exactly, as from_name takes a name: nothing is trimmed.
            " name:codex-1 ",
            "name:tab\t",
            "name:name:codex-1",
            &format!("name:{}", "x".repeat(65)),
        ] {
            assert!(Id::parse_actor(bad, "actor").is_err(), "{bad}");
        }
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
