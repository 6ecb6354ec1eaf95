//! Line views over file bytes, shared by every tool that edits by line.
//!
//! A *line* is a run of bytes ended by `\n`, or the run after the last `\n`
//! when the file does not end with one (TUL-002 §6: a final line without a
//! newline is still a line). A line's *content* excludes its `\n` and one
//! `\r` before it, so a CRLF file is matched by LF text; its *ending* is
//! `"\r\n"`, `"\n"` or `""` and is kept byte-for-byte wherever a tool does
//! not rewrite the line. A UTF-8 byte-order mark is not part of line 1's
//! content and stays in front of the file.
//!
//! The index is one list of line starts (`Offsets`: 32 bits each while
//! the file is under 4 GiB), built with SSE2 compares (or memchr where
//! there is no SSE2): no allocation per line; a
//! file of 8 MiB or more is scanned on several threads, one per 4 MiB up to
//! the number of cores (`crate::parallel`). The same scan can give each
//! line a 32-bit key while the line is in the cache
//! (`Lines::new_with_keys`; the matcher's line ids).

use crate::parallel;

/// A list of byte offsets or line numbers, stored in 32 bits while every
/// value fits (any file under 4 GiB) and widened to `usize` the first time
/// one does not. The per-line indexes of a large file are its biggest
/// allocations after its bytes: 32 bits halves them (a 100 MB file of 2.8
/// million lines: 11 MB instead of 22 MB for each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Offsets {
    /// Every value fits in 32 bits.
    Narrow(Vec<u32>),
    /// Some value did not.
    Wide(Vec<usize>),
}

impl Offsets {
    /// An empty list with room for `capacity` values.
    pub(crate) fn with_capacity(capacity: usize) -> Offsets {
        Offsets::Narrow(Vec::with_capacity(capacity))
    }

    /// `n` zeros.
    pub(crate) fn zeros(n: usize) -> Offsets {
        Offsets::Narrow(vec![0; n])
    }

    /// Append `value`, widening the list if it does not fit in 32 bits.
    pub(crate) fn push(&mut self, value: usize) {
        match self {
            Offsets::Narrow(values) => match u32::try_from(value) {
                Ok(v) => values.push(v),
                Err(_) => {
                    self.widen();
                    self.push(value);
                }
            },
            Offsets::Wide(values) => values.push(value),
        }
    }

    /// Set value `i` (which must exist), widening if it does not fit.
    pub(crate) fn set(&mut self, i: usize, value: usize) {
        match self {
            Offsets::Narrow(values) => match u32::try_from(value) {
                Ok(v) => values[i] = v,
                Err(_) => {
                    self.widen();
                    self.set(i, value);
                }
            },
            Offsets::Wide(values) => values[i] = value,
        }
    }

    fn widen(&mut self) {
        if let Offsets::Narrow(values) = self {
            *self = Offsets::Wide(values.iter().map(|&v| v as usize).collect());
        }
    }

    /// Value `i` (which must exist).
    pub(crate) fn get(&self, i: usize) -> usize {
        match self {
            Offsets::Narrow(values) => values[i] as usize,
            Offsets::Wide(values) => values[i],
        }
    }

    /// How many values there are.
    pub(crate) fn len(&self) -> usize {
        match self {
            Offsets::Narrow(values) => values.len(),
            Offsets::Wide(values) => values.len(),
        }
    }

    /// The last value.
    pub(crate) fn last(&self) -> Option<usize> {
        match self {
            Offsets::Narrow(values) => values.last().map(|&v| v as usize),
            Offsets::Wide(values) => values.last().copied(),
        }
    }

    /// Remove the last value.
    pub(crate) fn pop(&mut self) {
        match self {
            Offsets::Narrow(values) => {
                values.pop();
            }
            Offsets::Wide(values) => {
                values.pop();
            }
        }
    }

    /// The number of leading values for which `pred` holds (the list must be
    /// partitioned by it, as for [`slice::partition_point`]).
    pub(crate) fn partition_point(&self, mut pred: impl FnMut(usize) -> bool) -> usize {
        match self {
            Offsets::Narrow(values) => values.partition_point(|&v| pred(v as usize)),
            Offsets::Wide(values) => values.partition_point(|&v| pred(v)),
        }
    }

