//! Repairs of refused `apply_patch` envelopes: a mechanical mistake
//! corrected, offered only when exactly one correction applies to the
//! workspace as it is (docs/diagnostics.md, "Repairs").
//!
//! **Failure path only, and read-only.** [`search`] runs only after
//! `crate::tools::tul::apply_patch::apply` refused a call; it never
//! writes and the tool never applies what it finds. Each candidate is
//! checked by the tool's own apply path as a dry run (parse, path guard,
//! stale checks, matching: no second matcher): a candidate that plans whole
//! against the files as they are now is a correction that fits, and
//! candidates with the same planned effect (the same bytes written to the
//! same paths) are one correction. Exactly one must fit, or none is
//! offered.
//!
//! **The rules**, one per [`RepairCause`] (each documented on its variant):
//! whole-text rules first (a JSON-escaped envelope, a fence or heredoc
//! around it), then the grammar walk (markers, blank separator lines,
//! missing prefixes and `@@`), then the escapes, each tried on and off
//! when an old-side line shows it, then, for the hunk a candidate still
//! fails on, the hunk rules (a blank line past the file's end, a uniform
//! indentation shift), round after round.
//!
//! **Bounded cost.** At most [`MAX_DRY_RUNS`] dry runs in at most
//! [`MAX_ROUNDS`] rounds; an envelope over [`MAX_REPAIR_BYTES`] is not
//! searched. Each dry run costs what the refused apply cost without its
//! diagnosis (a parse, the files read, the hunks matched); a rule is linear
//! in the envelope; the indentation rule reads the refused file once and
//! compares each of its lines with at most [`MAX_INDENT_ANCHORS`] anchors
//! in one pass, keeping at most [`MAX_INDENT_SHIFTS`] shifts, and runs on
//! the call's own refusal only when its diagnosis saw indentation. The count is held by the
//! test `the_search_stops_at_its_dry_run_bound`, which counts dry runs.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::envelope;
use crate::error::ToolError;
use crate::fs::Fs;
use crate::hints::{is_fence, is_heredoc};
use crate::path_guard::{resolve, GuardOptions};
use super::{planned_effect, ApplyOptions, ErrorKind};

/// At most this many candidate envelopes are dry-run per refusal.
pub const MAX_DRY_RUNS: usize = 32;
/// At most this many rounds (each fixes one more refused hunk).
pub const MAX_ROUNDS: usize = 8;
/// Envelopes longer than this are not searched for a repair.
pub const MAX_REPAIR_BYTES: usize = 4 << 20;
/// At most this many indentation shifts are tried for one hunk.
pub const MAX_INDENT_SHIFTS: usize = 4;
/// At most this many of a hunk's old lines are tried as the anchor of an
/// indentation shift (compared with each file line in one pass).
pub const MAX_INDENT_ANCHORS: usize = 4;

/// The mechanical mistakes a repair corrects; the wire name is
/// [`RepairCause::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RepairCause {
    /// The whole envelope was sent JSON-escaped (one line holding literal
    /// `\n` between `*** Begin Patch` and the rest): it is decoded once as
    /// a JSON string, which also turns its `\t` and `\"` into what they
    /// stand for, in added lines too.
    JsonEscapedEnvelope,
    /// A Markdown fence, a shell heredoc or a `%%bash` cell around the
    /// envelope: the wrapper lines (and blank lines) before `*** Begin
    /// Patch` and after `*** End Patch` are dropped. Prose is not a
    /// wrapper: text that is neither is never dropped.
    Wrapper,
    /// A marker or directive line with trailing whitespace: trimmed.
    MarkerWhitespace,
    /// No `*** Begin Patch`, and the first line is a file directive: the
    /// marker is added as line 1.
    MissingBeginPatch,
    /// No `*** End Patch`: added after the last line (trailing blank lines
    /// dropped).
    MissingEndPatch,
    /// An empty line between hunks, between sections or before a
    /// directive (the next non-empty line is `@@`, a `***` line or the end):
    /// removed.
    BlankSeparatorLine,
    /// An Update (or Move) whose first hunk has no `@@` line: a bare `@@` is
    /// added before its first body line.
    MissingHunkHeader,
    /// Hunk lines without their ` ` prefix (an empty line between body
    /// lines is a blank context line): a space is added. Tried two ways,
    /// as a whole-envelope property: on the lines without a valid prefix
    /// only, and on every context line (a context line that itself starts
    /// with a space lost its prefix too). When every such line parsed (an
    /// indented line's first space read as its prefix), the refused hunk's
    /// indented context lines are one space short of the file's: the
    /// space is added to those lines only, not to `-` and `+` lines.
    MissingContextPrefix,
    /// Literal `\t` (backslash, t) where the file has a tab: replaced by a
    /// tab in every body line, added lines included. Tried only when an
    /// old-side line holds one.
    LiteralTabEscape,
    /// Literal `\n` where the file has separate lines: the line is split,
    /// each piece keeping the line's prefix, in every body line. Tried
    /// only when an old-side line holds one.
    LiteralNewlineEscape,
    /// `\"` and `\'` from a second JSON escaping: unescaped in every body
    /// line. Tried only when an old-side line holds one.
    EscapedQuotes,
    /// A refused hunk ends with blank context lines where the file has
    /// ended (the phantom empty line a `split("\n")` makes after the last
    /// line): they are removed from that hunk.
    BlankLinePastEndOfFile,
    /// A refused hunk's lines are all indented by the same amount more (or
    /// less) than the file's: the difference, read off the file lines
    /// equal to the hunk's first old line up to indentation, is added to
    /// (or removed from) every non-blank line of that hunk, added lines
    /// included. Two shifts that fit are ambiguous: none is offered. A
    /// shift of one space is not an indentation mistake (one added is
    /// [`RepairCause::MissingContextPrefix`]), and a candidate whose
    /// prefixes were corrected is not also shifted.
    Indentation,
}

