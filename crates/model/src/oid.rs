//! Object ids as our own type: SHA-1 (20 bytes) or SHA-256 (32 bytes), shown as
//! lower-case hex. The git boundary converts them to and from gix's ids; nothing
//! else needs to know which library reads the objects.

use std::fmt;
use std::str::FromStr;

/// A git object id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Oid {
    len: u8,
    bytes: [u8; 32],
}

impl Oid {
    /// From raw bytes: 20 (SHA-1) or 32 (SHA-256); anything else is `None`.
    pub fn from_bytes(raw: &[u8]) -> Option<Oid> {
        if raw.len() != 20 && raw.len() != 32 {
            return None;
        }
        let mut bytes = [0u8; 32];
        bytes[..raw.len()].copy_from_slice(raw);
        Some(Oid {
            len: raw.len() as u8,
            bytes,
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The first `n` hex digits, as `git log --oneline` shows them.
    pub fn short(&self, n: usize) -> String {
        let full = self.to_string();
        full[..n.min(full.len())].to_owned()
    }
}

impl fmt::Display for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Oid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Oid({self})")
    }
}

/// Not a full hex object id.
#[derive(Debug, PartialEq, Eq)]
pub struct InvalidOid(String);

impl fmt::Display for InvalidOid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an object id: {}", crate::command::quoted(&self.0))
    }
}

impl std::error::Error for InvalidOid {}

impl FromStr for Oid {
    type Err = InvalidOid;

    /// 40 or 64 hex digits (either case).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || InvalidOid(s.to_owned());
        if s.len() != 40 && s.len() != 64 {
            return Err(bad());
        }
        let mut raw = [0u8; 32];
        // Branch-free per digit (a listing of 1,000 fetched sessions parses
        // 5,000 ids): `HEX` holds each digit's value, 0xff for a non-digit.
        let mut invalid = 0u8;
        for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
            let (hi, lo) = (HEX[usize::from(pair[0])], HEX[usize::from(pair[1])]);
            invalid |= (hi | lo) & 0xf0;
            raw[i] = hi << 4 | (lo & 0x0f);
        }
        if invalid != 0 {
            return Err(bad());
        }
        Oid::from_bytes(&raw[..s.len() / 2]).ok_or_else(bad)
    }
}

/// The value of each hex digit (either case), 0xff for any other byte.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b @ b'0'..=b'9' => b - b'0',
            b @ b'a'..=b'f' => b - b'a' + 10,
            b @ b'A'..=b'F' => b - b'A' + 10,
            _ => 0xff,
        };
        c += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_sha1_and_sha256() {
        for hex in ["0123456789abcdef0123456789abcdef01234567", &"ab".repeat(32)] {
            let oid: Oid = hex.parse().unwrap();
            assert_eq!(oid.to_string(), hex);
            assert_eq!(oid.as_bytes().len(), hex.len() / 2);
        }
        let upper: Oid = "ABCDEF0123456789ABCDEF0123456789ABCDEF01".parse().unwrap();
        assert_eq!(
            upper.to_string(),
            "abcdef0123456789abcdef0123456789abcdef01"
        );
        assert_eq!(upper.short(7), "abcdef0");
    }

    #[test]
    fn refuses_what_is_not_a_full_id() {
        let wide = format!("{}é", "a".repeat(38));
        for bad in [
            "",
            "abc",
            &"g".repeat(40),
            &"a".repeat(41),
            &"a".repeat(39),
            &format!("{}G", "a".repeat(39)),
            &format!("/{}", "a".repeat(39)),
            &format!("{}:", "a".repeat(63)),
            &wide,
        ] {
            assert!(bad.parse::<Oid>().is_err(), "{bad:?}");
        }
    }
}
