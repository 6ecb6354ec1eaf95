//! `apply_patch`: a hunk whose context was not found, diagnosed: already
//! applied, changed by an earlier hunk, or the nearest region and how it
//! differs.

use crate::envelope::{Hunk, LineKind};
use crate::matching::{post_state, Segment};
use crate::text::Lines;

use super::english::{hint_for, no_similar_hint, span_text};
use super::keys::is_blank;
use super::locate::{exact_occurrences, from_walk, locate};
use super::view::View;
use super::vote::{line_variants, whole, Index};
use super::walk::{rank_causes, row_causes};
use super::{Cause, Diagnosis, EARLIER_HUNK_BUDGET, MAX_EXPECTED_LINES};

/// The old side of a hunk, capped at [`MAX_EXPECTED_LINES`].
pub(super) fn old_side<'h>(hunk: &Hunk<'h>) -> (Vec<&'h [u8]>, bool) {
    let all = hunk.old_lines().count();
    let lines = hunk
        .old_lines()
        .take(MAX_EXPECTED_LINES)
        .map(|l| l.text.as_bytes())
        .collect();
    (lines, all > MAX_EXPECTED_LINES)
}

fn new_side<'h>(hunk: &Hunk<'h>) -> Vec<&'h [u8]> {
    hunk.new_lines()
        .take(MAX_EXPECTED_LINES)
        .map(|l| l.text.as_bytes())
        .collect()
}

/// Is the new side distinctive enough that finding it means "already applied"?
fn new_side_is_evidence(hunk: &Hunk<'_>) -> bool {
    let added = hunk
        .lines
        .iter()
        .any(|l| l.kind == LineKind::Add && !is_blank(l.text.as_bytes()));
    let removed = hunk.lines.iter().any(|l| l.kind == LineKind::Remove);
    let non_blank = hunk
        .new_lines()
        .filter(|l| !is_blank(l.text.as_bytes()))
        .count();
    added || (removed && non_blank >= 2)
}

pub(super) fn anchored_at_end(hunk: &Hunk<'_>) -> bool {
    hunk.end_of_file || hunk.lines.iter().any(|l| l.no_newline)
}

fn old_no_newline(hunk: &Hunk<'_>) -> bool {
    hunk.lines
        .iter()
        .any(|l| l.no_newline && l.kind != LineKind::Add)
}