impl RepairCause {
    /// The wire name (snake_case, stable).
    pub fn as_str(self) -> &'static str {
        match self {
            RepairCause::JsonEscapedEnvelope => "json_escaped_envelope",
            RepairCause::Wrapper => "wrapper",
            RepairCause::MarkerWhitespace => "marker_whitespace",
            RepairCause::MissingBeginPatch => "missing_begin_patch",
            RepairCause::MissingEndPatch => "missing_end_patch",
            RepairCause::BlankSeparatorLine => "blank_separator_line",
            RepairCause::MissingHunkHeader => "missing_hunk_header",
            RepairCause::MissingContextPrefix => "missing_context_prefix",
            RepairCause::LiteralTabEscape => "literal_tab_escape",
            RepairCause::LiteralNewlineEscape => "literal_newline_escape",
            RepairCause::EscapedQuotes => "escaped_quotes",
            RepairCause::BlankLinePastEndOfFile => "blank_line_past_end_of_file",
            RepairCause::Indentation => "indentation",
        }
    }

    #[cfg(any(test, feature = "testing"))]
    /// Every cause, in the order their rules run.
    pub const ALL: [RepairCause; 13] = [
        RepairCause::JsonEscapedEnvelope,
        RepairCause::Wrapper,
        RepairCause::MarkerWhitespace,
        RepairCause::MissingBeginPatch,
        RepairCause::MissingEndPatch,
        RepairCause::BlankSeparatorLine,
        RepairCause::MissingHunkHeader,
        RepairCause::MissingContextPrefix,
        RepairCause::LiteralTabEscape,
        RepairCause::LiteralNewlineEscape,
        RepairCause::EscapedQuotes,
        RepairCause::BlankLinePastEndOfFile,
        RepairCause::Indentation,
    ];
}

/// One correction of a repair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fix {
    /// The mistake corrected (stable wire names: `json_escaped_envelope`,
    /// `wrapper`, `marker_whitespace`, `missing_begin_patch`,
    /// `missing_end_patch`, `blank_separator_line`, `missing_hunk_header`,
    /// `missing_context_prefix`, `literal_tab_escape`,
    /// `literal_newline_escape`, `escaped_quotes`,
    /// `blank_line_past_end_of_file`, `indentation`).
    #[schemars(extend("enum" = [
        "json_escaped_envelope", "wrapper", "marker_whitespace", "missing_begin_patch",
        "missing_end_patch", "blank_separator_line", "missing_hunk_header",
        "missing_context_prefix", "literal_tab_escape", "literal_newline_escape",
        "escaped_quotes", "blank_line_past_end_of_file", "indentation"
    ]))]
    pub cause: String,
    /// The 1-based line of the envelope as sent where the correction
    /// starts (for a whole-envelope rule, its first line concerned).
    pub envelope_line: usize,
    /// The correction in words (unstable wording).
    pub note: String,
}

/// `error.details.repair`: the envelope corrected, checked by a dry run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Repair {
    /// The complete corrected envelope: it applies, as it is, to the
    /// workspace as it was when the refusal was made.
    pub patch: String,
    /// What was corrected, in envelope order.
    pub fixes: Vec<Fix>,
}

/// What [`search`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    /// The one correction that fits, when exactly one does.
    pub repair: Option<Repair>,
    /// The fixes of the corrections that fit, when more than one does
    /// (none is offered).
    pub ambiguous: Vec<Vec<Fix>>,
    /// The fixes the grammar and escape rules made on the first candidate,
    /// fitting or not: the mistakes the envelope shows on its face.
    pub evident: Vec<Fix>,
    /// How many dry runs were made.
    pub dry_runs: usize,
}

