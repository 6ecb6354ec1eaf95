//! Exact ids for the lines of a section's old sides ([`LineIds`]): the
//! matcher compares ids, never bytes, so an id must stand for exactly one
//! line. Short lines are their own key; longer ones are hashed only to be
//! placed, then compared byte for byte.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast 64-bit line hash (FxHash-style over 8-byte words). Not
/// DoS-resistant, and it need not be: it only places a line of more than
/// [`SHORT_LINE`] bytes in [`LineIds`]'s table, which compares the bytes.
fn line_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    // The length, spread over the word (a small length alone would cancel
    // against a short first word: `""` and `" "` once collided).
    let mut h: u64 = (bytes.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ word(c)).wrapping_mul(K);
    }
    // The tail as one zero-padded word: the length, mixed in first, tells
    // padding from zero bytes.
    let rest = chunks.remainder();
    if !rest.is_empty() {
        h = (h.rotate_left(5) ^ padded_word(rest)).wrapping_mul(K);
    }
    // Final avalanche so the high bits (used as the bucket) depend on every byte.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// A cheap key of a line from its length and its first and last 8 bytes,
/// for the bitset that dismisses the lines of a file that are in no old
/// side without hashing them whole (most lines of a large file).
#[inline]
fn quick_key(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let (head, tail) = if n >= 8 {
        (word(&bytes[..8]), word(&bytes[n - 8..]))
    } else {
        let w = padded_word(bytes);
        (w, w)
    };
    let h = (head ^ tail.rotate_left(29) ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 29)
}

/// Eight bytes as a little-endian word (`c` is exactly 8 bytes long).
#[inline]
fn word(c: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(c);
    u64::from_le_bytes(w)
}

/// Up to 8 bytes (the first 8 of a longer slice) as a little-endian word,
/// zero-padded.
///
/// Built from loads of fixed size that may overlap (the overlapping bytes
/// land on the same places, so or-ing them is exact): a copy of variable
/// length into a buffer was a call to `memcpy`, which cost a sixth of
/// [`LineIds::get`], the hottest loop of the matcher.
#[inline]
fn padded_word(rest: &[u8]) -> u64 {
    let n = rest.len().min(8);
    if n >= 4 {
        let low = u64::from(u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]));
        let t = &rest[n - 4..n];
        let high = u64::from(u32::from_le_bytes([t[0], t[1], t[2], t[3]]));
        low | high << ((n - 4) * 8)
    } else if n > 0 {
        let (mid, last) = (n / 2, n - 1);
        u64::from(rest[0]) | u64::from(rest[mid]) << (mid * 8) | u64::from(rest[last]) << (last * 8)
    } else {
        0
    }
}

/// Hashes a line with [`line_hash`]: the one hash of line bytes, so that
/// [`LineIds`] keeps the lines themselves as keys (no bucket lists).
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    // `[u8]`'s `Hash` writes its length first (through `write_usize`), then
    // its bytes in one `write`; `line_hash` mixes the length in itself.
    fn write_usize(&mut self, _len: usize) {}
    fn write(&mut self, bytes: &[u8]) {
        self.0 = line_hash(bytes);
    }
}

/// Lines of at most this many bytes are their own key ([`ShortLine`]).
const SHORT_LINE: usize = 16;

/// A line of at most [`SHORT_LINE`] bytes, exactly: its length and its
/// bytes as two zero-padded words. The length tells padding from zero bytes,
/// so two lines have the same key only when they are equal.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ShortLine {
    len: u64,
    head: u64,
    tail: u64,
}

impl ShortLine {
    fn of(text: &[u8]) -> Option<ShortLine> {
        let n = text.len();
        (n <= SHORT_LINE).then(|| {
            let (head, tail) = text.split_at(n.min(8));
            ShortLine {
                len: n as u64,
                head: padded_word(head),
                tail: padded_word(tail),
            }
        })
    }
}

/// Mixes the words of a [`ShortLine`] (FxHash-style, then an avalanche so
/// that the high bits, which pick the table's control bytes, depend on all).
#[derive(Default)]
struct ShortLineHasher(u64);

