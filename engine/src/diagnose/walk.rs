//! The walker: one candidate region compared with the edit line by line,
//! resynchronising over blank and missing lines, scored, and its rows
//! compacted for the report.

use std::collections::BTreeMap;

use super::classify::{classify_pair, first_diff_byte};
use super::distance::{raw_closeness, similarity};
use super::english::note_for;
use super::fold::compact_into;
use super::keys::{
    blank_key, literal_newline_pieces, loose_key, loose_key_in, piece_key, strip_line_number,
    substantive, FastMap,
};
use super::view::View;
use super::vote::Index;
use super::{visible, Cause, Row, RowStatus, COMMON_KEY, MAX_CLASSIFIED, MAX_ROWS};

/// A comparison row before compaction.
pub(super) struct RawRow {
    pub(super) status: RowStatus,
    pub(super) view: Option<usize>,
    /// How many view lines the row covers (a literal-\n row covers several).
    pub(super) span: usize,
    pub(super) expected: Option<usize>,
    pub(super) causes: Vec<Cause>,
    /// The first difference in words.
    pub(super) note: Option<String>,
}

#[derive(Default)]
pub(super) struct Walk {
    pub(super) rows: Vec<RawRow>,
    pub(super) first_view: Option<usize>,
    pub(super) last_view: Option<usize>,
    /// Expected lines found exactly or up to invisible characters.
    pub(super) matched: usize,
    /// ... of which substantive (see [`substantive`]).
    pub(super) substantive: usize,
    /// ... and of those, not common.
    pub(super) informative: usize,
    pub(super) exact: usize,
    /// Substantive expected lines that differ in content but are close
    /// (see [`similarity`]) to their file line: a typo.
    pub(super) close: usize,
    /// The similarity (permille) summed over the rows that differ in content.
    pub(super) sim: u64,
    pub(super) score: i64,
}

impl Walk {
    /// Evidence that the region is the edit's, misquoted: a substantive
    /// line that is rare in the file found loosely, or a substantive line
    /// close to its file line.
    pub(super) fn strong(&self) -> bool {
        self.informative > 0 || self.close > 0
    }

    /// The note of the first row with `cause` (empty when there is none).
    pub(super) fn first_note(&self, cause: Cause) -> String {
        self.rows
            .iter()
            .find(|r| r.causes.contains(&cause))
            .and_then(|r| r.note.clone())
            .unwrap_or_default()
    }

    /// File line `v` is part of the region.
    fn touch(&mut self, v: usize) {
        self.first_view.get_or_insert(v);
        self.last_view = Some(v);
    }
}

pub(super) struct Walker<'v, 'a> {
    pub(super) view: &'v View<'a>,
    pub(super) index: &'v Index,
    pub(super) keys: FastMap<usize, u64>,
    pub(super) buf: Vec<u8>,
    /// Classify differing rows (the final walk); a ranking walk only scores.
    pub(super) classify: bool,
    /// Rows classified so far (at most [`MAX_CLASSIFIED`]).
    pub(super) classified: usize,
    /// What similarity measures may still cost ([`SIMILARITY_BUDGET`](super::distance::SIMILARITY_BUDGET)).
    pub(super) sim_budget: usize,
    /// Scratch buffers for loose forms.
    pub(super) bufs: (Vec<u8>, Vec<u8>),
}