/// One envelope line of a candidate: its text (CR stripped in a CRLF
/// envelope), the line of the envelope as sent it comes from, and its role.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DraftLine {
    text: String,
    from: usize,
    role: Role,
}

/// What a line is, as far as the escape rules care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A marker, directive or `@@` line, or a line the walk did not place.
    Other,
    /// A context or removed line: the file must hold it.
    Old,
    /// An added line.
    New,
}

/// A candidate envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Draft {
    lines: Vec<DraftLine>,
    crlf: bool,
    final_newline: bool,
    fixes: Vec<Fix>,
}

impl Draft {
    /// The text as sent, as lines.
    fn new(text: &str) -> Draft {
        let final_newline = text.ends_with('\n');
        let body = text.strip_suffix('\n').unwrap_or(text);
        let crlf = body.split('\n').next().is_some_and(|l| l.ends_with('\r'));
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            body.split('\n')
                .enumerate()
                .map(|(i, l)| DraftLine {
                    text: match l.strip_suffix('\r') {
                        Some(s) if crlf => s.to_string(),
                        _ => l.to_string(),
                    },
                    from: i + 1,
                    role: Role::Other,
                })
                .collect()
        };
        Draft {
            lines,
            crlf,
            final_newline,
            fixes: Vec::new(),
        }
    }

    /// The envelope text: the line ending and final newline as sent.
    fn text(&self) -> String {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut out = self
            .lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join(eol);
        if self.final_newline {
            out.push_str(eol);
        }
        out
    }

    fn fix(&mut self, cause: RepairCause, envelope_line: usize, note: impl Into<String>) {
        self.fixes.push(Fix {
            cause: cause.as_str().to_string(),
            envelope_line,
            note: note.into(),
        });
    }

    fn has(&self, cause: RepairCause) -> bool {
        self.fixes.iter().any(|f| f.cause == cause.as_str())
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const SECTION_STARTS: [&str; 4] = [
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move File: ",
];

/// Search for the one correction of a refused envelope that fits the
/// workspace. `refusal` is the refusal of `text` as sent; only
/// `patch_parse_error` (a grammar error) and `context_not_found` (not
/// `already_applied`, not `no_similar_region` that no rule explains) are
/// searched, and the search gives up rather than guess (module doc).
pub fn search(fs: &dyn Fs, text: &str, options: &ApplyOptions, refusal: &ToolError) -> Search {
    let mut found = Search::default();
    if text.len() > MAX_REPAIR_BYTES || !searchable(refusal) {
        return found;
    }
    let first = whole_text_rules(text);
    let grammar = grammar_variants(&first);
    let mut frontier: Vec<Draft> = Vec::new();
    for g in grammar {
        for c in escape_variants(&g) {
            if !frontier.contains(&c) {
                frontier.push(c);
            }
        }
    }
    found.evident = frontier
        .iter()
        .max_by_key(|d| d.fixes.len())
        .map(|d| evident(&d.fixes, refusal))
        .unwrap_or_default();
    let dry = ApplyOptions {
        atomic: true,
        dry_run: true,
        diagnose: false,
        ..options.clone()
    };
    let mut fitting: Vec<(Option<String>, Draft)> = Vec::new();
    let mut seen: Vec<String> = vec![text.to_string()];
    let mut exhausted = false;
    for round in 0..MAX_ROUNDS {
        let mut next = Vec::new();
        for draft in frontier {
            let candidate = draft.text();
            if draft.fixes.is_empty() {
                // The envelope as sent: its refusal is known already.
                if is_context_not_found(refusal) {
                    next.extend(hunk_variants(fs, &draft, &candidate, refusal));
                }
                continue;
            }
            if seen.contains(&candidate) {
                continue;
            }
            if found.dry_runs == MAX_DRY_RUNS {
                exhausted = true;
                break;
            }
            found.dry_runs += 1;
            seen.push(candidate.clone());
            // The effect is hashed only once a second candidate fits: the
            // usual single fit costs one plan, not a hash of its bytes.
            match planned_effect(fs, &candidate, &dry, !fitting.is_empty()) {
                Ok(effect) => {
                    for (known, fit) in &mut fitting {
                        if known.is_none() {
                            *known = planned_effect(fs, &fit.text(), &dry, true).ok().flatten();
                        }
                    }
                    // Candidates with the same effect are one correction:
                    // the first (the fewest rules) stands for them.
                    if effect.is_none() || !fitting.iter().any(|(e, _)| *e == effect) {
                        fitting.push((effect, draft));
                    }
                }
                Err(e) if is_context_not_found(&e) => {
                    next.extend(hunk_variants(fs, &draft, &candidate, &e));
                }
                Err(_) => {}
            }
        }
        if exhausted || next.is_empty() {
            break;
        }
        // Candidates left for a round that will not run: a correction
        // among them could fit too, so uniqueness is not known.
        exhausted = round + 1 == MAX_ROUNDS;
        frontier = next;
    }
    match fitting.len() {
        1 if !exhausted => {
            let (_, draft) = fitting.remove(0);
            let mut fixes = draft.fixes.clone();
            fixes.sort_by_key(|f| f.envelope_line);
            found.repair = Some(Repair {
                patch: draft.text(),
                fixes,
            });
        }
        0 => {}
        _ => found.ambiguous = fitting.into_iter().map(|(_, d)| d.fixes).collect(),
    }
    found
}

/// The fixes a hint may name without a fitting correction: the grammar
/// ones (the parser refused), and an escape only where the diagnosis shows
/// it: an expected line that differs or is extra holds it, or nothing in
/// the file resembles the hunk (an escape is a legitimate character pair in
/// much code, `printf("%d\n")`, so its presence alone says nothing).
fn evident(fixes: &[Fix], refusal: &ToolError) -> Vec<Fix> {
    let diagnosis = refusal.details.get("diagnosis");
    let nothing_similar = diagnosis
        .and_then(|d| d.get("cause"))
        .and_then(Value::as_str)
        == Some("no_similar_region");
    let shown = |needle: &str| {
        diagnosis
            .and_then(|d| d.get("compare"))
            .and_then(Value::as_array)
            .is_some_and(|rows| {
                rows.iter().any(|r| {
                    r.get("expected")
                        .and_then(Value::as_str)
                        .is_some_and(|e| e.contains(needle))
                })
            })
    };
    fixes
        .iter()
        .filter(|f| {
            let needles: &[&str] = match f.cause.as_str() {
                "literal_tab_escape" => &["\\t"],
                "literal_newline_escape" => &["\\n"],
                "escaped_quotes" => &["\\\"", "\\'"],
                _ => return true,
            };
            nothing_similar || needles.iter().any(|n| shown(n))
        })
        .cloned()
        .collect()
}

/// The refusals a repair may answer.
fn searchable(e: &ToolError) -> bool {
    match e.kind {
        ErrorKind::PatchParseError => e.reason == Some(crate::error::Reason::PatchParseError),
        ErrorKind::PatchApplyError => {
            is_context_not_found(e)
                && e.details
                    .get("diagnosis")
                    .and_then(|d| d.get("cause"))
                    .and_then(Value::as_str)
                    != Some("already_applied")
        }
        _ => false,
    }
}

fn is_context_not_found(e: &ToolError) -> bool {
    e.kind == ErrorKind::PatchApplyError && e.reason == Some(crate::error::Reason::ContextNotFound)
}

/// The JSON-escaped envelope and the wrapper: deterministic, on the whole text.
fn whole_text_rules(text: &str) -> Draft {
    if let Some(decoded) = json_unescaped(text) {
        let mut draft = Draft::new(&decoded);
        for l in &mut draft.lines {
            l.from = 1;
        }
        draft.fix(
            RepairCause::JsonEscapedEnvelope,
            1,
            "the whole envelope was sent JSON-escaped (literal \\n between its lines): send it decoded, one envelope line per line",
        );
        return unwrapped(draft);
    }
    unwrapped(Draft::new(text))
}

/// `text` decoded as a JSON string, when it is a one-line envelope with
/// literal `\n` escapes (quoted or not).
fn json_unescaped(text: &str) -> Option<String> {
    let t = text.trim();
    if t.contains('\n') || !t.contains("*** Begin Patch\\n") && !t.contains("*** Begin Patch\\r\\n")
    {
        return None;
    }
    let quoted = if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        t.to_string()
    } else {
        format!("\"{t}\"")
    };
    let decoded: String = serde_json::from_str(&quoted).ok()?;
    decoded.starts_with(BEGIN).then_some(decoded)
}

