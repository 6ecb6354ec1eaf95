//! The matrix: cases as rows, implementations as columns, one [`Cell`] each.
//!
//! Main type: [`Matrix`], built from the selected cases
//! ([`Matrix::new`]) and then one column per executor run
//! ([`Matrix::add_column`], from the runner's own [`CaseResult`]s). Each
//! cell that is not a pass is classified as a [`Departure`] (what kind of
//! wrong it is) with a one-line reason, and carries a [`CellDetail`] with
//! the readable diffs of expected and actual (the runner's renderings,
//! [`crate::report::render`]). A cell's *behaviour* is a short fingerprint of
//! what the implementation did — its `success` and the tree after the call,
//! inside and outside the workspace. A row *disagrees* when the
//! implementations under test (every column but the reference) did not all
//! do the same thing: that is where they differ among themselves, which
//! "failures" (where one differs from the spec, i.e. from the reference)
//! does not show — two implementations can agree with each other and both
//! depart from the spec. With fewer than two implementations under test
//! that ran a case, it does not disagree.
//!
//! What it leaves out: running (the caller runs each executor with
//! [`crate::run::run`]) and output formats ([`super::json`],
//! [`super::html`], [`super::badge`], [`super::markdown`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use patchspec_engine::hash::sha256_hex_of_parts;
use serde_json::Value;

use crate::case::Case;
use crate::event::CaseResult;
use crate::judge::{expected_success, Judge};
use crate::outcome::RawOutcome;
use crate::protocol::Implementation;
use crate::report::render;
use crate::workspace::{Entry, TreeDiff};

/// The most characters of one text (a diff, stderr, a call) kept in a cell's detail.
pub const DETAIL_LIMIT: usize = 64 * 1024;
/// The longest one-line reason.
pub const REASON_LIMIT: usize = 200;

/// What happened to one case for one implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CellOutcome {
    /// Judged as expected.
    Pass,
    /// A valid answer, judged wrong.
    Fail,
    /// No valid answer (crash, timeout, protocol violation).
    Error,
    /// Not run: a tool or tag the implementation does not support.
    Skip,
    /// Not run: the executor turned out unusable before this case.
    NotRun,
}

impl CellOutcome {
    /// `pass`, `fail`, `error`, `skip` or `not-run`.
    pub fn as_str(self) -> &'static str {
        match self {
            CellOutcome::Pass => "pass",
            CellOutcome::Fail => "fail",
            CellOutcome::Error => "error",
            CellOutcome::Skip => "skip",
            CellOutcome::NotRun => "not-run",
        }
    }

    /// Was the case run and judged wrong (fail or error)?
    pub fn is_failure(self) -> bool {
        match self {
            CellOutcome::Fail | CellOutcome::Error => true,
            CellOutcome::Pass | CellOutcome::Skip | CellOutcome::NotRun => false,
        }
    }
}

/// What kind of wrong a failing cell is, most serious first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Departure {
    /// It changed something next to the workspace (the sentinel, a sibling).
    WroteOutside,
    /// It answered success where the case expects a refusal.
    AppliedInvalid,
    /// It answered failure where the case expects success.
    RefusedValid,
    /// It refused, as expected, but the tree changed anyway (not atomic).
    ChangedOnRefusal,
    /// It succeeded, as expected, but the tree after differs.
    WrongTree,
    /// Success and tree as expected; the result document differs (full judge only).
    WrongResult,
    /// No valid answer.
    Error,
}

/// Every departure, most serious first.
pub const ALL_DEPARTURES: [Departure; 7] = [
    Departure::WroteOutside,
    Departure::AppliedInvalid,
    Departure::RefusedValid,
    Departure::ChangedOnRefusal,
    Departure::WrongTree,
    Departure::WrongResult,
    Departure::Error,
];

