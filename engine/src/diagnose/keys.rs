//! Loose keys: a line's hash and signature under the loose form, the
//! hasher of the maps keyed by them, and the tests on a line's shape
//! (blank, substantive, a line-number prefix, literal `\n`) that the index
//! and the walk share.

use std::collections::HashMap;

use super::fold::compact_into;

/// A 64-bit hash of bytes (FxHash-style over 8-byte words, with a final avalanche).
pub(super) fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64 ^ 0x243f_6a88_85a3_08d3;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// [`loose_key`] with a caller-owned buffer (no allocation per line).
pub(super) fn loose_key_in(line: &[u8], buf: &mut Vec<u8>) -> u64 {
    compact_into(line, buf);
    hash_bytes(buf)
}

/// A cheap signature of a loose form: the length and byte sum of its bytes
/// other than `-` (dash runs fold to one dash, see [`compact_into`]). For
/// an ASCII line it is computed without building the loose form
/// ([`ascii_signature`]), so most lines of a file are rejected by the
/// index at memory speed.
pub(super) fn signature(compacted: &[u8]) -> u64 {
    let (mut n, mut sum) = (0u64, 0u64);
    for &b in compacted {
        let keep = u64::from(b != b'-');
        n += keep;
        sum += keep * u64::from(b);
    }
    mix(n, sum)
}

/// [`signature`] of an ASCII line's loose form, from the line itself.
pub(super) fn ascii_signature(line: &[u8]) -> u64 {
    let (mut n, mut sum) = (0u64, 0u64);
    for &b in line {
        let keep = u64::from(b > b' ' && b != 0x7f && b != b'-');
        n += keep;
        sum += keep * u64::from(b);
    }
    mix(n, sum)
}

fn mix(n: u64, sum: u64) -> u64 {
    let h = (n << 40 ^ sum).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// The loose key and the signature of a line.
pub(super) fn key_and_signature(line: &[u8], buf: &mut Vec<u8>) -> (u64, u64) {
    compact_into(line, buf);
    (hash_bytes(buf), signature(buf))
}

/// The loose key of a line: whitespace (and ASCII controls) removed,
/// look-alikes folded to ASCII, accents and compatibility forms decomposed
/// with their marks dropped. Two lines that differ only in invisible
/// characters have the same key.
pub fn loose_key(line: &[u8]) -> u64 {
    loose_key_in(line, &mut Vec::new())
}

/// A hasher for keys that are already hashes (or small integers, spread).
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub(super) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// The key of a line of only whitespace.
pub(super) fn blank_key() -> u64 {
    hash_bytes(b"")
}

/// Does a line say enough to locate an edit by (at least four characters
/// that are not whitespace; `}` or `end` do not)?
pub(super) fn substantive(line: &[u8]) -> bool {
    line.iter()
        .filter(|b| !b.is_ascii_whitespace())
        .take(4)
        .count()
        >= 4
}

pub(super) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

/// A prefix copied from a read output: optional spaces, an optional `L`, 1–7
/// digits, then a tab, `→`, `:` (and one optional space) or `|` (with
/// optional spaces). Returns the rest of the line.
pub fn strip_line_number(line: &[u8]) -> Option<&[u8]> {
    let mut i = line.iter().take_while(|&&b| b == b' ').count();
    if line.get(i) == Some(&b'L') {
        i += 1;
    }
    let digits = line[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 7 {
        return None;
    }
    i += digits;
    let rest = &line[i..];
    if let Some(r) = rest.strip_prefix(b"\t") {
        return Some(r);
    }
    if let Some(r) = rest.strip_prefix("→".as_bytes()) {
        return Some(r);
    }
    if let Some(r) = rest.strip_prefix(b":") {
        return Some(r.strip_prefix(b" ").unwrap_or(r));
    }
    let spaces = rest.iter().take_while(|&&b| b == b' ').count();
    if let Some(r) = rest[spaces..].strip_prefix(b"|") {
        return Some(r.strip_prefix(b" ").unwrap_or(r));
    }
    None
}

/// The pieces of a line split at literal `\n` (backslash, n), when it has one.
pub(super) fn literal_newline_pieces(line: &[u8]) -> Option<Vec<&[u8]>> {
    memchr::memmem::find(line, b"\\n")?;
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < line.len() {
        if &line[i..i + 2] == b"\\n" {
            pieces.push(&line[start..i]);
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    pieces.push(&line[start..]);
    Some(pieces)
}

/// The loose key of one piece of [`literal_newline_pieces`]: a literal `\t`
/// in it (the same escaping mistake, often in the same line) is dropped, as
/// the loose key drops the tab it stands for.
pub(super) fn piece_key(piece: &[u8]) -> u64 {
    if memchr::memmem::find(piece, b"\\t").is_none() {
        return loose_key(piece);
    }
    let mut unescaped = Vec::with_capacity(piece.len());
    let mut i = 0;
    while i < piece.len() {
        if piece[i..].starts_with(b"\\t") {
            i += 2;
        } else {
            unescaped.push(piece[i]);
            i += 1;
        }
    }
    loose_key(&unescaped)
}