/// Drop a fence, heredoc or `%%bash` wrapper around the envelope.
fn unwrapped(mut draft: Draft) -> Draft {
    // The envelope starts at `*** Begin Patch`, or, when that is missing
    // too, at its first section.
    let Some(begin) = draft
        .lines
        .iter()
        .position(|l| l.text.trim_end() == BEGIN)
        .or_else(|| draft.lines.iter().position(|l| is_section_start(&l.text)))
    else {
        return draft;
    };
    let before = &draft.lines[..begin];
    let is_wrapper = |t: &str| is_fence(t) || is_heredoc(t) || t.trim() == "%%bash";
    if begin == 0
        || !before
            .iter()
            .all(|l| l.text.trim().is_empty() || is_wrapper(&l.text))
        || !before.iter().any(|l| is_wrapper(&l.text))
    {
        return draft;
    }
    let end = draft.lines.iter().rposition(|l| l.text.trim_end() == END);
    let after_ok = |l: &DraftLine| {
        let t = l.text.trim();
        t.is_empty()
            || is_fence(t)
            || (!t.is_empty() && t.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    };
    let keep_to = match end {
        Some(e) if draft.lines[e + 1..].iter().all(after_ok) => e + 1,
        Some(_) => return draft,
        None => {
            let mut k = draft.lines.len();
            while k > begin + 1 && after_ok(&draft.lines[k - 1]) {
                k -= 1;
            }
            k
        }
    };
    let line = draft.lines[0].from;
    draft.lines.truncate(keep_to);
    draft.lines.drain(..begin);
    draft.fix(
        RepairCause::Wrapper,
        line,
        "the envelope was wrapped (a Markdown fence, a heredoc or a %%bash line): send the text from *** Begin Patch to *** End Patch alone",
    );
    draft
}

/// Whether a line (CR stripped) opens a file section.
fn is_section_start(t: &str) -> bool {
    SECTION_STARTS.iter().any(|s| t.starts_with(s))
}

/// The grammar walk, with and without the extra prefix on context lines
/// that start with a space (deduplicated).
fn grammar_variants(draft: &Draft) -> Vec<Draft> {
    let mut out = vec![grammar(draft, false)];
    if out[0].has(RepairCause::MissingContextPrefix) {
        let all = grammar(draft, true);
        if all != out[0] {
            out.push(all);
        }
    }
    out
}

/// Where the grammar walk stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between sections.
    Outside,
    /// In an Add's body.
    Add,
    /// After an Update or Move directive, before its first `@@`.
    UpdateHead,
    /// In a hunk.
    Hunk,
}