impl Departure {
    /// The stable name: `wrote-outside`, `applied-invalid`, `refused-valid`,
    /// `changed-on-refusal`, `wrong-tree`, `wrong-result`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Departure::WroteOutside => "wrote-outside",
            Departure::AppliedInvalid => "applied-invalid",
            Departure::RefusedValid => "refused-valid",
            Departure::ChangedOnRefusal => "changed-on-refusal",
            Departure::WrongTree => "wrong-tree",
            Departure::WrongResult => "wrong-result",
            Departure::Error => "error",
        }
    }

    /// A few words for readers.
    pub fn describe(self) -> &'static str {
        match self {
            Departure::WroteOutside => "wrote outside the workspace",
            Departure::AppliedInvalid => "applied an edit the spec refuses",
            Departure::RefusedValid => "refused an edit the spec applies",
            Departure::ChangedOnRefusal => "refused, but changed files",
            Departure::WrongTree => "applied, but the files differ",
            Departure::WrongResult => "the result document differs",
            Departure::Error => "no valid answer",
        }
    }
}

/// Everything a reader needs to see why a cell is not a pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellDetail {
    /// Result mismatches, readable (`$.error.kind: expected …, got …`).
    pub mismatches: Vec<String>,
    /// The result document received, when there was a valid answer.
    pub received: Option<Value>,
    /// The workspace tree against the expected one: unified diffs, readable.
    pub files: String,
    /// Changes next to the workspace, readable.
    pub outside: String,
    /// For errors: `[kind] message`.
    pub error: Option<String>,
    /// The executor's stderr during the call (tail).
    pub stderr: String,
}

/// One implementation's result for one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// What happened.
    pub outcome: CellOutcome,
    /// For fail and error: what kind of wrong.
    pub departure: Option<Departure>,
    /// One line: why not a pass (empty for a pass).
    pub reason: String,
    /// `data.success` received, when there was a valid answer.
    pub success: Option<bool>,
    /// A short fingerprint of what it did (success and trees), for cells that ran.
    pub behaviour: Option<String>,
    /// For fail and error: the diffs.
    pub detail: Option<CellDetail>,
    /// The byte-level kinds of the workspace files' differences that are
    /// nothing but line endings, a final newline, a BOM or a lossy
    /// re-encoding ([`byte_drift`]); empty when none is.
    pub drift: Vec<&'static str>,
}

impl Cell {
    fn not_run(reason: &str) -> Cell {
        Cell {
            outcome: CellOutcome::NotRun,
            departure: None,
            reason: clip_line(reason),
            drift: Vec::new(),
            success: None,
            behaviour: None,
            detail: None,
        }
    }
}

/// One implementation: who, how it was run, what it declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The name given on the command line (`reference` for the built-in engine).
    pub name: String,
    /// Is this the reference engine's column (left out of disagreement)?
    pub reference: bool,
    /// The executor's argv (empty for the in-process engine).
    pub command: Vec<String>,
    /// `inprocess` or `oneshot`.
    pub transport: String,
    /// Who it said it is (HELLO), when known.
    pub implementation: Option<Implementation>,
    /// Declared tools (`None`: not declared, every tool is run).
    pub tools: Option<Vec<String>>,
    /// Declared unsupported tags.
    pub unsupported_tags: Vec<String>,
    /// Private path globs left out of tree comparison.
    pub private_paths: Vec<String>,
    /// How its declarations were obtained: `built-in`, `hello`, or why there are none.
    pub declared_by: String,
    /// Why the executor was declared unusable, if it was.
    pub unusable: Option<String>,
    /// Wall time of its run.
    pub duration: Duration,
}

/// One case.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The case id.
    pub id: String,
    /// Its tool.
    pub tool: String,
    /// Its primary clause: the first of `spec`.
    pub clause: String,
    /// All its clause references.
    pub spec: Vec<String>,
    /// Its summary.
    pub summary: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The pattern's literal `success`.
    pub expect_success: Option<bool>,
    /// The `expect.result` pattern.
    pub expect_result: Value,
    /// The call, readable (multi-line strings as text blocks).
    pub call: String,
    /// One cell per column, in column order.
    pub cells: Vec<Cell>,
}

