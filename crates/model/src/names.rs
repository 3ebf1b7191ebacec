//! Generated session ids: short, readable, and random enough that concurrent
//! spawns rarely collide (the record's create-if-absent settles the rest).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use super::id::SessionId;

const ADJECTIVES: &[&str] = &[
    "amber", "brisk", "calm", "deft", "eager", "fair", "glad", "hardy", "keen", "lucid", "merry",
    "nimble", "plucky", "quiet", "rapid", "sly", "steady", "swift", "tidy", "vivid", "warm",
    "witty", "bold", "bright",
];
const NOUNS: &[&str] = &[
    "badger", "crane", "dingo", "egret", "falcon", "gecko", "heron", "ibis", "jackal", "koala",
    "lemur", "marten", "newt", "otter", "panda", "quail", "raven", "stoat", "tapir", "vole",
    "walrus", "yak", "zebra", "finch",
];

fn random_u64() -> u64 {
    // RandomState is seeded from the OS (per process); mix in the clock as well.
    let mut h = RandomState::new().build_hasher();
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

/// e.g. `swift-otter-3fa`
pub fn generate() -> SessionId {
    let r = random_u64();
    let adj = ADJECTIVES[(r % ADJECTIVES.len() as u64) as usize];
    let noun = NOUNS[((r >> 16) % NOUNS.len() as u64) as usize];
    let suffix = (r >> 32) & 0xfff;
    format!("{adj}-{noun}-{suffix:03x}")
        .parse()
        .unwrap_or_else(|_| unreachable!("generated ids are valid by construction"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_ids_are_valid_and_vary() {
        let a: Vec<_> = (0..50).map(|_| super::generate()).collect();
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert!(distinct.len() > 40);
    }
}
