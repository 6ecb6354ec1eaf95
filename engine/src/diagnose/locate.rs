//! Locating an edit: exact occurrences, and the best candidate region
//! among the voted ones (the 4-gram fallback when none is strong), walked
//! in full.

use super::distance::SIMILARITY_BUDGET;
use super::keys::{blank_key, loose_key, substantive, FastMap};
use super::ngram::gram_candidates;
use super::view::View;
use super::vote::{candidates, Candidates, Index};
use super::walk::{compact, Walk, Walker};
use super::{Diagnosis, RowStatus};

/// The result of locating `expected` in a view.
pub(super) struct Located {
    pub(super) walk: Walk,
    others: Vec<usize>,
}

/// Exact occurrences of `lines` in the view (view indices), at most `limit`.
pub(super) fn exact_occurrences(
    view: &View<'_>,
    index: &Index,
    lines: &[&[u8]],
    limit: usize,
) -> Vec<usize> {
    if lines.is_empty() {
        return Vec::new();
    }
    let blank = blank_key();
    let keys: Vec<u64> = lines.iter().map(|l| loose_key(l)).collect();
    let Some(anchor) = (0..lines.len())
        .filter(|&k| keys[k] != blank)
        .min_by_key(|&k| index.count(keys[k]))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &p in index.list(keys[anchor]) {
        if p < anchor || p - anchor + lines.len() > view.len {
            continue;
        }
        let s = p - anchor;
        if lines
            .iter()
            .enumerate()
            .all(|(k, l)| view.line(s + k) == *l)
        {
            out.push(s);
            if out.len() >= limit {
                break;
            }
        }
    }
    out
}

pub(super) fn locate(view: &View<'_>, index: &Index, expected: &[&[u8]]) -> Option<Located> {
    let ekeys: Vec<u64> = expected.iter().map(|l| loose_key(l)).collect();
    let mut walker = Walker {
        view,
        index,
        keys: FastMap::default(),
        buf: Vec::new(),
        classify: false,
        classified: 0,
        sim_budget: SIMILARITY_BUDGET,
        bufs: Default::default(),
    };
    let mut walks: Vec<(Walk, usize, usize)> = Vec::new();
    let walk_all = |walker: &mut Walker<'_, '_>, c: Candidates, walks: &mut Vec<_>| {
        for (start, votes) in c.with_earlier_starts().ranked {
            if !walks.iter().any(|(_, _, s)| *s == start) {
                walks.push((walker.walk(expected, &ekeys, start), votes, start));
            }
        }
    };
    walk_all(&mut walker, candidates(index, expected), &mut walks);
    // No rare substantive line found, even loosely, and no candidate that
    // has every line: a content mistake has nothing to anchor on (a close
    // line alone may be a near-duplicate elsewhere); look for lines sharing
    // the edit's 4-grams too.
    if !walks
        .iter()
        .any(|(w, _, _)| w.informative > 0 || w.matched == expected.len())
    {
        walk_all(&mut walker, gram_candidates(view, expected), &mut walks);
    }
    // Best first: alignment score, then similarity (among near-duplicate
    // regions the closer wins), votes, and the earlier start.
    walks.sort_by(|a, b| {
        b.0.score
            .cmp(&a.0.score)
            .then(b.0.sim.cmp(&a.0.sim))
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    // Similar means strong evidence (see [`Walk::strong`]); failing that,
    // at least half the expected lines found loosely, a substantive one
    // among them if the edit has any (an edit of short lines, or of lines
    // each common in the file).
    let any_strong = walks.iter().any(|(w, _, _)| w.strong());
    let subst = expected.iter().any(|l| substantive(l));
    let mut good = walks.into_iter().filter(|(w, _, _)| {
        if any_strong {
            w.strong()
        } else {
            w.matched > 0 && 2 * w.matched >= expected.len() && (!subst || w.substantive > 0)
        }
    });
    let (_, _, best_start) = good.next()?;
    walker.classify = true;
    let best = walker.walk(expected, &ekeys, best_start);
    let mut others: Vec<usize> = Vec::new();
    for (w, _, _) in good {
        if let (Some(f), Some(l)) = (w.first_view, w.last_view) {
            let line = view.report(f);
            // A candidate overlapping the chosen region is the same place.
            let same = match (best.first_view, best.last_view) {
                (Some(bf), Some(bl)) => f <= bl + 2 && l + 2 >= bf,
                _ => false,
            };
            if !same && !others.contains(&line) {
                others.push(line);
            }
        }
    }
    others.truncate(4);
    Some(Located { walk: best, others })
}

/// Fill a diagnosis from a located walk.
pub(super) fn from_walk(view: &View<'_>, expected: &[&[u8]], located: &Located, d: &mut Diagnosis) {
    let w = &located.walk;
    // The line where the edit's first line is: the first row about expected
    // line 0 that has a file line, else the first file line of the region.
    let first = w
        .rows
        .iter()
        .find(|r| r.expected == Some(0) && r.status != RowStatus::Extra && r.view.is_some())
        .and_then(|r| r.view)
        .or_else(|| {
            w.rows
                .iter()
                .find(|r| r.status != RowStatus::Missing && r.view.is_some())
                .and_then(|r| r.view)
        })
        .or(w.first_view);
    d.line = first.map(|v| view.report(v));
    d.end_line = w.last_view.map(|v| view.report(v));
    d.matched = w.matched;
    let (rows, omitted) = compact(view, expected, &w.rows);
    d.rows = rows;
    d.omitted_rows = omitted;
    d.other_candidates = located.others.clone();
}