/// Counts of one column (over a tool, a clause, or everything).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Passes.
    pub pass: usize,
    /// Fails.
    pub fail: usize,
    /// Errors.
    pub error: usize,
    /// Skips.
    pub skip: usize,
    /// Not run.
    pub not_run: usize,
}

impl Tally {
    fn add(&mut self, o: CellOutcome) {
        match o {
            CellOutcome::Pass => self.pass += 1,
            CellOutcome::Fail => self.fail += 1,
            CellOutcome::Error => self.error += 1,
            CellOutcome::Skip => self.skip += 1,
            CellOutcome::NotRun => self.not_run += 1,
        }
    }

    /// Cases judged (pass, fail or error): the pass rate's denominator.
    pub fn judged(&self) -> usize {
        self.pass + self.fail + self.error
    }

    /// Passes over judged cases; `None` when none was judged.
    pub fn pass_rate(&self) -> Option<f64> {
        let judged = self.judged();
        (judged > 0).then(|| self.pass as f64 / judged as f64)
    }

    /// `87%`, rounded down so that only a perfect run shows `100%`; `—` when nothing was judged.
    pub fn percent(&self) -> String {
        match self.judged() {
            0 => "—".into(),
            judged => format!("{}%", self.pass * 100 / judged),
        }
    }
}

/// The whole matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// How answers were judged, for every column.
    pub judge: Judge,
    /// The runner's version.
    pub runner_version: String,
    /// The corpus directory.
    pub corpus_root: String,
    /// `corpus/VERSION`.
    pub corpus_version: Option<String>,
    /// SHA-256 over the case files.
    pub corpus_hash: String,
    /// Cases in the corpus.
    pub corpus_cases: usize,
    /// The filters, readable.
    pub filters: String,
    /// Per-case timeout.
    pub timeout: Duration,
    /// The implementations, in column order (the reference first).
    pub columns: Vec<Column>,
    /// The selected cases, in id order.
    pub rows: Vec<Row>,
}

/// Where the corpus and the selection come from (the run header's fields).
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// The runner's version.
    pub runner_version: String,
    /// The corpus directory.
    pub corpus_root: String,
    /// `corpus/VERSION`.
    pub corpus_version: Option<String>,
    /// SHA-256 over the case files.
    pub corpus_hash: String,
    /// Cases in the corpus.
    pub corpus_cases: usize,
    /// The filters, readable.
    pub filters: String,
    /// Per-case timeout.
    pub timeout: Duration,
}

/// Case workspaces are `<tmp>/patchspec-run-XXXX/cases/<n>/ws` (the per-run
/// root of [`crate::workspace`]; before it, `<tmp>/patchspec-XXXXXX/ws`); in
/// reasons and error texts they become `<workspace>`, so that reasons (and
/// the documents made of them) do not change from run to run.
fn anonymise(text: &str) -> String {
    static WORKSPACE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = WORKSPACE.get_or_init(|| {
        let tmp = std::env::temp_dir();
        let tmp = tmp.canonicalize().unwrap_or(tmp);
        let pattern = format!(
            r"{}/patchspec-(?:run-[A-Za-z0-9]+/cases/[0-9]+|[A-Za-z0-9]+)/ws",
            regex::escape(tmp.to_string_lossy().trim_end_matches('/'))
        );
        regex::Regex::new(&pattern).ok()
    });
    match re {
        Some(re) => re.replace_all(text, "<workspace>").into_owned(),
        None => text.to_owned(),
    }
}

fn clip_line(text: &str) -> String {
    let text = anonymise(text);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut out: String = line.chars().take(REASON_LIMIT).collect();
    if line.chars().count() > REASON_LIMIT {
        out.push('…');
    }
    out
}