/// Markers, `*** Begin Patch`, `*** End Patch`, blank separator lines,
/// `@@` and prefixes. `prefix_spaced` adds a space to context lines that
/// start with one too (the envelope dropped every prefix).
fn grammar(draft: &Draft, prefix_spaced: bool) -> Draft {
    let mut d = draft.clone();
    let mut first_trimmed = None;
    for l in &mut d.lines {
        if l.text.starts_with("***") && l.text.trim_end() != l.text {
            l.text.truncate(l.text.trim_end().len());
            first_trimmed.get_or_insert(l.from);
        }
    }
    if let Some(line) = first_trimmed {
        d.fix(
            RepairCause::MarkerWhitespace,
            line,
            "a marker or directive line has trailing whitespace: markers are written exactly",
        );
    }
    if !d.lines.iter().any(|l| l.text == BEGIN) {
        let first = d.lines.iter().position(|l| !l.text.trim().is_empty());
        if let Some(i) = first.filter(|&i| is_section_start(&d.lines[i].text)) {
            d.lines.drain(..i);
            d.lines.insert(
                0,
                DraftLine {
                    text: BEGIN.into(),
                    from: 1,
                    role: Role::Other,
                },
            );
            d.fix(
                RepairCause::MissingBeginPatch,
                1,
                "the envelope does not start with *** Begin Patch: add it as line 1",
            );
        }
    }
    if d.lines.first().is_some_and(|l| l.text == BEGIN) && !d.lines.iter().any(|l| l.text == END) {
        while d.lines.last().is_some_and(|l| l.text.trim().is_empty()) {
            d.lines.pop();
        }
        let from = d.lines.last().map_or(1, |l| l.from + 1);
        d.lines.push(DraftLine {
            text: END.into(),
            from,
            role: Role::Other,
        });
        d.fix(
            RepairCause::MissingEndPatch,
            from,
            "the envelope does not end with *** End Patch: add it as the last line",
        );
    }
    if d.lines.first().is_none_or(|l| l.text != BEGIN) {
        return d;
    }
    walk(d, prefix_spaced)
}