/// Where in the original file the old lines of `expected` occur exactly,
/// overlapping what an earlier hunk consumed: (line index, hunk).
fn under_earlier_hunk(
    orig: &Lines<'_>,
    segments: &[Segment<'_>],
    expected: &[&[u8]],
) -> Option<(usize, usize)> {
    let m = expected.len();
    let n = orig.len();
    if m == 0 || m > n {
        return None;
    }
    let mut budget = EARLIER_HUNK_BUDGET;
    for seg in segments {
        let Segment::Written {
            hunk, start, end, ..
        } = seg
        else {
            continue;
        };
        if start == end {
            continue;
        }
        let from = start.saturating_sub(m - 1);
        let to = (*end).min(n - m + 1);
        for p in from..to {
            let mut ok = true;
            for (k, l) in expected.iter().enumerate() {
                if budget == 0 {
                    return None;
                }
                budget -= 1;
                if orig.content(p + k) != *l {
                    ok = false;
                    break;
                }
            }
            if ok {
                return Some((p, *hunk));
            }
        }
    }
    None
}

/// Diagnose hunk `index` of a section whose context was not found.
/// `original` is the file before the patch; `hash_verified` says whether an
/// expected hash was given for the file (and, since the call got this far,
/// matched).
pub fn hunk_not_found(
    original: &[u8],
    hunks: &[Hunk<'_>],
    index: usize,
    hash_verified: bool,
) -> Diagnosis {
    let mut d = diagnose_hunk(original, hunks, index).total();
    if hash_verified {
        d.hash_verified = Some(true);
        if d.cause() == Cause::ContentDiffers {
            d.hint.push_str(
                " The file's hash matches the one given, so the file is the one the patch was written against: the hunk misquotes it.",
            );
        }
    }
    d
}

pub(super) fn diagnose_hunk(original: &[u8], hunks: &[Hunk<'_>], index: usize) -> Diagnosis {
    let Some(hunk) = hunks.get(index) else {
        return Diagnosis::new(vec![Cause::NoSimilarRegion], "no such hunk".into());
    };
    let orig = Lines::new(original);
    let segments = if index > 0 {
        post_state(original, &hunks[..index])
    } else {
        None
    };
    let view = match &segments {
        Some(s) => View::from_segments(&orig, s.clone()),
        None => View::original(&orig),
    };
    let (expected, truncated) = old_side(hunk);
    let new = new_side(hunk);
    // A new side longer than the cap cannot be verified whole.
    let evidence = new_side_is_evidence(hunk) && hunk.new_lines().count() <= MAX_EXPECTED_LINES;
    let mut wanted: Vec<(u64, u64)> = Vec::with_capacity(expected.len() * 2 + new.len());
    for l in &expected {
        wanted.extend(line_variants(l).into_iter().map(|(k, sig, _)| (k, sig)));
    }
    if evidence {
        wanted.extend(whole(&new));
    }
    let index_ = Index::build(&view, wanted);
    let mut d = Diagnosis::new(Vec::new(), String::new());
    d.expected_lines = hunk.old_lines().count();
    d.truncated = truncated;

    // A replayed edit: the new side is there, the old side is not.
    if evidence {
        if let Some(&at) = exact_occurrences(&view, &index_, &new, 1).first() {
            d.causes = vec![Cause::AlreadyApplied];
            d.line = Some(view.report(at));
            d.end_line = Some(view.report(at + new.len().max(1) - 1));
            d.matched = 0;
            d.hint = format!(
                "the hunk's result (its context and added lines) is already in the file at {}, and its old lines are not: this edit has already been applied; do not send it again",
                span_text(d.line, d.end_line)
            );
            return d;
        }
    }
    // The old lines are in the original, under an earlier hunk's output.
    if let Some(segs) = &segments {
        if index > 0 {
            if let Some((p, h)) = under_earlier_hunk(&orig, segs, &expected) {
                d.causes = vec![Cause::ChangedByEarlierHunk];
                d.line = Some(p + 1);
                d.end_line = Some(p + expected.len());
                d.matched = expected.len();
                d.earlier_hunk = Some(h);
                let applied_at = segs.iter().find_map(|s| match s {
                    Segment::Written { hunk, start, .. } if *hunk == h => Some(start + 1),
                    _ => None,
                });
                d.hint = format!(
                    "the hunk's old lines are in the original file at {}, but hunk {h} of this section (applied at line {}) changed them; a hunk is matched against the file as the earlier hunks leave it: merge the two hunks into one, or write this hunk's lines as hunk {h} leaves them",
                    span_text(d.line, d.end_line),
                    applied_at.unwrap_or(p + 1)
                );
                return d;
            }
        }
    }
    if expected.is_empty() {
        d.causes = vec![Cause::NoContext];
        d.hint = "the hunk has no context or removed lines, so it can only append at the end of the file: add context lines, or end it with *** End of File".into();
        return d;
    }
    let Some(located) = locate(&view, &index_, &expected) else {
        d.causes = vec![Cause::NoSimilarRegion];
        d.hint = no_similar_hint(&index_, &expected, "the hunk's old lines");
        return d;
    };
    from_walk(&view, &expected, &located, &mut d);
    let counts = row_causes(&located.walk.rows);
    d.causes = rank_causes(&counts);
    if d.causes.is_empty() {
        // Every compared line is equal: the anchoring failed, or the
        // difference lies beyond the compared part.
        let end_view = located.walk.last_view.map_or(0, |v| v + 1);
        if old_no_newline(hunk) && orig.ends_with_newline() {
            d.causes.push(Cause::FinalNewline);
        } else if anchored_at_end(hunk) && end_view < view.len {
            d.causes.push(Cause::NotAtEndOfFile);
        } else {
            d.causes.push(Cause::ContentDiffers);
        }
    } else if old_no_newline(hunk) && orig.ends_with_newline() {
        d.causes.push(Cause::FinalNewline);
    }
    d.hint = hint_for(&d, |c| located.walk.first_note(c));
    d
}