/// Keep at most [`DETAIL_LIMIT`] bytes of `text` (on a character boundary), saying so.
pub fn clip_text(text: &str) -> String {
    if text.len() <= DETAIL_LIMIT {
        return text.to_owned();
    }
    let mut end = DETAIL_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… {} more bytes not shown]\n",
        &text[..end],
        text.len() - end
    )
}

/// The message of a refusal, from the result document (`error.message`,
/// or `error` when it is a string).
fn refusal_message(doc: Option<&Value>) -> Option<String> {
    let error = doc?.get("error")?;
    let text = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())?;
    let line = clip_line(text);
    (!line.is_empty()).then_some(line)
}

fn paths(d: &crate::workspace::TreeDiff) -> String {
    let mut all: Vec<&str> = d
        .changed
        .iter()
        .map(|(p, _, _)| p.as_str())
        .chain(d.missing.iter().map(|(p, _)| p.as_str()))
        .chain(d.extra.iter().map(|(p, _)| p.as_str()))
        .collect();
    all.sort_unstable();
    all.dedup();
    let shown: Vec<&str> = all.iter().take(4).copied().collect();
    let more = all.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} (+{more} more)", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The departure of a failing result, given the case's expected success.
pub fn classify(r: &CaseResult, expect_success: Option<bool>) -> Departure {
    if r.raw == RawOutcome::Error {
        return Departure::Error;
    }
    if !r.detail.outside.is_empty() {
        return Departure::WroteOutside;
    }
    match (expect_success, r.success) {
        (Some(false), Some(true)) => Departure::AppliedInvalid,
        (Some(true), Some(false)) => Departure::RefusedValid,
        _ if !r.detail.files.is_empty() => {
            if r.success == Some(false) {
                Departure::ChangedOnRefusal
            } else {
                Departure::WrongTree
            }
        }
        _ => Departure::WrongResult,
    }
}

fn reason(r: &CaseResult, departure: Departure) -> String {
    let text = match departure {
        Departure::Error => format!(
            "{}: [{}] {}",
            departure.describe(),
            r.detail.error_kind.unwrap_or("error"),
            r.detail.message.as_deref().unwrap_or_default()
        ),
        Departure::WroteOutside => {
            format!("{}: {}", departure.describe(), paths(&r.detail.outside))
        }
        Departure::RefusedValid => match refusal_message(r.result.as_ref()) {
            Some(m) => format!("{}: {m}", departure.describe()),
            None => departure.describe().to_owned(),
        },
        Departure::AppliedInvalid | Departure::ChangedOnRefusal | Departure::WrongTree
            if !r.detail.files.is_empty() =>
        {
            format!("{}: {}", departure.describe(), paths(&r.detail.files))
        }
        Departure::AppliedInvalid | Departure::ChangedOnRefusal | Departure::WrongTree => {
            departure.describe().to_owned()
        }
        Departure::WrongResult => match r.detail.result.first() {
            Some(m) => m.to_string(),
            None => departure.describe().to_owned(),
        },
    };
    clip_line(&text)
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading UTF-8 byte order mark.
fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// `bytes` with every CRLF read as LF.
fn lf_only(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        if !(b == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    out
}

/// `(body, final line terminator)`: the terminator is `\r\n`, `\n` or empty.
fn split_final_newline(bytes: &[u8]) -> (&[u8], &[u8]) {
    for end in [&b"\r\n"[..], b"\n"] {
        if let Some(body) = bytes.strip_suffix(end) {
            return (body, end);
        }
    }
    (bytes, b"")
}

/// The byte-level drift of one file: the kinds of difference between the
/// expected and the actual bytes when the text is otherwise the same —
/// `bom` (one has a byte order mark, the other not), `line-endings` (CRLF
/// against LF somewhere), `final-newline` (one ends with a newline, the
/// other not) — or `encoding` when the expected bytes are not UTF-8 and the
/// actual ones are their lossy UTF-8 reading (U+FFFD for each invalid
/// sequence). Empty when the text itself differs: that is not drift.
pub fn file_drift(expected: &[u8], actual: &[u8]) -> Vec<&'static str> {
    if expected == actual {
        return Vec::new();
    }
    if std::str::from_utf8(expected).is_err()
        && String::from_utf8_lossy(expected).as_bytes() == actual
    {
        return vec!["encoding"];
    }
    let (e, a) = (strip_bom(expected), strip_bom(actual));
    let (e_lf, a_lf) = (lf_only(e), lf_only(a));
    if split_final_newline(&e_lf).0 != split_final_newline(&a_lf).0 {
        return Vec::new();
    }
    let mut kinds = Vec::new();
    if (e.len() == expected.len()) != (a.len() == actual.len()) {
        kinds.push("bom");
    }
    let ((e_body, e_end), (a_body, a_end)) = (split_final_newline(e), split_final_newline(a));
    if e_body != a_body || (!e_end.is_empty() && !a_end.is_empty() && e_end != a_end) {
        kinds.push("line-endings");
    }
    if e_end.is_empty() != a_end.is_empty() {
        kinds.push("final-newline");
    }
    kinds
}

/// The byte-level drift of a workspace diff: the union of [`file_drift`]
/// over its changed files (sorted, once each). Missing and extra files are
/// not drift.
pub fn byte_drift(files: &TreeDiff) -> Vec<&'static str> {
    let mut kinds = BTreeSet::new();
    for (_, expected, actual) in &files.changed {
        if let (Entry::File(e, _), Entry::File(a, _)) = (expected, actual) {
            kinds.extend(file_drift(e, a));
        }
    }
    kinds.into_iter().collect()
}