/// The section-by-section part of [`grammar`].
fn walk(mut d: Draft, prefix_spaced: bool) -> Draft {
    let lines = std::mem::take(&mut d.lines);
    let mut out: Vec<DraftLine> = Vec::with_capacity(lines.len() + 2);
    let mut state = State::Outside;
    let mut fixes: Vec<(RepairCause, usize, &'static str)> = Vec::new();
    let note = |fixes: &mut Vec<(RepairCause, usize, &'static str)>, c, line, n| {
        if !fixes.iter().any(|(k, _, _)| *k == c) {
            fixes.push((c, line, n));
        }
    };
    let next_nonblank = |i: usize| lines[i + 1..].iter().find(|l| !l.text.is_empty());
    for (i, line) in lines.iter().enumerate() {
        let t = line.text.as_str();
        let mut l = line.clone();
        if t.starts_with("***") {
            l.role = Role::Other;
            state = if t.starts_with("*** Add File: ") {
                State::Add
            } else if ["*** Update File: ", "*** Move File: ", "*** Move to: "]
                .iter()
                .any(|d| t.starts_with(d))
            {
                State::UpdateHead
            } else if t == "*** End of File" {
                state
            } else {
                State::Outside
            };
            out.push(l);
            continue;
        }
        if t.is_empty() && i > 0 {
            let separates = match next_nonblank(i) {
                None => true,
                Some(n) => n.text.starts_with("@@") || n.text.starts_with("***"),
            };
            if separates || state == State::Outside {
                note(
                    &mut fixes,
                    RepairCause::BlankSeparatorLine,
                    line.from,
                    "an empty line between hunks or before a directive: removed (the envelope has no blank separator lines)",
                );
                continue;
            }
        }
        match state {
            State::Outside | State::Add => {
                l.role = if state == State::Add && t.starts_with('+') {
                    Role::New
                } else {
                    Role::Other
                };
                out.push(l);
            }
            State::UpdateHead | State::Hunk => {
                if t.starts_with("@@") {
                    state = State::Hunk;
                    l.role = Role::Other;
                    out.push(l);
                    continue;
                }
                if state == State::UpdateHead {
                    note(
                        &mut fixes,
                        RepairCause::MissingHunkHeader,
                        line.from,
                        "the first hunk has no @@ line: add @@ before its first line",
                    );
                    out.push(DraftLine {
                        text: "@@".into(),
                        from: line.from,
                        role: Role::Other,
                    });
                    state = State::Hunk;
                }
                match t.as_bytes().first() {
                    Some(b'-') => l.role = Role::Old,
                    Some(b'+') => l.role = Role::New,
                    Some(b'\\') => l.role = Role::Other,
                    Some(b' ') if !prefix_spaced => l.role = Role::Old,
                    _ => {
                        note(
                            &mut fixes,
                            RepairCause::MissingContextPrefix,
                            line.from,
                            "context lines lack their leading space (a blank context line is a single space): add it",
                        );
                        l.text.insert(0, ' ');
                        l.role = Role::Old;
                    }
                }
                out.push(l);
            }
        }
    }
    d.lines = out;
    for (cause, line, n) in fixes {
        d.fix(cause, line, n);
    }
    d
}

/// The escape rules: every subset of the escapes an old-side line shows.
fn escape_variants(draft: &Draft) -> Vec<Draft> {
    if draft.lines.is_empty() {
        return Vec::new();
    }
    let old = |needle: &str| {
        draft
            .lines
            .iter()
            .any(|l| l.role == Role::Old && l.text[1..].contains(needle))
    };
    let mut rules: Vec<RepairCause> = Vec::new();
    if old("\\t") {
        rules.push(RepairCause::LiteralTabEscape);
    }
    if old("\\n") {
        rules.push(RepairCause::LiteralNewlineEscape);
    }
    if old("\\\"") || old("\\'") {
        rules.push(RepairCause::EscapedQuotes);
    }
    let mut out = Vec::with_capacity(1 << rules.len());
    for mask in 0..(1usize << rules.len()) {
        let mut d = draft.clone();
        for (bit, rule) in rules.iter().enumerate() {
            if mask & (1 << bit) != 0 {
                d = escaped(d, *rule);
            }
        }
        out.push(d);
    }
    out
}

/// One escape rule over every body line.
fn escaped(mut d: Draft, rule: RepairCause) -> Draft {
    let mut first = None;
    let mut out = Vec::with_capacity(d.lines.len());
    for l in std::mem::take(&mut d.lines) {
        if l.role == Role::Other {
            out.push(l);
            continue;
        }
        let (prefix, body) = l.text.split_at(1);
        let changed: Vec<String> = match rule {
            RepairCause::LiteralTabEscape => vec![body.replace("\\t", "\t")],
            RepairCause::LiteralNewlineEscape => body.split("\\n").map(str::to_string).collect(),
            _ => vec![body.replace("\\\"", "\"").replace("\\'", "'")],
        };
        if changed.len() != 1 || changed[0] != body {
            first.get_or_insert(l.from);
        }
        for piece in changed {
            out.push(DraftLine {
                text: format!("{prefix}{piece}"),
                from: l.from,
                role: l.role,
            });
        }
    }
    d.lines = out;
    let note = match rule {
        RepairCause::LiteralTabEscape => "the hunk holds literal \\t (a backslash and a t) where the file has a tab: write the tab itself, in added lines too",
        RepairCause::LiteralNewlineEscape => "a hunk line holds literal \\n where the file has separate lines: write each line on its own hunk line, with its prefix",
        _ => "the hunk holds \\\" or \\' (escaped twice) where the file has plain quotes: write the quotes unescaped, in added lines too",
    };
    d.fix(rule, first.unwrap_or(1), note);
    d
}

/// The hunk rules for the hunk a candidate still fails on.
fn hunk_variants(fs: &dyn Fs, draft: &Draft, candidate: &str, e: &ToolError) -> Vec<Draft> {
    let field = |k: &str| e.details.get(k).and_then(Value::as_u64).map(|v| v as usize);
    let (Some(section), Some(hunk)) = (field("section"), field("hunkIndex")) else {
        return Vec::new();
    };
    let Ok(patch) = envelope::parse(candidate) else {
        return Vec::new();
    };
    let Some(envelope::SectionKind::Update { hunks, path, .. }) =
        patch.sections.get(section).map(|s| &s.kind)
    else {
        return Vec::new();
    };
    let Some(h) = hunks.get(hunk) else {
        return Vec::new();
    };
    // Draft index of each body line of the hunk (spans are 1-based lines
    // of the candidate, which are the draft's lines).
    let body: Vec<usize> = h.lines.iter().map(|l| l.span.line - 1).collect();
    let mut out = Vec::new();
    if !draft.has(RepairCause::BlankLinePastEndOfFile) {
        if let Some(d) = without_trailing_blanks(draft, h, &body) {
            out.push(d);
        }
    }
    // A refusal that was diagnosed (the call's own) is shifted only when
    // the diagnosis saw indentation: the rule reads the file.
    let diagnosed_otherwise = e
        .details
        .get("diagnosis")
        .and_then(|d| d.get("causes"))
        .and_then(Value::as_array)
        .is_some_and(|causes| !causes.iter().any(|c| c == "indentation"));
    if !draft.has(RepairCause::Indentation) && !diagnosed_otherwise {
        out.extend(indentation_shifts(fs, draft, path, h, &body));
    }
    out
}

/// The hunk without the blank context lines it ends with.
fn without_trailing_blanks(draft: &Draft, h: &envelope::Hunk<'_>, body: &[usize]) -> Option<Draft> {
    let blank = |l: &envelope::HunkLine<'_>| {
        l.kind == envelope::LineKind::Context && l.text.trim().is_empty() && !l.no_newline
    };
    let trailing = h.lines.iter().rev().take_while(|l| blank(l)).count();
    if trailing == 0 || trailing == h.lines.len() || h.end_of_file {
        return None;
    }
    let mut d = draft.clone();
    let cut = &body[body.len() - trailing..];
    let from = d.lines[cut[0]].from;
    for &i in cut.iter().rev() {
        d.lines.remove(i);
    }
    d.fix(
        RepairCause::BlankLinePastEndOfFile,
        from,
        "the hunk ends with a blank context line past the end of the file: removed",
    );
    Some(d)
}

