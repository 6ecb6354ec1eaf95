//! What a commit writes: a file's new bytes, either whole or *spliced* from
//! stretches of its pre-image and the few bytes an edit adds.
//!
//! Why: a hunk or two in a 100 MB file changes a few hundred bytes. Building
//! the new file in memory first costs a second 100 MB buffer (its page
//! faults and zeroing included) only to copy it into the staged temp file.
//! A [`Splice`] names the stretches instead, and the committer writes them
//! straight from the pre-image with vectored writes
//! ([`crate::fs::Fs::write_new_parts`]): the file is held once.
//!
//! The pre-image is shared ([`Shared`]), not copied, between the change that
//! keeps it for a rollback and the splice that reads from it.

use std::ops::Range;
use std::sync::Arc;

/// File bytes shared without a copy between a change's pre-image and the
/// content spliced from it.
pub type Shared = Arc<Vec<u8>>;

/// The new bytes of a written file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Bytes assembled in memory (new files, small edits).
    Whole(Vec<u8>),
    /// Stretches of a base and added bytes, written without assembling them.
    Spliced(Splice),
}

impl Content {
    /// The length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Content::Whole(bytes) => bytes.len(),
            Content::Spliced(splice) => splice.len,
        }
    }

    /// True when there are no bytes.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))] // beside `len`; the tests use it
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes, in order, as slices (one for [`Content::Whole`]).
    pub fn parts(&self) -> Vec<&[u8]> {
        match self {
            Content::Whole(bytes) => vec![bytes.as_slice()],
            Content::Spliced(splice) => splice.parts().collect(),
        }
    }

    /// True when the content is exactly `bytes`, compared stretch by stretch.
    pub fn equals(&self, bytes: &[u8]) -> bool {
        if self.len() != bytes.len() {
            return false;
        }
        let mut rest = bytes;
        for part in self.parts() {
            let (head, tail) = rest.split_at(part.len());
            if head != part {
                return false;
            }
            rest = tail;
        }
        true
    }

    /// The SHA-256 of the content, lowercase hex, hashed stretch by stretch.
    pub fn sha256_hex(&self) -> String {
        crate::hash::sha256_hex_of_parts(self.parts())
    }
}

impl From<Vec<u8>> for Content {
    fn from(bytes: Vec<u8>) -> Self {
        Content::Whole(bytes)
    }
}

/// A file's new bytes as stretches of a shared base and of added bytes.
/// Built from a [`Splicing`] whose base ranges were checked against the base
/// ([`Splice::new`]), so every part can be sliced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Splice {
    base: Shared,
    added: Vec<u8>,
    pieces: Vec<Piece>,
    len: usize,
}

impl Splice {
    /// The splice of `splicing` over `base`; `None` when a stretch lies
    /// outside `base` (the splicing was planned against other bytes).
    pub fn new(base: Shared, splicing: Splicing) -> Option<Splice> {
        let fits = splicing.pieces.iter().all(|p| match p {
            Piece::Base(r) => r.end <= base.len(),
            Piece::Added(r) => r.end <= splicing.added.len(),
        });
        fits.then_some(Splice {
            base,
            added: splicing.added,
            pieces: splicing.pieces,
            len: splicing.len,
        })
    }

    /// The stretches in order.
    pub fn parts(&self) -> impl Iterator<Item = &[u8]> {
        self.pieces.iter().map(|p| match p {
            Piece::Base(r) => &self.base[r.clone()],
            Piece::Added(r) => &self.added[r.clone()],
        })
    }
}

/// One stretch: a byte range of the base or of the added bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Base(Range<usize>),
    Added(Range<usize>),
}

/// A splice being planned against a base that is only borrowed: the ranges
/// and the added bytes, without the base. Adjacent stretches merge, so the
/// parts stay as few as the edit's seams (about two per hunk).
#[derive(Clone, Debug, Default)]
pub struct Splicing {
    added: Vec<u8>,
    pieces: Vec<Piece>,
    len: usize,
}

impl Splicing {
    /// Append the base's bytes `range`.
    pub fn base(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.len += range.len();
        if let Some(Piece::Base(last)) = self.pieces.last_mut() {
            if last.end == range.start {
                last.end = range.end;
                return;
            }
        }
        self.pieces.push(Piece::Base(range));
    }