/// What an implementation did, as a short fingerprint: equal fingerprints
/// mean the same `success` and the same trees after the call (the trees are
/// compared through their differences from the case's one expected tree).
fn behaviour(r: &CaseResult) -> Option<String> {
    match r.raw {
        RawOutcome::Skip => None,
        RawOutcome::Error => Some(format!("error:{}", r.detail.error_kind.unwrap_or("error"))),
        RawOutcome::Pass | RawOutcome::Fail => {
            let success = format!("{:?}\n", r.success);
            let (files, outside) = (
                render::tree_diff(&r.detail.files),
                render::tree_diff(&r.detail.outside),
            );
            let digest = sha256_hex_of_parts([
                success.as_bytes(),
                files.as_bytes(),
                "\n--outside--\n".as_bytes(),
                outside.as_bytes(),
            ]);
            Some(digest[..12].to_owned())
        }
    }
}

/// The cell for one result.
pub fn cell(r: &CaseResult, expect_success: Option<bool>) -> Cell {
    let outcome = match r.raw {
        RawOutcome::Pass => CellOutcome::Pass,
        RawOutcome::Fail => CellOutcome::Fail,
        RawOutcome::Error => CellOutcome::Error,
        RawOutcome::Skip => CellOutcome::Skip,
    };
    let behaviour = behaviour(r);
    match outcome {
        CellOutcome::Pass => Cell {
            outcome,
            departure: None,
            reason: String::new(),
            success: r.success,
            behaviour,
            detail: None,
            drift: Vec::new(),
        },
        CellOutcome::Skip | CellOutcome::NotRun => Cell {
            outcome,
            departure: None,
            reason: clip_line(r.detail.message.as_deref().unwrap_or("not run")),
            success: None,
            behaviour: None,
            detail: None,
            drift: Vec::new(),
        },
        CellOutcome::Fail | CellOutcome::Error => {
            let departure = classify(r, expect_success);
            let detail = CellDetail {
                mismatches: r.detail.result.iter().map(ToString::to_string).collect(),
                received: r.result.clone(),
                files: clip_text(&render::tree_diff(&r.detail.files)),
                outside: clip_text(&render::tree_diff(&r.detail.outside)),
                error: r.detail.message.as_ref().map(|m| {
                    clip_text(&anonymise(&format!(
                        "[{}] {m}",
                        r.detail.error_kind.unwrap_or("error")
                    )))
                }),
                stderr: clip_text(&anonymise(r.stderr.trim_end())),
            };
            Cell {
                outcome,
                departure: Some(departure),
                reason: reason(r, departure),
                success: r.success,
                behaviour,
                detail: Some(detail),
                drift: byte_drift(&r.detail.files),
            }
        }
    }
}