/// The hunk shifted by each indentation difference the file suggests.
fn indentation_shifts(
    fs: &dyn Fs,
    draft: &Draft,
    path: &str,
    h: &envelope::Hunk<'_>,
    body: &[usize],
) -> Vec<Draft> {
    let indent = |s: &str| s.len() - s.trim_start_matches([' ', '\t']).len();
    // The hunk's first non-blank old line that is in the file at another
    // indentation is the anchor; a shift fits every line or none.
    let anchors: Vec<(&str, &str)> = h
        .old_lines()
        .filter(|l| !l.text.trim().is_empty())
        .take(MAX_INDENT_ANCHORS)
        .map(|l| l.text.split_at(indent(l.text)))
        .collect();
    if anchors.is_empty() {
        return Vec::new();
    }
    let Ok(p) = resolve(fs, path, GuardOptions::default()) else {
        return Vec::new();
    };
    let Ok(bytes) = fs.read(&p.target) else {
        return Vec::new();
    };
    let file = String::from_utf8_lossy(&bytes);
    // One pass over the file for every anchor; the first anchor (in hunk
    // order) that shows a shift decides.
    let mut per_anchor: Vec<Vec<(bool, String)>> = vec![Vec::new(); anchors.len()];
    for line in file.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let (have, rest) = line.split_at(indent(line));
        for ((sent_indent, key), shifts) in anchors.iter().zip(&mut per_anchor) {
            if rest != key.trim_end_matches('\r') || have == *sent_indent {
                continue;
            }
            let shift = if let Some(add) = have.strip_suffix(sent_indent) {
                (true, add.to_string())
            } else if let Some(cut) = sent_indent.strip_suffix(have) {
                (false, cut.to_string())
            } else {
                continue;
            };
            if !shifts.contains(&shift) && shifts.len() < MAX_INDENT_SHIFTS {
                shifts.push(shift);
            }
        }
    }
    let shifts = per_anchor
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let mut out = Vec::new();
    'shift: for (add, ws) in shifts {
        let mut d = draft.clone();
        if add && ws == " " {
            // One space less on the indented lines: the signature of
            // context lines sent without their prefix (the first space
            // read as the prefix), not of an indentation mistake. Only
            // those lines get it back; `-` and `+` lines kept theirs.
            let mut touched = false;
            for (&i, l) in body.iter().zip(&h.lines) {
                if l.kind == envelope::LineKind::Context && l.text.starts_with([' ', '\t']) {
                    d.lines[i].text.insert(1, ' ');
                    touched = true;
                }
            }
            if touched {
                let from = d.lines[body[0]].from;
                d.fix(
                    RepairCause::MissingContextPrefix,
                    from,
                    "context lines were sent without their leading space (the first space of their indentation was read as the prefix): add it",
                );
                out.push(d);
            }
            continue;
        }
        if ws == " " || draft.has(RepairCause::MissingContextPrefix) {
            // A one-space shift is a prefix read as indentation, and a
            // candidate whose prefixes were corrected already is not
            // re-indented on top of that.
            continue;
        }
        for &i in body {
            let l = &mut d.lines[i];
            if l.text.len() <= 1 || l.text[1..].trim().is_empty() {
                continue;
            }
            if add {
                l.text.insert_str(1, &ws);
            } else if l.text[1..].starts_with(ws.as_str()) {
                l.text.replace_range(1..1 + ws.len(), "");
            } else {
                continue 'shift;
            }
        }
        let from = d.lines[body[0]].from;
        let what = if ws.contains('\t') {
            format!("{} tab(s)", ws.len())
        } else {
            format!("{} space(s)", ws.len())
        };
        d.fix(
            RepairCause::Indentation,
            from,
            format!(
                "the hunk's lines are indented {what} {} than the file's: every line of the hunk shifted",
                if add { "less" } else { "more" }
            ),
        );
        out.push(d);
    }
    out
}

