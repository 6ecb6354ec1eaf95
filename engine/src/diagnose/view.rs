//! The lines an edit is diagnosed against: the original file, or the
//! post-state of the hunks before the failing one, without copying the file.

use crate::matching::Segment;
use crate::text::Lines;

/// One stretch of a [`View`].
enum ViewSeg<'a> {
    /// Original lines `start..end`.
    Orig { start: usize, end: usize },
    /// Lines an earlier hunk wrote where it consumed original lines from `report`.
    Written {
        hunk: usize,
        report: usize,
        lines: Vec<&'a [u8]>,
    },
}

/// The lines an edit is diagnosed against: the original file, or the
/// post-state of the hunks before the failing one, without copying the file.
pub(super) struct View<'a> {
    orig: &'a Lines<'a>,
    /// (first view index, segment)
    segs: Vec<(usize, ViewSeg<'a>)>,
    pub(super) len: usize,
}

impl<'a> View<'a> {
    pub(super) fn original(orig: &'a Lines<'a>) -> View<'a> {
        View {
            orig,
            segs: vec![(
                0,
                ViewSeg::Orig {
                    start: 0,
                    end: orig.len(),
                },
            )],
            len: orig.len(),
        }
    }

    pub(super) fn from_segments(orig: &'a Lines<'a>, segments: Vec<Segment<'a>>) -> View<'a> {
        let mut segs = Vec::with_capacity(segments.len());
        let mut len = 0;
        for s in segments {
            match s {
                Segment::Original { start, end } => {
                    segs.push((len, ViewSeg::Orig { start, end }));
                    len += end - start;
                }
                Segment::Written {
                    hunk, start, lines, ..
                } => {
                    if lines.is_empty() {
                        continue;
                    }
                    let n = lines.len();
                    segs.push((
                        len,
                        ViewSeg::Written {
                            hunk,
                            report: start + 1,
                            lines,
                        },
                    ));
                    len += n;
                }
            }
        }
        View { orig, segs, len }
    }

    fn seg(&self, i: usize) -> (usize, &ViewSeg<'a>) {
        let k = self.segs.partition_point(|(s, _)| *s <= i) - 1;
        let (s, seg) = &self.segs[k];
        (i - s, seg)
    }

    pub(super) fn line(&self, i: usize) -> &'a [u8] {
        match self.seg(i) {
            (o, ViewSeg::Orig { start, .. }) => self.orig.content(start + o),
            (o, ViewSeg::Written { lines, .. }) => lines[o],
        }
    }

    /// The 1-based line of the file before the patch that view line `i` is reported at.
    pub(super) fn report(&self, i: usize) -> usize {
        match self.seg(i) {
            (o, ViewSeg::Orig { start, .. }) => start + o + 1,
            (_, ViewSeg::Written { report, .. }) => *report,
        }
    }

    pub(super) fn written_by(&self, i: usize) -> Option<usize> {
        match self.seg(i) {
            (_, ViewSeg::Orig { .. }) => None,
            (_, ViewSeg::Written { hunk, .. }) => Some(*hunk),
        }
    }

    /// Call `f(index, line)` for every line, in order.
    pub(super) fn for_each(&self, mut f: impl FnMut(usize, &'a [u8])) {
        for (first, seg) in &self.segs {
            match seg {
                ViewSeg::Orig { start, end } => {
                    for (o, i) in (*start..*end).enumerate() {
                        f(first + o, self.orig.content(i));
                    }
                }
                ViewSeg::Written { lines, .. } => {
                    for (o, l) in lines.iter().enumerate() {
                        f(first + o, l);
                    }
                }
            }
        }
    }
}