impl<'a> Walker<'_, 'a> {
    pub(super) fn key(&mut self, i: usize) -> u64 {
        if let Some(&k) = self.keys.get(&i) {
            return k;
        }
        let k = loose_key_in(self.view.line(i), &mut self.buf);
        self.keys.insert(i, k);
        k
    }

    /// How similar two lines that differ in content are, within the budget.
    pub(super) fn similarity(&mut self, e: &[u8], a: &[u8]) -> (u32, bool) {
        let (mut x, mut y) = std::mem::take(&mut self.bufs);
        compact_into(e, &mut x);
        compact_into(a, &mut y);
        let r = similarity(&x, &y, &mut self.sim_budget).unwrap_or((0, false));
        self.bufs = (x, y);
        r
    }

    /// Classify a loose-equal pair, within the budget.
    pub(super) fn classify(&mut self, e: &[u8], a: &[u8]) -> (Vec<Cause>, Option<String>) {
        if !self.classify || self.classified >= MAX_CLASSIFIED {
            return (Vec::new(), None);
        }
        self.classified += 1;
        let causes = classify_pair(e, a);
        let note = note_for(e, a, &causes);
        (causes, Some(note))
    }

    /// Expected line `e` (loose key `key`) was found, exactly or up to
    /// invisible characters: it counts as matched, and as evidence when it
    /// is substantive (and more when it is rare in the file).
    fn found(&self, w: &mut Walk, e: &[u8], key: u64) {
        w.matched += 1;
        if substantive(e) {
            w.substantive += 1;
            if self.index.count(key) <= COMMON_KEY {
                w.informative += 1;
            }
        }
    }

    /// Expected line `i` (`e`) holds literal `\n`s where the file, from
    /// line `j`, has its pieces as lines: the row that says so, and how
    /// many file lines it spans.
    fn literal_newlines(&mut self, w: &mut Walk, e: &[u8], i: usize, j: usize) -> Option<usize> {
        let pieces = literal_newline_pieces(e)?;
        let p = pieces.len();
        let fits = p >= 2
            && j + p <= self.view.len
            && pieces
                .iter()
                .enumerate()
                .all(|(k, piece)| piece_key(piece) == self.key(j + k));
        if !fits {
            return None;
        }
        w.touch(j);
        w.touch(j + p - 1);
        w.rows.push(RawRow {
            status: RowStatus::Differs,
            view: Some(j),
            span: p,
            expected: Some(i),
            causes: vec![Cause::LiteralNewlineEscape],
            note: Some(format!(
                "the edit's line contains {} literal \\n; the file has {p} lines here",
                p - 1
            )),
        });
        w.matched += 1;
        w.informative += 1;
        w.substantive += 1;
        w.score += 2;
        Some(p)
    }

    /// Expected line `i` (`e`) is file line `j` (`a`, loose key `ka`)
    /// behind a line-number prefix copied from a read output: whether it
    /// is, after pushing the row that says so.
    fn line_number_prefix(
        &mut self,
        w: &mut Walk,
        (e, a): (&[u8], &[u8]),
        ka: u64,
        i: usize,
        j: usize,
    ) -> bool {
        let Some(rest) = strip_line_number(e) else {
            return false;
        };
        if rest != a && loose_key(rest) != ka {
            return false;
        }
        w.touch(j);
        let mut causes = vec![Cause::LineNumberPrefix];
        let mut note = format!(
            "the edit's line starts with a line-number prefix {:?}",
            String::from_utf8_lossy(&e[..e.len() - rest.len()])
        );
        if rest != a {
            let (more, more_note) = self.classify(rest, a);
            if let Some(n) = more_note {
                note.push_str("; ");
                note.push_str(&n);
            }
            causes.extend(more);
        }
        w.rows.push(RawRow {
            status: RowStatus::Differs,
            view: Some(j),
            span: 1,
            expected: Some(i),
            causes,
            note: Some(note),
        });
        self.found(w, rest, loose_key(rest));
        w.score += 2;
        true
    }

    pub(super) fn walk(&mut self, expected: &[&[u8]], ekeys: &[u64], start: usize) -> Walk {
        let n = self.view.len;
        let m = expected.len();
        let blank = blank_key();
        let mut w = Walk::default();
        let (mut i, mut j) = (0usize, start);
        while i < m {
            let e = expected[i];
            if j >= n {
                w.rows.push(RawRow {
                    status: RowStatus::Extra,
                    view: None,
                    span: 0,
                    expected: Some(i),
                    causes: vec![if ekeys[i] == blank {
                        Cause::BlankLineExtra
                    } else {
                        Cause::ContentDiffers
                    }],
                    note: Some("the file ends before this line".into()),
                });
                w.score -= 2;
                i += 1;
                continue;
            }
            let a = self.view.line(j);
            if e == a {
                w.touch(j);
                w.rows.push(RawRow {
                    status: RowStatus::Same,
                    view: Some(j),
                    span: 1,
                    expected: Some(i),
                    causes: Vec::new(),
                    note: None,
                });
                self.found(&mut w, e, ekeys[i]);
                w.exact += 1;
                w.score += 3;
                i += 1;
                j += 1;
                continue;
            }
            let ka = self.key(j);
            if ekeys[i] == ka {
                w.touch(j);
                let (causes, note) = self.classify(e, a);
                let content = causes == [Cause::ContentDiffers];
                w.rows.push(RawRow {
                    status: RowStatus::Differs,
                    view: Some(j),
                    span: 1,
                    expected: Some(i),
                    note,
                    causes,
                });
                if !content {
                    self.found(&mut w, e, ekeys[i]);
                }
                // Among loosely equal lines, the one whose bytes differ
                // least (a CR alone, not a CR and the indentation) is nearer.
                w.sim += u64::from(raw_closeness(e, a));
                w.score += 2;
                i += 1;
                j += 1;
                continue;
            }
            let next_e = ekeys.get(i + 1).copied();
            // The edit has a blank line the file does not.
            if ekeys[i] == blank && next_e == Some(ka) {
                w.rows.push(RawRow {
                    status: RowStatus::Extra,
                    view: Some(j),
                    span: 0,
                    expected: Some(i),
                    causes: vec![Cause::BlankLineExtra],
                    note: Some("the edit has a blank line here; the file does not".into()),
                });
                w.score += 1;
                i += 1;
                continue;
            }
            // Before the first expected line, a file line the edit does not
            // have only means the candidate starts one line later.
            if i == 0 && j + 1 < n && self.key(j + 1) == ekeys[0] {
                j += 1;
                continue;
            }
            // The file has a blank line the edit leaves out.
            if ka == blank && j + 1 < n && self.key(j + 1) == ekeys[i] {
                w.touch(j);
                w.rows.push(RawRow {
                    status: RowStatus::Missing,
                    view: Some(j),
                    span: 1,
                    expected: None,
                    causes: vec![Cause::BlankLineMissing],
                    note: Some("the file has a blank line here; the edit leaves it out".into()),
                });
                w.score += 1;
                j += 1;
                continue;
            }
            // A literal \n standing for line breaks.
            if let Some(span) = self.literal_newlines(&mut w, e, i, j) {
                i += 1;
                j += span;
                continue;
            }
            // A line-number prefix copied from a read output.
            if self.line_number_prefix(&mut w, (e, a), ka, i, j) {
                i += 1;
                j += 1;
                continue;
            }
            // Resynchronise over one line of content the other side lacks.
            if j + 1 < n && ka != blank && self.key(j + 1) == ekeys[i] && ekeys[i] != blank {
                w.touch(j);
                w.rows.push(RawRow {
                    status: RowStatus::Missing,
                    view: Some(j),
                    span: 1,
                    expected: None,
                    causes: vec![Cause::ContentDiffers],
                    note: Some("the file has this line here; the edit does not".into()),
                });
                w.score -= 1;
                j += 1;
                continue;
            }
            if next_e == Some(ka) && ka != blank {
                w.rows.push(RawRow {
                    status: RowStatus::Extra,
                    view: Some(j),
                    span: 0,
                    expected: Some(i),
                    causes: vec![Cause::ContentDiffers],
                    note: Some("the edit has this line here; the file does not".into()),
                });
                w.score -= 1;
                i += 1;
                continue;
            }
            w.touch(j);
            let note = self
                .classify
                .then(|| note_for(e, a, &[Cause::ContentDiffers]));
            w.rows.push(RawRow {
                status: RowStatus::Differs,
                view: Some(j),
                span: 1,
                expected: Some(i),
                causes: vec![Cause::ContentDiffers],
                note,
            });
            let (sim, close) = self.similarity(e, a);
            w.sim += u64::from(sim);
            if close && substantive(e) {
                w.close += 1;
                w.score += 1;
            } else {
                w.score -= 1;
            }
            i += 1;
            j += 1;
        }
        w
    }
}