/// The refusal with what the search found: `details.repair` and its hint,
/// or a hint naming the mistakes the envelope shows when no single
/// correction fits.
pub(crate) fn annotate(mut error: ToolError, found: &Search) -> ToolError {
    let notes = |fixes: &[Fix]| {
        fixes
            .iter()
            .map(|f| format!("line {}: {}", f.envelope_line, f.note))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let old_hint = error.hint().map(str::to_string);
    let hint = if let Some(repair) = &found.repair {
        Some(format!(
            "{}. details.repair.patch is the envelope with {} correction{}, checked against the workspace as it is now: send it as the patch to apply it",
            notes(&repair.fixes),
            if repair.fixes.len() == 1 { "this" } else { "these" },
            if repair.fixes.len() == 1 { "" } else { "s" }
        ))
    } else if !found.ambiguous.is_empty() {
        Some(format!(
            "{}; more than one correction of the envelope would apply ({} ways), so none is offered",
            old_hint.clone().unwrap_or_else(|| notes(&found.ambiguous[0])),
            found.ambiguous.len()
        ))
    } else if !found.evident.is_empty() {
        let evident = notes(&found.evident);
        Some(match (&old_hint, error.kind) {
            (Some(h), ErrorKind::PatchParseError) => format!("{h}; also: {evident}"),
            (Some(h), _) => format!("{evident}; and then: {h}"),
            (None, _) => evident,
        })
    } else {
        None
    };
    if let Some(hint) = hint {
        error.details.insert("hint".into(), hint.into());
    }
    if let Some(repair) = &found.repair {
        if let Ok(Value::Object(map)) = serde_json::to_value(repair) {
            error.details.insert("repair".into(), Value::Object(map));
        }
    }
    error
}

/// `details.repair` of a refusal, typed (for hosts and tests).
pub fn repair_of(details: &Map<String, Value>) -> Option<Repair> {
    let r = details.get("repair")?;
    let patch = r.get("patch")?.as_str()?.to_string();
    let fixes = r
        .get("fixes")?
        .as_array()?
        .iter()
        .filter_map(|f| {
            Some(Fix {
                cause: f.get("cause")?.as_str()?.to_string(),
                envelope_line: f.get("envelopeLine")?.as_u64()? as usize,
                note: f.get("note")?.as_str()?.to_string(),
            })
        })
        .collect();
    Some(Repair { patch, fixes })
}

#[cfg(feature = "testing")]
pub mod mistakes;

#[cfg(test)]
mod tests;