impl Matrix {
    /// An empty matrix (rows, no columns) for the selected cases.
    pub fn new(judge: Judge, source: Source, cases: &[&Case]) -> Matrix {
        let rows = cases
            .iter()
            .map(|c| Row {
                id: c.id.clone(),
                tool: c.tool.clone(),
                clause: c.spec.first().cloned().unwrap_or_default(),
                spec: c.spec.clone(),
                summary: c.summary.clone(),
                tags: c.tags.clone(),
                expect_success: expected_success(&c.expect.result),
                expect_result: c.expect.result.clone(),
                call: clip_text(&render::params(&c.tool, &Value::Object(c.call.clone()))),
                cells: Vec::new(),
            })
            .collect();
        Matrix {
            judge,
            runner_version: source.runner_version,
            corpus_root: source.corpus_root,
            corpus_version: source.corpus_version,
            corpus_hash: source.corpus_hash,
            corpus_cases: source.corpus_cases,
            filters: source.filters,
            timeout: source.timeout,
            columns: Vec::new(),
            rows,
        }
    }

    /// Add a column from one executor's results (any order; a row with no
    /// result is `not-run`, with the column's `unusable` reason when set).
    pub fn add_column(&mut self, column: Column, results: &[CaseResult]) {
        let by_id: BTreeMap<&str, &CaseResult> =
            results.iter().map(|r| (r.id.as_str(), r)).collect();
        let not_run = column
            .unusable
            .as_deref()
            .map(|u| format!("not run: the executor is unusable ({u})"))
            .unwrap_or_else(|| "not run".into());
        for row in &mut self.rows {
            let c = match by_id.get(row.id.as_str()) {
                Some(r) => cell(r, row.expect_success),
                None => Cell::not_run(&not_run),
            };
            row.cells.push(c);
        }
        self.columns.push(column);
    }

    /// Did the implementations under test that ran this case do different
    /// things (the reference column left out)?
    pub fn disagree(&self, row: &Row) -> bool {
        let seen: BTreeSet<&str> = row
            .cells
            .iter()
            .zip(&self.columns)
            .filter(|(_, col)| !col.reference)
            .filter_map(|(c, _)| c.behaviour.as_deref())
            .collect();
        seen.len() > 1
    }

    /// Did any implementation fail or error on this case?
    pub fn any_failure(row: &Row) -> bool {
        row.cells.iter().any(|c| c.outcome.is_failure())
    }

    /// The tools of the selection, sorted.
    pub fn tools(&self) -> Vec<&str> {
        let set: BTreeSet<&str> = self.rows.iter().map(|r| r.tool.as_str()).collect();
        set.into_iter().collect()
    }

    /// Counts of column `col` over the rows `keep` accepts.
    pub fn tally(&self, col: usize, keep: impl Fn(&Row) -> bool) -> Tally {
        let mut t = Tally::default();
        for row in self.rows.iter().filter(|r| keep(r)) {
            if let Some(c) = row.cells.get(col) {
                t.add(c.outcome);
            }
        }
        t
    }

    /// Rows grouped by tool, then by primary clause (both sorted; rows in id order).
    pub fn grouped(&self) -> BTreeMap<&str, BTreeMap<&str, Vec<&Row>>> {
        let mut out: BTreeMap<&str, BTreeMap<&str, Vec<&Row>>> = BTreeMap::new();
        for row in &self.rows {
            out.entry(row.tool.as_str())
                .or_default()
                .entry(row.clause.as_str())
                .or_default()
                .push(row);
        }
        out
    }

