//! `workspace_write_patch`: a replace or delete whose `expectedOriginalLines`
//! differ from the file's lines, diagnosed: shifted, already applied,
//! differing invisibly at the stated lines, or the nearest region.

use std::collections::BTreeMap;

use crate::text::Lines;

use super::classify::classify_pair;
use super::english::{hint_for, no_similar_hint, note_for, span_text};
use super::keys::{is_blank, loose_key, strip_line_number};
use super::locate::{exact_occurrences, from_walk, locate};
use super::view::View;
use super::vote::{line_variants, whole, Index};
use super::walk::{compact, rank_causes, row_causes, RawRow, Walk};
use super::{Cause, Diagnosis, RowStatus, MAX_EXPECTED_LINES, MAX_MATCHES};

/// Diagnose a replace/delete whose `expectedOriginalLines` differ from lines
/// `start_line..` (1-based) of `original`. `new_lines` are the change's
/// replacement lines (empty for a delete), used to recognise a replay.
pub fn line_mismatch(
    original: &[u8],
    start_line: usize,
    expected: &[String],
    new_lines: &[String],
) -> Diagnosis {
    line_mismatch_inner(original, start_line, expected, new_lines).total()
}

fn line_mismatch_inner(
    original: &[u8],
    start_line: usize,
    expected: &[String],
    new_lines: &[String],
) -> Diagnosis {
    let orig = Lines::new(original);
    let view = View::original(&orig);
    let truncated = expected.len() > MAX_EXPECTED_LINES;
    let exp: Vec<&[u8]> = expected
        .iter()
        .take(MAX_EXPECTED_LINES)
        .map(|s| s.as_bytes())
        .collect();
    let new: Vec<&[u8]> = new_lines
        .iter()
        .take(MAX_EXPECTED_LINES)
        .map(|s| s.as_bytes())
        .collect();
    let mut d = Diagnosis::new(Vec::new(), String::new());
    d.expected_lines = expected.len();
    d.truncated = truncated;
    let start = start_line.saturating_sub(1);

    // The stated range, line by line.
    let mut direct = Vec::new();
    let mut direct_counts: BTreeMap<Cause, usize> = BTreeMap::new();
    let mut matched = 0;
    for (k, e) in exp.iter().enumerate() {
        let i = start + k;
        if i >= orig.len() {
            break;
        }
        let a = orig.content(i);
        if *e == a {
            matched += 1;
            direct.push(RawRow {
                status: RowStatus::Same,
                view: Some(i),
                span: 1,
                expected: Some(k),
                causes: Vec::new(),
                note: None,
            });
            continue;
        }
        let mut causes = classify_pair(e, a);
        let mut note = note_for(e, a, &causes);
        if causes == [Cause::ContentDiffers] {
            if let Some(rest) = strip_line_number(e) {
                if rest == a || loose_key(rest) == loose_key(a) {
                    causes = vec![Cause::LineNumberPrefix];
                    note = format!(
                        "the expected line starts with a line-number prefix {:?}",
                        String::from_utf8_lossy(&e[..e.len() - rest.len()])
                    );
                    if rest != a {
                        let more = classify_pair(rest, a);
                        note.push_str("; ");
                        note.push_str(&note_for(rest, a, &more));
                        causes.extend(more);
                    }
                }
            }
        }
        if causes != [Cause::ContentDiffers] {
            matched += 1;
        }
        for c in &causes {
            *direct_counts.entry(*c).or_insert(0) += 1;
        }
        direct.push(RawRow {
            status: RowStatus::Differs,
            view: Some(i),
            span: 1,
            expected: Some(k),
            causes,
            note: Some(note),
        });
    }
    let explained =
        !direct_counts.is_empty() && !direct_counts.contains_key(&Cause::ContentDiffers);

    let mut wanted: Vec<(u64, u64)> = Vec::new();
    for l in &exp {
        wanted.extend(line_variants(l).into_iter().map(|(k, sig, _)| (k, sig)));
    }
    wanted.extend(whole(&new));
    let index = Index::build(&view, wanted);

    // The lines, exactly, elsewhere: the file shifted (not asserted for an
    // edit longer than the cap, which cannot be verified whole).
    if !explained && !truncated && new_lines.len() <= MAX_EXPECTED_LINES {
        let found = exact_occurrences(&view, &index, &exp, MAX_MATCHES)
            .into_iter()
            .min_by_key(|&s| s.abs_diff(start));
        if let Some(s) = found {
            d.causes = vec![Cause::LinesShifted];
            d.found_at_line = Some(s + 1);
            d.line = Some(s + 1);
            d.end_line = Some(s + exp.len());
            d.matched = exp.len();
            let delta = s as i64 - start as i64;
            d.hint = format!(
                "the expected lines are at {} ({} {} line{} from startLine {start_line}): the file shifted; use startLine {} and endLine {}",
                span_text(d.line, d.end_line),
                if delta > 0 { "moved down" } else { "moved up" },
                delta.unsigned_abs(),
                if delta.unsigned_abs() == 1 { "" } else { "s" },
                s + 1,
                s + exp.len()
            );
            let (rows, omitted) = compact(&view, &exp, &direct);
            d.rows = rows;
            d.omitted_rows = omitted;
            return d;
        }
        // A replay: the replacement is there and the expected lines are not.
        let replay = !new.is_empty() && new.iter().any(|l| !is_blank(l)) && new != exp;
        if replay {
            let at = exact_occurrences(&view, &index, &new, MAX_MATCHES)
                .into_iter()
                .min_by_key(|&s| s.abs_diff(start));
            if let Some(s) = at {
                d.causes = vec![Cause::AlreadyApplied];
                d.line = Some(s + 1);
                d.end_line = Some(s + new.len());
                d.hint = format!(
                    "the change's newLines are already in the file at {} and its expectedOriginalLines are not: this change has already been applied; do not send it again",
                    span_text(d.line, d.end_line)
                );
                let (rows, omitted) = compact(&view, &exp, &direct);
                d.rows = rows;
                d.omitted_rows = omitted;
                return d;
            }
        }
    }
    if explained {
        d.line = Some(start_line);
        d.end_line = Some(start + direct.len());
        d.matched = matched;
        d.causes = rank_causes(&direct_counts);
        let (rows, omitted) = compact(&view, &exp, &direct);
        d.rows = rows;
        d.omitted_rows = omitted;
        let w = Walk {
            rows: direct,
            first_view: None,
            last_view: None,
            matched,
            substantive: 0,
            informative: 0,
            exact: 0,
            close: 0,
            sim: 0,
            score: 0,
        };
        d.hint = hint_for(&d, |c| w.first_note(c)).replace("hunk", "expected line");
        return d;
    }
    // Elsewhere, loosely?
    if let Some(located) = locate(&view, &index, &exp) {
        let counts = row_causes(&located.walk.rows);
        let mut causes = rank_causes(&counts);
        from_walk(&view, &exp, &located, &mut d);
        if d.line.is_some_and(|l| l != start_line) {
            causes.push(Cause::LinesShifted);
        }
        d.causes = causes;
        if d.causes.is_empty() {
            d.causes.push(Cause::ContentDiffers);
        }
        d.hint = hint_for(&d, |c| located.walk.first_note(c)).replace("hunk", "expected line");
        if d.line.is_some_and(|l| l != start_line) {
            d.hint.push_str(&format!(
                "; the nearest lines are at {}, not at startLine {start_line}",
                span_text(d.line, d.end_line)
            ));
        }
        return d;
    }
    if matched == 0 && direct_counts.keys().all(|&c| c == Cause::ContentDiffers) {
        d.causes = vec![Cause::NoSimilarRegion];
        d.hint = no_similar_hint(&index, &exp, "expectedOriginalLines");
        let (rows, omitted) = compact(&view, &exp, &direct);
        d.rows = rows;
        d.omitted_rows = omitted;
        return d;
    }
    d.line = Some(start_line);
    d.end_line = Some(start + direct.len());
    d.matched = matched;
    d.causes = rank_causes(&direct_counts);
    let (rows, omitted) = compact(&view, &exp, &direct);
    d.rows = rows;
    d.omitted_rows = omitted;
    d.hint = format!(
        "lines {start_line}–{} differ in content from expectedOriginalLines; re-read them and copy them exactly",
        start + exp.len()
    );
    d
}
