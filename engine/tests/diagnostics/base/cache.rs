//! A small LRU cache with per-entry expiry.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// One cached value and when it expires.
struct Entry<V> {
    value: V,
    expires: Instant,
    last_used: u64,
}

/// A least-recently-used cache bounded by `capacity`.
pub struct LruCache<K, V> {
    map: HashMap<K, Entry<V>>,
    capacity: usize,
    ttl: Duration,
    clock: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> LruCache<K, V> {
    /// A cache holding at most `capacity` entries, each for `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        assert!(capacity > 0, "capacity must be positive");
        LruCache {
            map: HashMap::with_capacity(capacity),
            capacity,
            ttl,
            clock: 0,
        }
    }

    /// The value for `key`, if present and not expired.
    pub fn get(&mut self, key: &K) -> Option<V> {
        self.clock += 1;
        let now = Instant::now();
        match self.map.get_mut(key) {
            Some(entry) if entry.expires > now => {
                entry.last_used = self.clock;
                Some(entry.value.clone())
            }
            Some(_) => {
                self.map.remove(key);
                None
            }
            None => None,
        }
    }

    /// Insert or replace `key`, evicting the least recently used entry when full.
    pub fn put(&mut self, key: K, value: V) {
        self.clock += 1;
        if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            self.evict();
        }
        let expires = Instant::now() + self.ttl;
        self.map.insert(key, Entry { value, expires, last_used: self.clock });
    }

    fn evict(&mut self) {
        let oldest = self
            .map
            .iter()
            .min_by_key(|(_, e)| e.last_used)
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            self.map.remove(&k);
        }
    }

    /// How many entries are cached (expired ones included until touched).
    pub fn len(&self) -> usize {
        self.map.len()
    }
}