    /// The ids of column `col`'s failing cases, by departure (most serious first).
    pub fn departures(&self, col: usize) -> BTreeMap<Departure, Vec<&Row>> {
        let mut out: BTreeMap<Departure, Vec<&Row>> = BTreeMap::new();
        for row in &self.rows {
            if let Some(d) = row.cells.get(col).and_then(|c| c.departure) {
                out.entry(d).or_default().push(row);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_drift_names_what_changed_when_the_text_did_not() {
        assert_eq!(file_drift(b"a\r\nb\r\n", b"a\nb\n"), ["line-endings"]);
        assert_eq!(file_drift(b"a\nb", b"a\nb\n"), ["final-newline"]);
        assert_eq!(file_drift(b"\xEF\xBB\xBFa\n", b"a\n"), ["bom"]);
        assert_eq!(
            file_drift(b"caf\xE9\n", "caf\u{FFFD}\n".as_bytes()),
            ["encoding"]
        );
        assert_eq!(
            file_drift(b"\xEF\xBB\xBFa\r\nb", b"a\nb\n"),
            ["bom", "line-endings", "final-newline"]
        );
        // A CRLF final newline read as LF is a line ending, not a lost newline.
        assert_eq!(file_drift(b"a\r\n", b"a\n"), ["line-endings"]);
        // Other text is not drift, whatever else changed.
        assert!(file_drift(b"a\r\n", b"b\n").is_empty());
        assert!(file_drift(b"a\n", b"a\n").is_empty());
        // A blank line lost is text.
        assert!(file_drift(b"a\n\n", b"a\n").is_empty());
    }

    #[test]
    fn byte_drift_of_a_tree_is_the_union_over_changed_files() {
        let diff = TreeDiff {
            missing: vec![("gone".into(), Entry::File(b"x".to_vec(), None))],
            extra: Vec::new(),
            changed: vec![
                (
                    "a".into(),
                    Entry::File(b"a\r\n".to_vec(), None),
                    Entry::File(b"a\n".to_vec(), None),
                ),
                (
                    "b".into(),
                    Entry::File(b"b".to_vec(), None),
                    Entry::File(b"b\n".to_vec(), None),
                ),
                (
                    "c".into(),
                    Entry::File(b"c".to_vec(), None),
                    Entry::File(b"other".to_vec(), None),
                ),
            ],
        };
        assert_eq!(byte_drift(&diff), ["final-newline", "line-endings"]);
        assert!(byte_drift(&TreeDiff::default()).is_empty());
    }

    #[test]
    fn workspace_paths_in_reasons_do_not_change_between_runs() {
        let tmp = std::env::temp_dir();
        let tmp = tmp.canonicalize().unwrap_or(tmp);
        let text = format!(
            "Failed to find expected lines in {}/patchspec-Ab12Cd/ws/src/a.rs:\nx",
            tmp.display()
        );
        assert_eq!(
            clip_line(&text),
            "Failed to find expected lines in <workspace>/src/a.rs:"
        );
        let text = format!(
            "Failed to read {}/patchspec-run-Xy12/cases/140/ws/a.txt: gone",
            tmp.display()
        );
        assert_eq!(clip_line(&text), "Failed to read <workspace>/a.txt: gone");
        assert_eq!(clip_line("/etc/hosts: denied"), "/etc/hosts: denied");
    }

    #[test]
    fn long_reasons_are_cut_on_a_character() {
        let long = "é".repeat(REASON_LIMIT + 5);
        let got = clip_line(&long);
        assert_eq!(got.chars().count(), REASON_LIMIT + 1);
        assert!(got.ends_with('…'));
        let big = "x".repeat(DETAIL_LIMIT + 10);
        assert!(clip_text(&big).contains("10 more bytes not shown"));
    }
}
