//! Random streams keyed by stable names.
//!
//! Every random draw in tbsim comes from a stream derived from `(master seed, key)`,
//! where the key is a stable content name such as `npc/dana-li/reply` or
//! `gen/day-1/task/kb-fix`. Adding a task or a person therefore never shifts another
//! object's randomness, unlike handing out streams in creation order.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator behind every stream: named, portable and reproducible across
/// platforms and crate versions (unlike `StdRng`).
pub type StreamRng = Xoshiro256PlusPlus;

/// FNV-1a over the key's bytes: tiny, stable across versions and platforms.
pub fn stable_hash64(key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A fresh stream for `(master, key)`. `seed_from_u64` runs SplitMix64 over the
/// mixed value, which decorrelates neighbouring seeds and keys.
pub fn stream(master: u64, key: &str) -> StreamRng {
    StreamRng::seed_from_u64(master ^ stable_hash64(key).rotate_left(17))
}

/// Lazily created, persistent streams for one simulation run.
#[derive(Debug, Clone)]
pub struct RngStreams {
    master: u64,
    streams: BTreeMap<String, StreamRng>,
}

impl RngStreams {
    /// Streams derived from `master`.
    pub fn new(master: u64) -> Self {
        RngStreams {
            master,
            streams: BTreeMap::new(),
        }
    }

    /// The master seed.
    pub fn master(&self) -> u64 {
        self.master
    }

    /// The stream for `key`, continuing where its last draw left off.
    pub fn get(&mut self, key: &str) -> &mut StreamRng {
        let master = self.master;
        self.streams
            .entry(key.to_owned())
            .or_insert_with(|| stream(master, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_depend_on_key_not_on_creation_order() {
        let mut a = RngStreams::new(7);
        let x1: u64 = a.get("npc/x").random();
        let _: u64 = a.get("npc/y").random();
        let mut b = RngStreams::new(7);
        let _: u64 = b.get("npc/y").random();
        let _: u64 = b.get("npc/z").random();
        let x2: u64 = b.get("npc/x").random();
        assert_eq!(x1, x2);
    }

    #[test]
    fn different_seeds_and_keys_differ() {
        let v = |m, k: &str| -> u64 { stream(m, k).random() };
        assert_ne!(v(1, "a"), v(2, "a"));
        assert_ne!(v(1, "a"), v(1, "b"));
        assert_eq!(v(1, "a"), v(1, "a"));
    }

    #[test]
    fn hash_is_pinned() {
        // Changing the hash would silently change every generated world.
        assert_eq!(stable_hash64(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash64("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
