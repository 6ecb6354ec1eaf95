//! `apply_patch`: a hunk that matches more than once, diagnosed: every
//! match and the nearest lines that tell it apart, and the `@@` header
//! line that names one.

use crate::envelope::Hunk;
use crate::matching::post_state;
use crate::text::Lines;

use super::locate::exact_occurrences;
use super::not_found::{anchored_at_end, old_side};
use super::view::View;
use super::vote::{whole, Index};
use super::{
    visible, Cause, Diagnosis, HeaderFound, MatchSite, MAX_DISTINGUISH_DISTANCE,
    MAX_HEADERS_SOUGHT, MAX_MATCHES,
};

/// Diagnose hunk `index`, whose old lines occur more than once: every match
/// (up to [`MAX_MATCHES`]) and the nearest lines that tell it apart.
/// `total` is how many matches the matcher counted
/// ([`crate::matching::HunkFailure::MultipleMatches`]).
pub fn multiple_matches(
    original: &[u8],
    hunks: &[Hunk<'_>],
    index: usize,
    total: usize,
) -> Diagnosis {
    multiple_matches_inner(original, hunks, index, total).total()
}

fn multiple_matches_inner(
    original: &[u8],
    hunks: &[Hunk<'_>],
    index: usize,
    total: usize,
) -> Diagnosis {
    let Some(hunk) = hunks.get(index) else {
        return Diagnosis::new(vec![Cause::AmbiguousContext], "no such hunk".into());
    };
    let (expected, truncated) = old_side(hunk);
    if expected.is_empty() {
        let mut d = Diagnosis::new(
            vec![Cause::NoContext],
            "the hunk has no context or removed lines, so it fits anywhere: add context lines that occur once, or end it with *** End of File to append".into(),
        );
        d.truncated = truncated;
        return d;
    }
    let orig = Lines::new(original);
    let segments = if index > 0 {
        post_state(original, &hunks[..index])
    } else {
        None
    };
    let view = match segments {
        Some(s) => View::from_segments(&orig, s),
        None => View::original(&orig),
    };
    let index_ = Index::build(&view, whole(&expected));
    let mut starts = exact_occurrences(&view, &index_, &expected, MAX_MATCHES);
    if anchored_at_end(hunk) {
        starts.retain(|&s| s + expected.len() == view.len);
    }
    let m = expected.len();
    let mut d = Diagnosis::new(vec![Cause::AmbiguousContext], String::new());
    d.expected_lines = hunk.old_lines().count();
    d.truncated = truncated;
    let text_at = |i: Option<usize>| i.map(|i| view.line(i));
    for (k, &s) in starts.iter().enumerate() {
        let mut site = MatchSite {
            line: view.report(s),
            above: None,
            below: None,
        };
        for dist in 1..=MAX_DISTINGUISH_DISTANCE {
            let at = |x: usize| x.checked_sub(dist);
            let mine = text_at(at(s));
            let Some(my) = mine else { break };
            let unique = starts
                .iter()
                .enumerate()
                .all(|(l, &o)| l == k || text_at(at(o)) != Some(my));
            if unique {
                let i = s - dist;
                site.above = Some((view.report(i), visible(my, 0)));
                break;
            }
        }
        for dist in 1..=MAX_DISTINGUISH_DISTANCE {
            let at = |x: usize| Some(x + m - 1 + dist).filter(|&i| i < view.len);
            let Some(my) = text_at(at(s)) else { break };
            let unique = starts
                .iter()
                .enumerate()
                .all(|(l, &o)| l == k || text_at(at(o)) != Some(my));
            if unique {
                let i = s + m - 1 + dist;
                site.below = Some((view.report(i), visible(my, 0)));
                break;
            }
        }
        d.matches.push(site);
    }
    d.line = d.matches.first().map(|s| s.line);
    let total = total.max(d.matches.len());
    d.match_count = Some(total);
    let more = match total.saturating_sub(d.matches.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let example = d.matches.iter().find_map(|s| {
        s.above
            .as_ref()
            .map(|(l, t)| format!("line {l} ({t}) above the match at line {}", s.line))
            .or_else(|| {
                s.below
                    .as_ref()
                    .map(|(l, t)| format!("line {l} ({t}) below the match at line {}", s.line))
            })
    });
    let at_lines = d
        .matches
        .iter()
        .map(|s| s.line.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // With matches left unlisted, a header seen above one listed match may
    // as well stand above an unlisted one: no claim then.
    if total == starts.len() {
        d.header_found = header_found(&view, hunk, &starts);
    }
    d.hint = match (&d.header_found, example) {
        (Some(h), _) => format!(
            "the hunk's old lines occur {total} times, at lines {at_lines}{more}; its @@ header names line {} ({}) above the match at line {}: extend the hunk with context lines up to line {} to choose that match",
            h.line, h.text, h.match_line, h.line
        ),
        (None, Some(e)) => format!(
            "the hunk's old lines occur {total} times, at lines {at_lines}{more}; extend the hunk with context lines up to a line that tells the intended place apart, e.g. {e}"
        ),
        (None, None) => format!("the hunk's old lines occur {total} times and no nearby line tells the matches apart: add more context, or anchor the hunk with *** End of File"),
    };
    let headers: Vec<&str> = hunk
        .headers
        .iter()
        .map(|h| h.trim())
        .filter(|h| !h.is_empty())
        .collect();
    if !headers.is_empty() {
        let quoted: Vec<String> = headers
            .iter()
            .map(|h| visible(h.as_bytes(), 0))
            .map(|h| format!("\"{h}\""))
            .collect();
        d.hint = format!(
            "the text after @@ ({}) is informational: matching uses the context and removed lines only, so it does not choose among the matches; {}",
            quoted.join(", "),
            d.hint
        );
    }
    d
}

/// The first of the hunk's last [`MAX_HEADERS_SOUGHT`] non-empty header
/// texts (the innermost first: `@@ def bar` after `@@ class Foo`) found, as
/// a line's start up to its indentation, within [`MAX_DISTINGUISH_DISTANCE`]
/// lines above exactly one of the matches `starts`, at a distance where
/// every other match has a different line. Cost: headers × matches ×
/// distance line comparisons, all capped.
pub(super) fn header_found(
    view: &View<'_>,
    hunk: &Hunk<'_>,
    starts: &[usize],
) -> Option<HeaderFound> {
    let names = |line: &[u8], header: &[u8]| line.trim_ascii().starts_with(header);
    let sought = hunk
        .headers
        .iter()
        .rev()
        .map(|h| h.trim().as_bytes())
        .filter(|h| !h.is_empty())
        .take(MAX_HEADERS_SOUGHT);
    for header in sought {
        // The nearest line above each match that the header names.
        let found: Vec<(usize, usize)> = starts
            .iter()
            .enumerate()
            .filter_map(|(k, &s)| {
                (1..=MAX_DISTINGUISH_DISTANCE.min(s))
                    .find(|&dist| names(view.line(s - dist), header))
                    .map(|dist| (k, dist))
            })
            .collect();
        let [(k, dist)] = found[..] else {
            continue;
        };
        let s = starts[k];
        let mine = view.line(s - dist);
        let apart = starts
            .iter()
            .enumerate()
            .all(|(l, &o)| l == k || o.checked_sub(dist).map(|i| view.line(i)) != Some(mine));
        if apart {
            return Some(HeaderFound {
                line: view.report(s - dist),
                text: visible(mine, 0),
                match_line: view.report(s),
            });
        }
    }
    None
}