    /// Append new bytes.
    pub fn add(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let start = self.added.len();
        self.added.extend_from_slice(bytes);
        self.len += bytes.len();
        if let Some(Piece::Added(last)) = self.pieces.last_mut() {
            if last.end == start {
                last.end = self.added.len();
                return;
            }
        }
        self.pieces.push(Piece::Added(start..self.added.len()));
    }

    #[cfg(test)]
    /// The length so far.
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    /// True when nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last byte, reading base stretches from `base`.
    pub fn last_byte(&self, base: &[u8]) -> Option<u8> {
        match self.pieces.last()? {
            Piece::Base(r) => base.get(r.end.checked_sub(1)?).copied(),
            Piece::Added(r) => self.added.get(r.end.checked_sub(1)?).copied(),
        }
    }

    /// Drop the last `n` bytes (fewer if there are fewer).
    pub fn truncate_end(&mut self, mut n: usize) {
        while n > 0 {
            let Some(last) = self.pieces.last_mut() else {
                return;
            };
            let range = match last {
                Piece::Base(r) | Piece::Added(r) => r,
            };
            let cut = n.min(range.len());
            range.end -= cut;
            self.len -= cut;
            n -= cut;
            if range.start == range.end {
                if let Some(Piece::Added(r)) = self.pieces.pop() {
                    self.added.truncate(r.start);
                }
            } else if let Piece::Added(r) = last {
                self.added.truncate(r.end);
            }
        }
    }

    // `matching::apply_hunks` (a test seam) renders in memory.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    /// The bytes assembled against `base` (the in-memory API).
    ///
    /// A large result is assembled in parts, one thread each: writing 100 MB
    /// into a new buffer costs more in page faults than in copying, and the
    /// faults of separate threads are taken side by side (docs/performance.md).
    pub fn render(&self, base: &[u8]) -> Vec<u8> {
        let parts = crate::parallel::parts(self.len, PARALLEL_RENDER_MIN_PART);
        if parts <= 1 {
            let mut out = Vec::with_capacity(self.len);
            for piece in &self.pieces {
                out.extend_from_slice(self.bytes(piece, base));
            }
            return out;
        }
        // A zeroed buffer: when the allocator maps it fresh (glibc does for
        // 32 MiB and more, and for less until it has freed a large block),
        // its pages are not written before each part's thread touches its
        // own; otherwise it is zeroed here first, one pass of memset.
        let mut out = vec![0u8; self.len];
        let size = self.len.div_ceil(parts);
        let work: Vec<(usize, &mut [u8])> = out
            .chunks_mut(size)
            .enumerate()
            .map(|(k, chunk)| (k * size, chunk))
            .collect();
        crate::parallel::for_each(work, parts, |(start, chunk)| {
            self.render_into(base, start, chunk);
        });
        out
    }

    // `matching::apply_hunks` (a test seam) renders in memory.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    /// Fill `out` with the assembled bytes from offset `start` on (a part of
    /// [`Splicing::render`]). Walks every piece: a few per hunk, next to the
    /// megabytes each part copies.
    fn render_into(&self, base: &[u8], start: usize, mut out: &mut [u8]) {
        let (mut piece_start, mut at) = (0, start);
        for piece in &self.pieces {
            if out.is_empty() {
                return;
            }
            let bytes = self.bytes(piece, base);
            let piece_end = piece_start + bytes.len();
            if piece_end > at {
                let from = at - piece_start;
                let n = (bytes.len() - from).min(out.len());
                let (head, tail) = std::mem::take(&mut out).split_at_mut(n);
                head.copy_from_slice(&bytes[from..from + n]);
                out = tail;
                at += n;
            }
            piece_start = piece_end;
        }
    }

    // `matching::apply_hunks` (a test seam) renders in memory.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    /// A piece's bytes.
    fn bytes<'s>(&'s self, piece: &Piece, base: &'s [u8]) -> &'s [u8] {
        match piece {
            Piece::Base(r) => &base[r.clone()],
            Piece::Added(r) => &self.added[r.clone()],
        }
    }
}