impl Hasher for ShortLineHasher {
    fn finish(&self) -> u64 {
        let h = self.0 ^ (self.0 >> 33);
        h.wrapping_mul(0xff51_afd7_ed55_8ccd) ^ (h >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// Exact ids for the lines of the old sides; 0 for any other line.
///
/// Most lines that get past the filter are real old-side lines, and most of
/// those are short (`}`, `];`, a blank line): those are looked up by their
/// own bytes as a key of three words ([`ShortLine`]), in a table of a few
/// entries that stays in the cache, without a byte-by-byte hash of the
/// line or a comparison with the patch's copy. Longer lines are hashed
/// whole ([`line_hash`]) and compared byte for byte.
pub(super) struct LineIds<'p> {
    bits: u32,
    /// A bitset over the top `bits` bits of [`quick_key`]: most lines of a
    /// file are in no hunk and are dismissed without being hashed whole.
    filter: Vec<u64>,
    /// Each distinct old-side line of at most [`SHORT_LINE`] bytes, and its id.
    short: HashMap<ShortLine, u32, BuildHasherDefault<ShortLineHasher>>,
    /// Each distinct longer old-side line and its id. The table compares the
    /// bytes; the hash only places them.
    long: HashMap<&'p [u8], u32, BuildHasherDefault<LineHasher>>,
    /// The next id to give (ids count from 1 in order of first appearance).
    next: u32,
}

impl<'p> LineIds<'p> {
    pub(super) fn new(old_lines: usize) -> Self {
        let bits = (old_lines.max(1) * 16)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(6, 22);
        LineIds {
            bits,
            filter: vec![0u64; 1 << (bits - 6)],
            short: HashMap::default(),
            long: HashMap::default(),
            next: 1,
        }
    }

    fn bit(&self, h: u64) -> (usize, u64) {
        let bit = (h >> (64 - self.bits)) as usize;
        (bit >> 6, 1 << (bit & 63))
    }

    /// The id of an old-side line, new if its bytes were not seen yet.
    pub(super) fn intern(&mut self, text: &'p [u8]) -> u32 {
        let (word, mask) = self.bit(quick_key(text));
        self.filter[word] |= mask;
        let next = self.next;
        let id = match ShortLine::of(text) {
            Some(key) => *self.short.entry(key).or_insert(next),
            None => *self.long.entry(text).or_insert(next),
        };
        self.next += u32::from(id == next);
        id
    }

    /// The id of any line: 0 when no old side has it.
    pub(super) fn get(&self, text: &[u8]) -> u32 {
        let (word, mask) = self.bit(quick_key(text));
        if self.filter[word] & mask == 0 {
            return 0;
        }
        let id = match ShortLine::of(text) {
            Some(key) => self.short.get(&key),
            None => self.long.get(text),
        };
        id.copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn padded_word_is_the_zero_padded_little_endian_word() {
        let bytes: Vec<u8> = (1..=12).map(|i| i * 17).collect();
        for n in 0..=bytes.len() {
            let mut w = [0u8; 8];
            let k = n.min(8);
            w[..k].copy_from_slice(&bytes[..k]);
            assert_eq!(padded_word(&bytes[..n]), u64::from_le_bytes(w), "{n} bytes");
        }
    }

    #[test]
    fn short_lines_do_not_collide() {
        let lines: [&[u8]; 6] = [b"", b" ", b"  ", b"\t", b"}", b"\0"];
        for (i, a) in lines.iter().enumerate() {
            for b in &lines[i + 1..] {
                assert_ne!(line_hash(a), line_hash(b), "{a:?} {b:?}");
                assert_ne!(quick_key(a), quick_key(b), "{a:?} {b:?}");
                assert!(ShortLine::of(a) != ShortLine::of(b), "{a:?} {b:?}");
            }
        }
    }

    /// Lines around the short/long border (16 bytes), from an alphabet with
    /// a zero byte, so padding and real zeros, and lines that share their
    /// first and last 8 bytes, all come up.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'}')], 0..24)
    }

    proptest! {
        /// Two lines have the same id exactly when their bytes are equal;
        /// a line in no old side gets 0 from `get`, an old-side line its id.
        #[test]
        fn ids_are_exact(
            old in proptest::collection::vec(line(), 1..24),
            probes in proptest::collection::vec(line(), 0..24),
        ) {
            let mut ids = LineIds::new(old.len());
            let given: Vec<u32> = old.iter().map(|l| ids.intern(l)).collect();
            for (a, ia) in old.iter().zip(&given) {
                prop_assert_ne!(*ia, 0);
                prop_assert_eq!(ids.get(a), *ia);
                for (b, ib) in old.iter().zip(&given) {
                    prop_assert_eq!(a == b, ia == ib, "{:?} {:?}", a, b);
                }
            }
            for p in &probes {
                let expected = old.iter().position(|l| l == p).map_or(0, |i| given[i]);
                prop_assert_eq!(ids.get(p), expected, "{:?}", p);
            }
        }
    }
}