    /// Where `value` is in this ascending list, if it is, knowing that it
    /// can only be at a position in `within`.
    pub(crate) fn position_sorted_within(
        &self,
        within: std::ops::Range<usize>,
        value: usize,
    ) -> Option<usize> {
        let (start, end) = (within.start, within.end);
        let i = start
            + match self {
                Offsets::Narrow(values) => {
                    values[within].partition_point(|&v| (v as usize) < value)
                }
                Offsets::Wide(values) => values[within].partition_point(|&v| v < value),
            };
        (i < end && self.get(i) == value).then_some(i)
    }
}

/// The UTF-8 byte-order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The line ending a tool writes for lines it adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Newline {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl Newline {
    /// The bytes of this ending.
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Newline::Lf => b"\n",
            Newline::CrLf => b"\r\n",
        }
    }
}

/// A file's bytes split into lines.
#[derive(Clone, Debug)]
pub struct Lines<'a> {
    bytes: &'a [u8],
    bom: bool,
    /// Start offset of every line, then `bytes.len()` as a sentinel.
    starts: Offsets,
}

impl<'a> Lines<'a> {
    /// Index the lines of `bytes` (a large file on several threads).
    pub fn new(bytes: &'a [u8]) -> Lines<'a> {
        Lines::split(
            bytes,
            parallel::parts(bytes.len(), PARALLEL_PART_BYTES),
            NO_KEY,
        )
        .0
    }

    /// [`Lines::new`], and `key(content)` of every line, in line order.
    ///
    /// The keys are computed in the same pass that finds the lines, while
    /// each line is still in the cache: a second pass over a file larger
    /// than the cache would read all of it from memory again (the matcher
    /// gives every line of the file an id this way).
    pub(crate) fn new_with_keys<K>(bytes: &'a [u8], key: K) -> (Lines<'a>, Vec<u32>)
    where
        K: Fn(&[u8]) -> u32 + Sync,
    {
        let parts = parallel::parts(bytes.len(), PARALLEL_PART_BYTES);
        Lines::split(bytes, parts, Some(&key))
    }

    /// [`Lines::new_with_keys`] (or [`Lines::new`] when `key` is `None`,
    /// which leaves the keys empty) with the scan cut into `parts`
    /// stretches, one thread each (the crate's tests force the parts).
    pub(crate) fn split<K>(bytes: &'a [u8], parts: usize, key: Option<&K>) -> (Lines<'a>, Vec<u32>)
    where
        K: Fn(&[u8]) -> u32 + Sync,
    {
        let bom = bytes.starts_with(BOM);
        let body = if bom { BOM.len() } else { 0 };
        let (mut starts, mut keys) = if body < bytes.len() {
            line_starts(bytes, body, parts, key)
        } else {
            (Offsets::with_capacity(1), Vec::new())
        };
        match (starts.last(), key) {
            (Some(last), _) if last == bytes.len() => starts.pop(),
            // A last line without a newline: no newline ended it in the
            // scan, so its key is taken here.
            (Some(last), Some(key)) => keys.push(key(without_ending(&bytes[last..]))),
            _ => {}
        }
        starts.push(bytes.len());
        (Lines { bytes, bom, starts }, keys)
    }

    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// True when the file starts with a UTF-8 byte-order mark.
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// The number of lines (an empty file has none; `"a"` and `"a\n"` have one).
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when the file has no lines.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` (0-based) with its ending.
    pub fn full(&self, i: usize) -> &'a [u8] {
        &self.bytes[self.starts.get(i)..self.starts.get(i + 1)]
    }

    /// Line `i` (0-based) without its ending.
    pub fn content(&self, i: usize) -> &'a [u8] {
        without_ending(self.full(i))
    }

    /// The ending of line `i`: `"\r\n"`, `"\n"` or `""` (last line only).
    pub fn ending(&self, i: usize) -> &'a [u8] {
        let full = self.full(i);
        &full[full.len() - ending_len(full)..]
    }

    /// Byte offset where line `i` starts (`i == len()` gives the end of the file).
    pub fn start(&self, i: usize) -> usize {
        self.starts.get(i)
    }

    /// True when the last line ends with a newline (an empty file: true, there is nothing to end).
    pub fn ends_with_newline(&self) -> bool {
        self.is_empty() || !self.ending(self.len() - 1).is_empty()
    }

    /// The ending a tool should use for lines it adds: that of the first
    /// line that has one, LF for a file without any.
    pub fn newline(&self) -> Newline {
        (0..self.len())
            .map(|i| self.ending(i))
            .find(|e| !e.is_empty())
            .map_or(Newline::Lf, |e| {
                if e == b"\r\n" {
                    Newline::CrLf
                } else {
                    Newline::Lf
                }
            })
    }
}

/// No key: [`Lines::split`] for [`Lines::new`].
const NO_KEY: Option<&fn(&[u8]) -> u32> = None;

/// A file at least twice this long is split into lines on more than one
/// thread: below, starting one costs more than it saves.
const PARALLEL_PART_BYTES: usize = 4 << 20;

/// `body` (where line 1 starts) and the start of every line after it: the
/// offset after each `\n` of `bytes[body..]`, up to `bytes.len()` itself;
/// with `key`, also `key(content)` of every line a `\n` ends.
/// With `parts > 1` the bytes are cut just after a `\n` into that many
/// stretches of about equal length, each scanned on its own thread.
fn line_starts<K>(bytes: &[u8], body: usize, parts: usize, key: Option<&K>) -> (Offsets, Vec<u32>)
where
    K: Fn(&[u8]) -> u32 + Sync,
{
    // A file of 4 GiB or more keeps the one-thread path: its offsets widen.
    if parts <= 1 || u32::try_from(bytes.len()).is_err() {
        let mut starts = Offsets::with_capacity(starts_capacity(bytes));
        let mut keys = Vec::with_capacity(if key.is_some() {
            starts_capacity(bytes)
        } else {
            0
        });
        starts.push(body);
        let mut start = body;
        for i in newlines(&bytes[body..]) {
            let end = body + i;
            if let Some(key) = key {
                keys.push(key(without_ending(&bytes[start..=end])));
            }
            start = end + 1;
            starts.push(start);
        }
        return (starts, keys);
    }
    let len = bytes.len() - body;
    let mut cuts = vec![body];
    for p in 1..parts {
        let from = (body + len / parts * p).max(cuts[cuts.len() - 1]);
        let cut = memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i + 1);
        cuts.push(cut);
    }
    cuts.push(bytes.len());
    let stretches: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    // Two passes, each on every core: count the lines of each stretch, then
    // write their starts (and keys) straight into their place in the one
    // list (no list per stretch to be joined afterwards).
    let mut counts = vec![0usize; parts];
    let counting = counts.iter_mut().zip(&stretches).collect();
    parallel::for_each(counting, parts, |(count, &(from, to))| {
        *count = memchr::memchr_iter(b'\n', &bytes[from..to]).count();
    });
    // Every value is at most `bytes.len()`, which fits in 32 bits (checked
    // above), so the list is narrow from the start.
    let lines = counts.iter().sum::<usize>();
    // Room for the end-of-file sentinel `Lines` pushes (and the key of a
    // last line without a newline), so that push does not copy the whole
    // list. Allocated zeroed rather than filled with zeros: a large zeroed
    // allocation is fresh pages the kernel zeroes on first touch, which
    // happens below on every core, while `resize` would write (and fault
    // in) the whole list on this one first (6 ms of 11 MB for 100 MB of
    // source).
    let mut starts = vec![0u32; lines + 2];
    starts.truncate(lines + 1);
    starts[0] = body as u32;
    let mut keys = if key.is_some() {
        let mut keys = vec![0u32; lines + 1];
        keys.truncate(lines);
        keys
    } else {
        Vec::new()
    };
    let mut rest = &mut starts[1..];
    let mut rest_keys = &mut keys[..];
    let mut filling = Vec::with_capacity(parts);
    for (&(from, to), &count) in stretches.iter().zip(&counts) {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(count);
        rest = tail;
        let keys_piece = if key.is_some() {
            let (piece, tail) = std::mem::take(&mut rest_keys).split_at_mut(count);
            rest_keys = tail;
            piece
        } else {
            &mut []
        };
        filling.push((piece, keys_piece, from, to));
    }
    parallel::for_each(filling, parts, |(piece, keys_piece, from, to)| {
        let ends = newlines(&bytes[from..to]);
        match key {
            None => {
                for (start, i) in piece.iter_mut().zip(ends) {
                    *start = (from + i + 1) as u32;
                }
            }
            Some(key) => {
                let mut line = from;
                for ((start, k), i) in piece.iter_mut().zip(keys_piece).zip(ends) {
                    let end = from + i;
                    *k = key(without_ending(&bytes[line..=end]));
                    line = end + 1;
                    *start = line as u32;
                }
            }
        }
    });
    (Offsets::Narrow(starts), keys)
}

/// The offset of every `\n` in `bytes`, in order: what
/// [`memchr::memchr_iter`] gives, found 64 bytes at a time.
///
/// `memchr_iter` starts a new search after each match; with lines of 30–40
/// bytes that restart is most of its cost, about 10 ns a line. Here each
/// 64-byte block is compared at once into a bitmask (SSE2, which every
/// x86-64 processor has), and the newlines are read off the mask: on a
/// 100 MB file of 2.8 million lines, 15.6 ms instead of 22–28 ms on one
/// thread (measured by hand; CHANGELOG.md, "Performance history"). Other
/// targets use `memchr_iter`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn newlines(bytes: &[u8]) -> Newlines<'_> {
    Newlines {
        bytes,
        block: 0,
        next: 0,
        mask: 0,
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn newlines(bytes: &[u8]) -> memchr::Memchr<'_> {
    memchr::memchr_iter(b'\n', bytes)
}

/// The iterator of [`newlines`].
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
struct Newlines<'a> {
    bytes: &'a [u8],
    /// Where the block of `mask` starts.
    block: usize,
    /// Where the next block starts.
    next: usize,
    /// The newlines of the block not yet given, one bit each.
    mask: u64,
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.bytes.get(self.next..).filter(|r| !r.is_empty())?;
            self.block = self.next;
            self.mask = match rest.first_chunk::<64>() {
                Some(block) => newline_mask(block),
                None => {
                    // The last, shorter block, zero-padded: a zero byte is
                    // not a newline.
                    let mut block = [0u8; 64];
                    block[..rest.len()].copy_from_slice(rest);
                    newline_mask(&block)
                }
            };
            self.next += rest.len().min(64);
        }
        let bit = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(self.block + bit)
    }
}

/// Bit `i` set where `block[i]` is `\n`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn newline_mask(block: &[u8; 64]) -> u64 {
    // SAFETY: `sse2_newline_mask` only needs SSE2, and the `cfg` above
    // compiles this only where the whole build has it.
    unsafe { sse2_newline_mask(block) }
}

/// [`newline_mask`] with SSE2 compares: 16 bytes a compare, one bit a
/// byte by `movemask`. The loads go through `u64`s, so nothing here reads
/// memory through a raw pointer.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn sse2_newline_mask(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    let newline = _mm_set1_epi8(b'\n' as i8);
    let mut mask = 0u64;
    for (k, sixteen) in block.chunks_exact(16).enumerate() {
        let (low, high) = sixteen.split_at(8);
        let word = |half: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(half);
            i64::from_le_bytes(w)
        };
        let v = _mm_set_epi64x(word(high), word(low));
        // `movemask` sets the low 16 bits only.
        let bits = _mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) as u32 as u64;
        mask |= bits << (16 * k);
    }
    mask
}

/// A first guess at a file's line count: lines of source average about 40
/// bytes, so the one-thread split rarely grows its lists.
fn starts_capacity(bytes: &[u8]) -> usize {
    bytes.len() / 40 + 2
}

/// A line's content: the line (with its ending, if it has one) without
/// that ending. The one definition [`Lines::content`] and the keyed split
/// both use.
#[inline]
fn without_ending(full: &[u8]) -> &[u8] {
    &full[..full.len() - ending_len(full)]
}

fn ending_len(full: &[u8]) -> usize {
    if full.ends_with(b"\r\n") {
        2
    } else if full.ends_with(b"\n") {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_stay_narrow_until_a_value_needs_more_than_32_bits() {
        let mut o = Offsets::with_capacity(2);
        o.push(3);
        o.push(u32::MAX as usize);
        assert!(matches!(o, Offsets::Narrow(_)));
        let big = u32::MAX as usize + 7;
        o.push(big);
        assert!(matches!(o, Offsets::Wide(_)));
        assert_eq!(
            (o.get(0), o.get(1), o.get(2), o.len()),
            (3, u32::MAX as usize, big, 3)
        );
        assert_eq!(o.position_sorted_within(0..3, big), Some(2));
        assert_eq!(o.position_sorted_within(1..3, big), Some(2));
        assert_eq!(o.position_sorted_within(0..3, 4), None);
        assert_eq!(o.position_sorted_within(1..1, u32::MAX as usize), None);
        assert_eq!(o.partition_point(|v| v < 4), 1);
        o.pop();
        assert_eq!(o.last(), Some(u32::MAX as usize));

        let mut z = Offsets::zeros(2);
        z.set(1, big);
        assert_eq!((z.get(0), z.get(1)), (0, big));
    }

    fn contents(s: &[u8]) -> Vec<&[u8]> {
        let l = Lines::new(s);
        (0..l.len()).map(|i| l.content(i)).collect()
    }

    #[test]
    fn a_final_line_without_newline_is_a_line() {
        assert_eq!(contents(b"a\nb"), vec![&b"a"[..], b"b"]);
        assert_eq!(contents(b"a\nb\n"), vec![&b"a"[..], b"b"]);
        assert_eq!(contents(b""), Vec::<&[u8]>::new());
        assert_eq!(contents(b"\n"), vec![&b""[..]]);
        assert!(!Lines::new(b"a\nb").ends_with_newline());
        assert!(Lines::new(b"a\nb\n").ends_with_newline());
    }

    #[test]
    fn crlf_is_an_ending_not_content() {
        let l = Lines::new(b"a\r\nb\r\n");
        assert_eq!(l.content(0), b"a");
        assert_eq!(l.ending(0), b"\r\n");
        assert_eq!(l.newline(), Newline::CrLf);
        assert_eq!(Lines::new(b"a\nb\r\n").newline(), Newline::Lf);
        // A lone CR is content.
        assert_eq!(Lines::new(b"a\rb\n").content(0), b"a\rb");
    }

    #[test]
    fn lines_split_on_several_threads_are_the_lines_split_on_one() {
        let texts: [&[u8]; 9] = [
            b"",
            b"\n",
            b"a",
            b"a\nb",
            b"a\nb\n",
            b"\n\n\n\n\n\n",
            b"\xEF\xBB\xBF",
            b"\xEF\xBB\xBFx\r\ny\n\nlast",
            b"one long line without any newline at all",
        ];
        for text in texts {
            let one = Lines::split(text, 1, NO_KEY).0;
            for parts in [2, 3, 5, 64] {
                let many = Lines::split(text, parts, NO_KEY).0;
                assert_eq!(many.starts, one.starts, "{text:?} in {parts} parts");
                assert_eq!(many.bom, one.bom);
            }
        }
    }

    proptest::proptest! {
        /// The keys of a split are the key of each line's content, in line
        /// order, however many stretches the scan is cut into.
        #[test]
        fn keys_are_the_key_of_each_line(
            text in proptest::collection::vec(proptest::sample::select(b"ab\r\n\n\xEF\xBB\xBF".to_vec()), 0..60),
        ) {
            // A key that tells contents apart: their length and first byte.
            let key = |c: &[u8]| (c.len() as u32) << 8 | u32::from(c.first().copied().unwrap_or(0));
            let plain = Lines::split(&text, 1, NO_KEY).0;
            let expected: Vec<u32> = (0..plain.len()).map(|i| key(plain.content(i))).collect();
            for parts in [1, 2, 3, 7] {
                let (lines, keys) = Lines::split(&text, parts, Some(&key));
                proptest::prop_assert_eq!(&lines.starts, &plain.starts, "{} parts", parts);
                proptest::prop_assert_eq!(&keys, &expected, "{} parts", parts);
            }
        }
    }

    proptest::proptest! {
        /// The newlines found 64 bytes at a time are those `memchr` finds,
        /// in files that end inside a block or on its border.
        #[test]
        fn newlines_are_the_newlines_memchr_finds(
            text in proptest::collection::vec(proptest::sample::select(b"ab\n\0\r".to_vec()), 0..300),
            skip in 0usize..70,
        ) {
            let text = &text[skip.min(text.len())..];
            let found: Vec<usize> = newlines(text).collect();
            let expected: Vec<usize> = memchr::memchr_iter(b'\n', text).collect();
            proptest::prop_assert_eq!(found, expected);
        }
    }

    #[test]
    fn newlines_at_block_borders() {
        for len in [0, 1, 63, 64, 65, 127, 128, 129, 200] {
            let all = vec![b'\n'; len];
            assert_eq!(
                newlines(&all).collect::<Vec<_>>(),
                (0..len).collect::<Vec<_>>()
            );
            let mut ends = vec![b'x'; len];
            if len > 0 {
                ends[0] = b'\n';
                ends[len - 1] = b'\n';
            }
            let expected: Vec<usize> = memchr::memchr_iter(b'\n', &ends).collect();
            assert_eq!(newlines(&ends).collect::<Vec<_>>(), expected, "{len}");
        }
    }

    #[test]
    fn a_bom_is_not_content() {
        let l = Lines::new(b"\xEF\xBB\xBFx\n");
        assert!(l.has_bom());
        assert_eq!(l.content(0), b"x");
        assert_eq!(l.start(0), 3);
        let only_bom = Lines::new(BOM);
        assert!(only_bom.is_empty());
    }
}