/// Order causes: `content_differs` first when any row has it (copying the
/// invisible characters right would not be enough: the model must re-read
/// the lines), then by how many rows each explains, ties by [`Cause::ALL`]
/// (C-diag-causes).
pub(super) fn rank_causes(counts: &BTreeMap<Cause, usize>) -> Vec<Cause> {
    let mut v: Vec<(Cause, usize)> = counts.iter().map(|(c, n)| (*c, *n)).collect();
    let pos = |c: Cause| {
        Cause::ALL
            .iter()
            .position(|&x| x == c)
            .unwrap_or(usize::MAX)
    };
    let content = |c: Cause| c != Cause::ContentDiffers;
    v.sort_by(|a, b| {
        content(a.0)
            .cmp(&content(b.0))
            .then(b.1.cmp(&a.1))
            .then(pos(a.0).cmp(&pos(b.0)))
    });
    v.into_iter().map(|(c, _)| c).collect()
}

pub(super) fn row_causes(rows: &[RawRow]) -> BTreeMap<Cause, usize> {
    let mut counts = BTreeMap::new();
    for r in rows {
        for c in &r.causes {
            *counts.entry(*c).or_insert(0) += 1;
        }
    }
    counts
}

/// Turn raw rows into reported rows: equal lines next to a difference are
/// kept (one on each side), longer runs become one `skipped` row; at most
/// [`MAX_ROWS`] rows.
pub(super) fn compact(view: &View<'_>, expected: &[&[u8]], raw: &[RawRow]) -> (Vec<Row>, usize) {
    let interesting: Vec<bool> = raw.iter().map(|r| r.status != RowStatus::Same).collect();
    let next_to = |k: usize| {
        interesting[k] || (k > 0 && interesting[k - 1]) || (k + 1 < raw.len() && interesting[k + 1])
    };
    // A lone equal line between two shown ones is shown, not skipped.
    let near =
        |k: usize| next_to(k) || (k > 0 && k + 1 < raw.len() && next_to(k - 1) && next_to(k + 1));
    let mut out: Vec<Row> = Vec::new();
    let mut k = 0;
    while k < raw.len() {
        let run = raw[k..]
            .iter()
            .enumerate()
            .take_while(|&(o, _)| !near(k + o))
            .count();
        // A run of one is shown: folding it saves nothing.
        if run >= 2 {
            let from = k;
            k += run;
            out.push(Row {
                status: RowStatus::Skipped,
                line: raw[from].view.map(|v| view.report(v)),
                expected: None,
                actual: None,
                causes: Vec::new(),
                note: None,
                count: k - from,
                written_by: None,
            });
            continue;
        }
        let r = &raw[k];
        let e = r.expected.map(|i| expected[i]);
        let a: Option<std::borrow::Cow<'_, [u8]>> = match (r.status, r.view) {
            (RowStatus::Extra, _) | (_, None) => None,
            (_, Some(v)) if r.span > 1 => {
                let parts: Vec<&[u8]> = (v..v + r.span).map(|x| view.line(x)).collect();
                Some(parts.join(&b"\\n"[..]).into())
            }
            (_, Some(v)) => Some(view.line(v).into()),
        };
        let focus = match (e, &a) {
            (Some(e), Some(a)) => first_diff_byte(e, a),
            _ => 0,
        };
        out.push(Row {
            status: r.status,
            line: r.view.map(|v| view.report(v)),
            expected: e.map(|e| visible(e, focus)),
            actual: a.as_deref().map(|a| visible(a, focus)),
            causes: r.causes.clone(),
            note: r.note.clone(),
            count: 0,
            written_by: r.view.and_then(|v| view.written_by(v)),
        });
        k += 1;
    }
    let omitted = out.len().saturating_sub(MAX_ROWS);
    out.truncate(MAX_ROWS);
    (out, omitted)
}