// `matching::apply_hunks` (a test seam) renders in memory.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
/// Each part of a [`Splicing::render`] holds at least this many bytes, so a
/// result under twice this size is assembled on the calling thread.
const PARALLEL_RENDER_MIN_PART: usize = 4 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn splice(base: &[u8], build: impl FnOnce(&mut Splicing)) -> (Splicing, Content) {
        let mut s = Splicing::default();
        build(&mut s);
        let content = Content::Spliced(
            Splice::new(Arc::new(base.to_vec()), s.clone()).expect("ranges within the base"),
        );
        (s, content)
    }

    #[test]
    fn adjacent_stretches_merge_and_render_in_order() {
        let base = b"one\ntwo\nthree\n";
        let (s, content) = splice(base, |s| {
            s.base(0..4);
            s.base(4..8);
            s.add(b"2\n");
            s.add(b"3\n");
            s.base(14..14);
            s.add(b"");
        });
        assert_eq!(s.pieces.len(), 2);
        assert_eq!(s.render(base), b"one\ntwo\n2\n3\n");
        assert_eq!(content.parts().concat(), b"one\ntwo\n2\n3\n");
        assert_eq!(content.len(), 12);
        assert!(content.equals(b"one\ntwo\n2\n3\n"));
        assert!(!content.equals(b"one\ntwo\n2\n3\r"));
        assert!(!content.equals(b"one\ntwo\n2\n3\n\n"));
        assert_eq!(
            content.sha256_hex(),
            crate::hash::sha256_hex(b"one\ntwo\n2\n3\n")
        );
    }

    #[test]
    fn any_part_of_the_result_renders_alone() {
        // What each thread of a large render does, checked on a small one:
        // every window of the result, from every start, equals the same
        // window of the result rendered whole.
        let base = b"alpha\nbeta\ngamma\ndelta\n";
        let (s, _) = splice(base, |s| {
            s.base(0..6);
            s.add(b"new 1\n");
            s.base(11..17);
            s.add(b"x");
            s.add(b"yz\n");
            s.base(17..23);
        });
        let whole = s.render(base);
        assert_eq!(whole, b"alpha\nnew 1\ngamma\nxyz\ndelta\n");
        for start in 0..=whole.len() {
            for end in start..=whole.len() {
                let mut part = vec![0u8; end - start];
                s.render_into(base, start, &mut part);
                assert_eq!(part, &whole[start..end], "bytes {start}..{end}");
            }
        }
    }

    #[test]
    fn a_large_result_renders_in_parts_as_it_does_whole() {
        let base: Vec<u8> = (0..3 * PARALLEL_RENDER_MIN_PART as u32)
            .map(|i| (i % 251) as u8)
            .collect();
        let mut s = Splicing::default();
        let mut expected = Vec::new();
        for (k, at) in (0..base.len()).step_by(base.len() / 7).enumerate() {
            let end = (at + base.len() / 7 - 3).min(base.len());
            s.base(at..end);
            expected.extend_from_slice(&base[at..end]);
            let added = format!("added {k}\n");
            s.add(added.as_bytes());
            expected.extend_from_slice(added.as_bytes());
        }
        assert!(
            crate::parallel::parts(s.len(), PARALLEL_RENDER_MIN_PART) > 1
                || crate::parallel::cores() == 1
        );
        assert_eq!(s.render(&base), expected);
    }

    #[test]
    fn truncating_the_end_crosses_stretches() {
        let base = b"ab\r\n";
        let (mut s, _) = splice(base, |s| {
            s.base(0..4);
            s.add(b"\r");
        });
        assert_eq!(s.last_byte(base), Some(b'\r'));
        s.truncate_end(2);
        assert_eq!(s.render(base), b"ab\r");
        assert_eq!(s.len(), 3);
        assert_eq!(s.last_byte(base), Some(b'\r'));
        s.add(b"x");
        assert_eq!(s.render(base), b"ab\rx");
        s.truncate_end(10);
        assert!(s.is_empty());
        assert_eq!(s.last_byte(base), None);
    }

    #[test]
    fn a_stretch_outside_the_base_is_refused() {
        let mut s = Splicing::default();
        s.base(0..5);
        assert!(Splice::new(Arc::new(b"abcd".to_vec()), s).is_none());
    }
}
