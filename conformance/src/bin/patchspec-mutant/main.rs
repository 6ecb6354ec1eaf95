//! Single-defect executors for the corpus's mutation gate (not shipped).
//!
//! `patchspec-mutant DEFECT` is the reference executor (`patchspec exec`,
//! oneshot: the same [`answer`] and [`hello`] code, in this process) with
//! exactly one deliberate, realistic defect: a neighbouring error kind, an
//! off-by-one line, a dropped documented member, a wrong value, a final
//! newline flipped, a partial write reported as success, a write left on a
//! refusal… An executor with a defect must fail `patchspec check`: a defect
//! no case notices shows a behaviour the corpus does not pin.
//! `scripts/mutation-gate.py` runs every defect and fails on a survivor;
//! docs/mutation-testing.md ("The mutation gate of the corpus") has the
//! table.
//!
//! `patchspec-mutant DEFECT --session` speaks the session transport instead
//! (HELLO, one message per line, BYE), for `patchspec fuzz`'s own tests.
//!
//! `patchspec-mutant --list` prints one line per defect, tab-separated: its
//! name, the tools it touches (comma-separated), what it breaks, and, for a
//! known survivor, why no case can catch it yet (else empty).
//!
//! Each defect acts at most at three points: on the params before the call
//! (`before_call`), on the result document after it (`after_call`), and on
//! the workspace's files, against a snapshot taken before the call. It
//! answers every call of the other tools exactly as the reference does.

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use patchspec_conformance::protocol::ToolCallMsg;
use patchspec_conformance::rel_path;
use patchspec_conformance::transport::inprocess::{answer, hello};
use patchspec_engine::hash::sha256_hex;
use serde_json::{json, Map, Value};

mod ide;
mod tul;

/// One defect: its name, the tools whose answers it changes, what it breaks.
struct Defect {
    name: &'static str,
    tools: &'static [&'static str],
    what: &'static str,
    /// Why no case can catch it yet (a known survivor), or `None`.
    pending: Option<&'static str>,
}

const AP: &[&str] = &["apply_patch"];
const WP: &[&str] = &["workspace_write_patch"];
const CF: &[&str] = &["workspace_create_file"];
const RF: &[&str] = &["workspace.read_file"];
const IR: &[&str] = &["read_file"];
const GR: &[&str] = &["grep_file"];
const AC: &[&str] = &["apply_change"];
const CC: &[&str] = &["call_chain"];

/// Every defect, in the order the gate runs them.
const DEFECTS: &[Defect] = &[
    Defect { name: "ap-missing-file-as-not-a-file", tools: AP, what: "`not_found` reports reason `not_a_file` instead of `missing_file`", pending: None },
    Defect { name: "ap-not-a-file-as-missing-file", tools: AP, what: "`command_failed` reports reason `missing_file` instead of `not_a_file` (a directory read as absent)", pending: None },
    Defect { name: "ap-missing-parent-as-missing-file", tools: AP, what: "`not_found` reports reason `missing_file` instead of `missing_parent`", pending: None },
    Defect { name: "ap-changed-files-on-refusal", tools: AP, what: "an atomic refusal's `data.changedFiles` claims the envelope's first file was applied", pending: None },
    Defect { name: "ap-changed-files-dropped", tools: AP, what: "the success document has no `data.changedFiles`", pending: None },
    Defect { name: "ap-hunk-line-off-by-one", tools: AP, what: "`details.hunkLine` is one past the hunk's `@@` line", pending: None },
    Defect { name: "ap-stale-hashes-swapped", tools: AP, what: "`stale_file` gives `expectedSha256` and `actualSha256` the other way round", pending: None },
    Defect { name: "ap-refusal-not-atomic", tools: AP, what: "an atomic envelope is applied section by section: the sections before a refusal stay written", pending: None },
    Defect { name: "ap-partial-success", tools: AP, what: "a success that changes several files leaves the last one (by path) as it was", pending: None },
    Defect { name: "ap-final-newline-added", tools: AP, what: "a written file without a final newline gains one", pending: None },
    Defect { name: "ap-crlf-normalised", tools: AP, what: "a written file's CRLF endings become LF", pending: None },
    Defect { name: "ap-bom-dropped", tools: AP, what: "a written file loses its leading UTF-8 BOM", pending: None },
    Defect { name: "ap-atomic-echo-true", tools: AP, what: "`data.atomic` is always `true`", pending: None },
    Defect { name: "ap-section-line-off-by-one", tools: AP, what: "`details.sectionLine` is one past the directive's line", pending: None },
    Defect { name: "ap-match-lines-zero-based", tools: AP, what: "`multiple_matches`' `matchLines` are 0-based", pending: None },
    Defect { name: "ap-overlaps-hunk-off-by-one", tools: AP, what: "`overlapping_edits`' `overlapsHunk` is one too high", pending: None },
    Defect { name: "ap-parse-line-zero-based", tools: AP, what: "`patch_parse_error`'s `details.line` is 0-based", pending: None },
    Defect { name: "ap-move-from-dropped", tools: AP, what: "a move's `changedFiles` entry has no `from`", pending: None },
    Defect { name: "ap-move-path-is-source", tools: AP, what: "a move's `changedFiles` entry gives the source as `path`", pending: None },
    Defect { name: "ap-match-trims-trailing-whitespace", tools: AP, what: "hunk lines match file lines that differ only by trailing whitespace", pending: None },
    Defect { name: "ap-first-of-two-matches", tools: AP, what: "a hunk whose old side occurs several times is applied at the first occurrence instead of `multiple_matches`", pending: None },
    Defect { name: "follows-symlink-out", tools: &["apply_patch", "workspace_write_patch", "workspace_create_file"], what: "paths are resolved through symlinks without a check: a link leading out of the workspace is written through", pending: None },
    Defect { name: "ap-symlink-dropped", tools: AP, what: "`outside_workspace` through a symlink does not name the link (`details.symlink`)", pending: None },
    Defect { name: "wp-error-path-dropped", tools: WP, what: "errors do not carry the documented `path`", pending: None },
    Defect { name: "wp-error-change-id-foreign", tools: WP, what: "an error's `changeId` belongs to no change of the result", pending: None },
    Defect { name: "wp-change-ids-shared", tools: WP, what: "every change of a result gets the same `changeId`", pending: None },
    Defect { name: "wp-ids-not-fresh", tools: WP, what: "IDs are derived from their position (`chg-…` of change 0 is the same on every call), not fresh per call", pending: None },
    Defect { name: "wp-file-error-not-the-listed-one", tools: WP, what: "a file's `error` is not the one listed in `errors`: its `changeId` and `diagnosis` are left out", pending: None },
    Defect { name: "wp-skipped-because-dropped", tools: WP, what: "files that were fine but not written do not say `skippedBecause`", pending: None },
    Defect { name: "wp-path-is-doc-path", tools: WP, what: "a file's `path` echoes its `docPath`, not the workspace file it resolved to", pending: None },
    Defect { name: "wp-errors-reversed", tools: WP, what: "`errors` are listed in reverse request order", pending: None },
    Defect { name: "wp-result-object-on-validation-failure", tools: WP, what: "a validation failure gives `result: {}` instead of `null`", pending: None },
    Defect { name: "wp-expected-actual-swapped", tools: WP, what: "`sha256_mismatch` and `line_mismatch` give `expected` and `actual` the other way round", pending: None },
    Defect { name: "wp-new-sha-is-original", tools: WP, what: "`newSha256` is the file's old SHA-256 (`originalSha256`)", pending: None },
    Defect { name: "wp-skipped-file-written", tools: WP, what: "a refused batch still writes the files that were fine (not atomic)", pending: None },
    Defect { name: "wp-mismatch-line-off-by-one", tools: WP, what: "`line_mismatch`'s `line` is one past the differing line", pending: None },
    Defect { name: "wp-line-count-off-by-one", tools: WP, what: "`range_out_of_bounds`' `lineCount` is one too high", pending: None },
    Defect { name: "wp-overlap-as-out-of-order", tools: WP, what: "`changes_overlap` is reported as `changes_out_of_order`", pending: None },
    Defect { name: "wp-final-newline-dropped", tools: WP, what: "a written file loses its final newline", pending: None },
    Defect { name: "wp-crlf-normalised", tools: WP, what: "a written file's CRLF endings become LF", pending: None },
    Defect { name: "wp-file-index-off-by-one", tools: WP, what: "errors' `fileIndex` is 1-based", pending: None },
    Defect { name: "wp-applied-on-refusal", tools: WP, what: "files of a refused batch say `applied: true`", pending: None },
    Defect { name: "cf-hash-of-raw-content", tools: CF, what: "`hash` is the SHA-256 of `content` as given, not of the normalised file", pending: None },
    Defect { name: "cf-crlf-kept", tools: CF, what: "content is written as given: CRLF, lone CR and a BOM are kept (size and hash of what was written)", pending: None },
    Defect { name: "cf-created-on-overwrite", tools: CF, what: "`created` is `true` when an existing file was overwritten", pending: None },
    Defect { name: "cf-path-as-given", tools: CF, what: "`path` echoes the param as given, not folded", pending: None },
    Defect { name: "cf-overwritten-always-false", tools: CF, what: "`overwritten` is `false` when an existing file was replaced", pending: None },
    Defect { name: "cf-directory-as-file-exists", tools: CF, what: "a directory at the path is `FileExists`, not `InvalidPath`", pending: None },
    Defect { name: "cf-write-failed-as-unhandled-exception", tools: CF, what: "a failed write is `UnhandledException`, not `WriteFailed`", pending: None },
    Defect { name: "cf-limit-inclusive", tools: CF, what: "content of exactly the size limit is `TooLarge`", pending: None },
    Defect { name: "rf-sha-of-returned-bytes", tools: RF, what: "`file.sha256` hashes the returned (truncated) content, not the whole file", pending: None },
    Defect { name: "rf-size-of-returned-bytes", tools: RF, what: "`file.sizeBytes` is the returned content's size", pending: None },
    Defect { name: "rf-encoding-dropped", tools: RF, what: "`file.encoding` is left out when bytes were replaced by U+FFFD", pending: None },
    Defect { name: "rf-content-crlf-normalised", tools: RF, what: "`file.content` has its CRLF endings turned into LF", pending: None },
    Defect { name: "rf-truncated-at-exact-size", tools: RF, what: "`maxBytes` equal to the file's size sets `isTruncated`", pending: None },
    Defect { name: "rf-path-folded", tools: RF, what: "`file.path` is the folded path (`./a.txt` as `a.txt`), not the path as given", pending: None },
    Defect { name: "rf-active-files-ignored", tools: RF, what: "`session.activeFiles` is not consulted (no `ALREADY_IN_CONTEXT`)", pending: None },
    Defect { name: "rf-not-found-as-invalid-argument", tools: RF, what: "`NOT_FOUND` is reported as `INVALID_ARGUMENT`", pending: None },
    Defect { name: "ide-read-total-lines-counts-final-newline", tools: IR, what: "`read_file`'s `totalLines` counts the empty line after a final newline", pending: None },
    Defect { name: "ide-read-end-line-off-by-one", tools: IR, what: "`read_file`'s `endLine` is one past the window", pending: None },
    Defect { name: "ide-read-encoding-dropped", tools: IR, what: "`read_file` leaves out `encoding` when bytes were replaced by U+FFFD", pending: None },
    Defect { name: "ide-read-path-as-given", tools: IR, what: "`read_file`'s `path` echoes `relativePath` unfolded", pending: None },
    Defect { name: "ide-read-bom-kept", tools: IR, what: "`read_file`'s content keeps a leading BOM", pending: None },
    Defect { name: "ide-read-range-error-total-lines-off-by-one", tools: IR, what: "`line_out_of_range`'s `totalLines` is one too high", pending: None },
    Defect { name: "ide-not-a-file-as-not-found", tools: &["read_file", "apply_change"], what: "a directory at the path is `not_found`, not `not_a_file`", pending: None },
    Defect { name: "grep-truncated-at-limit", tools: GR, what: "`truncated` is true when `totalMatches == limit`", pending: None },
    Defect { name: "grep-line-zero-based", tools: GR, what: "`matches[].line` is 0-based", pending: None },
    Defect { name: "grep-files-with-matches-counts-lines", tools: GR, what: "`filesWithMatches` counts matching lines", pending: None },
    Defect { name: "grep-text-keeps-cr", tools: GR, what: "a match's `text` keeps the `\\r` of a CRLF line", pending: None },
    Defect { name: "grep-text-keeps-bom", tools: GR, what: "a match on line 1 of a file with a BOM keeps the BOM in `text`", pending: None },
    Defect { name: "grep-relative-path-as-given", tools: GR, what: "`relativePath` echoes the param unfolded (`\"\"` and `.` not null)", pending: None },
    Defect { name: "grep-case-sensitive-echo-true", tools: GR, what: "`caseSensitive` is echoed as `true` whatever was asked", pending: None },
    Defect { name: "grep-invalid-regex-error-dropped", tools: GR, what: "`invalid_regex` does not carry the parser's message (`details.error`)", pending: None },
    Defect { name: "grep-context-dropped", tools: GR, what: "matches carry no `before`/`after` context", pending: None },
    Defect { name: "ac-line-off-by-one", tools: AC, what: "`apply_change`'s `line` is one past the match's line", pending: None },
    Defect { name: "ac-sha-of-old-file", tools: AC, what: "`apply_change`'s `sha256` is the file's hash before the change", pending: None },
    Defect { name: "ac-crlf-normalised", tools: AC, what: "a modified file's CRLF endings become LF (`sha256` of what was written)", pending: None },
    Defect { name: "ac-changed-always-true", tools: AC, what: "`changed` is `true` when the replacement equals the match", pending: None },
    Defect { name: "ac-rolled-back-false", tools: AC, what: "a commit failure that was rolled back says `rolledBack: false`", pending: None },
    Defect { name: "ac-operation-always-modify", tools: AC, what: "`operation` is `modify` for a create too", pending: None },
    Defect { name: "ac-candidate-lines-dropped", tools: AC, what: "`no_match` has no `candidateLines`", pending: None },
    Defect { name: "ac-match-lines-zero-based", tools: AC, what: "`multiple_matches`' `lines` are 0-based", pending: None },
    Defect { name: "ac-description-dropped", tools: AC, what: "`description` is not echoed", pending: None },
    Defect { name: "cc-end-line-off-by-one", tools: CC, what: "every node's `endLine` is one past the declaration's last line", pending: None },
    Defect { name: "cc-call-site-line-off-by-one", tools: CC, what: "`callSites[].line` is one past the call", pending: None },
    Defect { name: "cc-resolution-always-type", tools: CC, what: "every call site says `resolution: \"type\"`", pending: None },
    Defect { name: "cc-external-callees-dropped", tools: CC, what: "calls that link to no workspace method are left out of `callees`", pending: None },
    Defect { name: "cc-recursive-flag-dropped", tools: CC, what: "a method already on the chain is not marked `recursive`", pending: None },
    Defect { name: "cc-truncated-never-set", tools: CC, what: "the document's `truncated` is `false` even when a tree was cut at 1,000 nodes", pending: None },
    Defect { name: "cc-signature-without-names", tools: CC, what: "`signature` lists parameter types only (`log(String, Object...)`)", pending: None },
    Defect { name: "cc-external-flag-dropped", tools: CC, what: "resolved callees have no `external: false`", pending: None },
    Defect { name: "cc-callers-reversed", tools: CC, what: "callers are listed in reverse order", pending: None },
    Defect { name: "cc-available-dropped", tools: CC, what: "`method_not_found` does not list the class's methods (`available`)", pending: None },
    Defect { name: "cc-candidates-dropped", tools: CC, what: "`ambiguous_method` does not list its `candidates`", pending: None },
    Defect { name: "cc-files-parsed-off-by-one", tools: CC, what: "`filesParsed` is one too high", pending: None },
    Defect { name: "any-undocumented-member", tools: &["apply_patch", "workspace_write_patch", "workspace_create_file", "workspace.read_file", "read_file", "grep_file", "apply_change", "call_chain"], what: "every result document carries a member its tool does not document (`elapsedMs`)", pending: None },
];

/// The workspace's regular files (path → bytes), without the private `.patchspec/`.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel == ".patchspec" {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                walk(root, &path, out);
            } else if meta.is_file() {
                if let Ok(bytes) = std::fs::read(&path) {
                    out.insert(rel, bytes);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The files a call wrote: new or different from the snapshot before it.
fn written(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    after
        .iter()
        .filter(|(path, bytes)| before.get(*path) != Some(*bytes))
        .map(|(path, _)| path.clone())
        .collect()
}

/// Rewrite each written file with `edit` (files it leaves alone are not touched).
fn rewrite_written(
    root: &Path,
    before: &BTreeMap<String, Vec<u8>>,
    edit: impl Fn(&[u8]) -> Vec<u8>,
) -> Vec<String> {
    let after = snapshot(root);
    let mut rewritten = Vec::new();
    for path in written(before, &after) {
        let old = &after[&path];
        let new = edit(old);
        if &new != old {
            let _ = std::fs::write(rel_path::under(root, &path), &new);
            rewritten.push(path);
        }
    }
    rewritten
}

fn crlf_to_lf(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Every object in `value`, depth first.
fn each_object(value: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Object(map) => {
            f(map);
            for child in map.values_mut() {
                each_object(child, f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| each_object(item, f)),
        _ => {}
    }
}

/// Add `delta` to the integer member `key` of every object that has one.
fn shift_member(doc: &mut Value, key: &str, delta: i64) {
    each_object(doc, &mut |map| {
        if let Some(n) = map.get(key).and_then(Value::as_i64) {
            map.insert(key.into(), json!(n + delta));
        }
    });
}

/// The `error.details` object of a failure document (apply_patch, the IDE tools).
fn details(doc: &mut Value) -> Option<&mut Map<String, Value>> {
    doc.pointer_mut("/error/details")
        .and_then(Value::as_object_mut)
}

fn error_kind(doc: &Value) -> Option<&str> {
    doc.pointer("/error/kind").and_then(Value::as_str)
}

fn set_reason(doc: &mut Value, kind: &str, from: &str, to: &str) {
    if error_kind(doc) != Some(kind) {
        return;
    }
    if let Some(d) = details(doc) {
        if d.get("reason").and_then(Value::as_str) == Some(from) {
            d.insert("reason".into(), json!(to));
        }
    }
}

/// The first section of an envelope: its path and `changedFiles` operation.
fn first_section(patch: &str) -> Option<(String, &'static str)> {
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        for (prefix, op) in [
            ("*** Add File: ", "add"),
            ("*** Update File: ", "update"),
            ("*** Delete File: ", "delete"),
        ] {
            if let Some(path) = line.strip_prefix(prefix) {
                return Some((path.to_owned(), op));
            }
        }
        if let Some(rest) = line.strip_prefix("*** Move File: ") {
            let to = rest.split(" -> ").nth(1).unwrap_or(rest);
            return Some((to.to_owned(), "move"));
        }
    }
    None
}

/// The normalisation workspace_create_file applies (one leading U+FEFF removed, CRLF and CR to LF).
fn create_file_normalised_len(content: &str) -> usize {
    let text = content.strip_prefix('\u{FEFF}').unwrap_or(content);
    text.replace("\r\n", "\n").replace('\r', "\n").len()
}

/// The 1-based line `n` of `bytes`, with its ending (`\n` and a `\r` before it).
fn line_with_ending(bytes: &[u8], n: usize) -> Option<&[u8]> {
    bytes
        .split_inclusive(|b| *b == b'\n')
        .nth(n.checked_sub(1)?)
}

/// What happened in the call, for the defects that look at the files.
struct Call<'a> {
    root: &'a Path,
    params: &'a Value,
    before: &'a BTreeMap<String, Vec<u8>>,
}

/// A file's lines without their endings (`None`: not readable).
fn file_lines(path: &Path) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(
        text.split_inclusive('\n')
            .map(|l| l.trim_end_matches('\n').trim_end_matches('\r').to_string())
            .collect(),
    )
}

/// The envelope an implementation that trims trailing whitespace when it
/// compares lines acts on: every context or removed line of an Update that
/// the file does not hold exactly, but holds up to trailing whitespace, is
/// replaced by the file's own line.
fn trimmed_matches(root: &Path, patch: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut out = String::with_capacity(patch.len());
    for line in patch.split_inclusive('\n') {
        let body = line.trim_end_matches('\n').trim_end_matches('\r');
        let ending = &line[body.len()..];
        if let Some(path) = body.strip_prefix("*** Update File: ") {
            lines = file_lines(&rel_path::under(root, path.trim())).unwrap_or_default();
        } else if let Some(rest) = body.strip_prefix("*** Move File: ") {
            let from = rest.split(" -> ").next().unwrap_or(rest);
            lines = file_lines(&rel_path::under(root, from.trim())).unwrap_or_default();
        } else if body.starts_with("*** Add File: ") || body.starts_with("*** Delete File: ") {
            lines.clear();
        } else if let Some(kind) = body.chars().next().filter(|c| *c == ' ' || *c == '-') {
            let content = &body[1..];
            if !lines.iter().any(|l| l == content) {
                if let Some(l) = lines.iter().find(|l| l.trim_end() == content.trim_end()) {
                    out.push(kind);
                    out.push_str(l);
                    out.push_str(ending);
                    continue;
                }
            }
        }
        out.push_str(line);
    }
    out
}

/// The envelope an implementation that takes the first of several matches
/// acts on: hunk `hunk` of section `section` anchored at its first match
/// (`first`, 1-based) by the whole file around it as context, so it can
/// match only there. `None` when the hunk cannot be found or carries a
/// marker.
fn anchored_at_first(
    root: &Path,
    patch: &str,
    section: u64,
    hunk: u64,
    first: u64,
) -> Option<String> {
    let lines: Vec<&str> = patch.split_inclusive('\n').collect();
    let body = |l: &str| l.trim_end_matches('\n').trim_end_matches('\r').to_string();
    let directive = |l: &str| {
        [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move File: ",
        ]
        .iter()
        .any(|d| l.starts_with(d))
    };
    let mut s = 0u64;
    let mut i = 0;
    let mut path = None;
    while i < lines.len() {
        let b = body(lines[i]);
        if directive(&b) {
            if s == section {
                let rest = b.split_once(": ")?.1;
                path = Some(rest.split(" -> ").next().unwrap_or(rest).trim().to_string());
                break;
            }
            s += 1;
        }
        i += 1;
    }
    let file = file_lines(&rel_path::under(root, &path?))?;
    // The hunk's `@@` line.
    let mut h = 0u64;
    let mut at = None;
    for (j, l) in lines.iter().enumerate().skip(i + 1) {
        let b = body(l);
        if directive(&b) || b == "*** End Patch" {
            break;
        }
        if b.starts_with("@@") {
            if h == hunk {
                at = Some(j);
                break;
            }
            h += 1;
        }
    }
    let at = at?;
    let mut end = at + 1;
    let mut old_len = 0u64;
    while end < lines.len() {
        let b = body(lines[end]);
        match b.chars().next() {
            Some(' ') | Some('-') => old_len += 1,
            Some('+') => {}
            _ if b.is_empty() => old_len += 1,
            _ => break,
        }
        end += 1;
    }
    if end < lines.len() && body(lines[end]).starts_with('\\') || first == 0 {
        return None;
    }
    let before = file.get(..(first - 1) as usize)?;
    let after = file.get((first - 1 + old_len) as usize..)?;
    let mut out: String = lines[..=at].concat();
    for l in before {
        out.push_str(&format!(" {l}\n"));
    }
    out.push_str(&lines[at + 1..end].concat());
    for l in after {
        out.push_str(&format!(" {l}\n"));
    }
    if !(end < lines.len() && body(lines[end]) == "*** End of File") {
        out.push_str("*** End of File\n");
    }
    out.push_str(&lines[end..].concat());
    Some(out)
}

/// Answer as an implementation that takes the first of several matches:
/// while the reference refuses an atomic envelope with `multiple_matches`,
/// anchor that hunk at its first match and ask again.
fn first_of_matches(msg: &ToolCallMsg, success: &mut bool, doc: &mut Value) {
    if msg.params.get("atomic").and_then(Value::as_bool) == Some(false) {
        return;
    }
    let root = PathBuf::from(&msg.workspace_root);
    let mut patch = match msg.params.get("patch").and_then(Value::as_str) {
        Some(p) => p.to_string(),
        None => return,
    };
    for _ in 0..4 {
        if error_kind(doc) != Some("multiple_matches") {
            return;
        }
        let d = &doc["error"]["details"];
        let (Some(section), Some(hunk), Some(first)) = (
            d["section"].as_u64(),
            d["hunkIndex"].as_u64(),
            d["matchLines"].get(0).and_then(Value::as_u64),
        ) else {
            return;
        };
        let Some(anchored) = anchored_at_first(&root, &patch, section, hunk, first) else {
            return;
        };
        let mut again = msg.clone();
        if let Some(p) = again.params.as_object_mut() {
            p.insert("patch".into(), json!(anchored));
        }
        let Ok(result) = answer(&again) else { return };
        let Ok(next) = serde_json::from_str::<Value>(&result.data.result) else {
            return;
        };
        *success = result.data.success;
        *doc = next;
        patch = anchored;
    }
}

/// What an unguarded implementation sees of a workspace: its regular
/// files (path → bytes), through the symlinks that lead out of `root`
/// (followed, at most 8 levels), and apart the links that stay inside it
/// (path → target), which it resolves as the reference does. `.patchspec`
/// is left out.
fn unguarded_view(
    root: &Path,
    dir: &Path,
    rel: &str,
    depth: usize,
    files: &mut BTreeMap<String, Vec<u8>>,
    inner_links: &mut BTreeMap<String, PathBuf>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = rel_path::join(rel, &name);
        if rel == ".patchspec" {
            continue;
        }
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_symlink()) {
            let inside = path
                .canonicalize()
                .is_ok_and(|t| t.starts_with(&canonical_root));
            if inside || !path.exists() {
                if let Ok(target) = std::fs::read_link(&path) {
                    inner_links.insert(rel, target);
                }
                continue;
            }
        }
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() && depth < 8 => {
                unguarded_view(root, &path, &rel, depth + 1, files, inner_links)
            }
            Ok(m) if m.is_file() => {
                if let Ok(b) = std::fs::read(&path) {
                    files.insert(rel, b);
                }
            }
            _ => {}
        }
    }
}

/// Answer as an implementation that resolves paths through symlinks with
/// no check: the call runs on a copy of the workspace in which every link
/// leading out is replaced by what it points at, and what it wrote there is
/// written through the real workspace's paths, so through those links.
/// `None` when no link leads out (the reference answers).
fn through_links(msg: &ToolCallMsg) -> Option<(bool, Value)> {
    let root = PathBuf::from(&msg.workspace_root);
    let (mut files, mut inner) = (BTreeMap::new(), BTreeMap::new());
    unguarded_view(&root, &root, "", 0, &mut files, &mut inner);
    let mut plain = BTreeMap::new();
    plain_files(&root, "", &mut plain);
    if plain.len() == files.len() && plain.keys().eq(files.keys()) {
        return None;
    }
    let mirror = std::env::temp_dir().join(format!("patchspec-mutant-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&mirror);
    std::fs::create_dir_all(&mirror).ok()?;
    for (rel, bytes) in &files {
        let p = rel_path::under(&mirror, rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).ok()?;
        }
        std::fs::write(&p, bytes).ok()?;
    }
    for (rel, target) in &inner {
        let p = rel_path::under(&mirror, rel);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::os::unix::fs::symlink(target, &p);
    }
    let mut copy = msg.clone();
    copy.workspace_root = mirror.to_string_lossy().into_owned();
    let result = answer(&copy);
    let (mut after, mut after_links) = (BTreeMap::new(), BTreeMap::new());
    unguarded_view(&mirror, &mirror, "", 0, &mut after, &mut after_links);
    let _ = std::fs::remove_dir_all(&mirror);
    let result = result.ok()?;
    for (rel, bytes) in &after {
        if files.get(rel) != Some(bytes) {
            let p = rel_path::under(&root, rel);
            if let Some(parent) = p.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(&p, bytes);
        }
    }
    for rel in files.keys().filter(|r| !after.contains_key(*r)) {
        let _ = std::fs::remove_file(rel_path::under(&root, rel));
    }
    let doc = serde_json::from_str(&result.data.result).ok()?;
    Some((result.data.success, doc))
}

/// The regular files of a workspace reached without following any link.
fn plain_files(dir: &Path, rel: &str, out: &mut BTreeMap<String, ()>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = rel_path::join(rel, &name);
        match e.file_type() {
            Ok(t) if t.is_dir() && rel != ".patchspec" => plain_files(&e.path(), &rel, out),
            Ok(t) if t.is_file() => {
                out.insert(rel, ());
            }
            _ => {}
        }
    }
}

/// Change the params before the call; `Some(doc)` answers without calling the engine.
// One arm per defect, its condition inside: guards would move half of a
// defect into the pattern and let the rest fall through to `_`.
#[allow(clippy::collapsible_match)]
fn before_call(defect: &str, msg: &mut ToolCallMsg) -> Option<(bool, Value)> {
    match defect {
        "ap-refusal-not-atomic" => {
            if msg.params.get("atomic").and_then(Value::as_bool) != Some(false) {
                if let Some(p) = msg.params.as_object_mut() {
                    p.insert("atomic".into(), json!(false));
                }
            }
        }
        "rf-active-files-ignored" => msg.session.active_files.clear(),
        "ap-match-trims-trailing-whitespace" => {
            let root = PathBuf::from(&msg.workspace_root);
            if let Some(patch) = msg.params.get("patch").and_then(Value::as_str) {
                let loose = trimmed_matches(&root, patch);
                if let Some(p) = msg.params.as_object_mut() {
                    p.insert("patch".into(), json!(loose));
                }
            }
        }
        "cf-limit-inclusive" => {
            let limit = msg.session.limits.create_file_max_bytes;
            let content = msg.params.get("content").and_then(Value::as_str);
            if let (Some(limit), Some(content)) = (limit, content) {
                if create_file_normalised_len(content) as u64 == limit {
                    let path = msg.params.get("path").and_then(Value::as_str).unwrap_or("");
                    return Some((
                        false,
                        json!({"success": false, "message": "Content exceeds the size limit.",
                               "path": path, "sizeBytes": 0, "hash": null, "created": false,
                               "overwritten": false, "errorCode": "TooLarge"}),
                    ));
                }
            }
        }
        _ => {}
    }
    None
}

/// Change the answer (and possibly the files) after the call: one function
/// per tool, each one arm per defect; a defect's arm is in one of them (the
/// final-newline pair, one arm for two tools, in `tul::apply_patch`), so at
/// most one acts.
fn after_call(
    defect: &str,
    call: &Call,
    original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    tul::apply_patch(defect, call, original, success, doc);
    tul::write_patch(defect, call, original, success, doc);
    tul::create_file(defect, call, original, success, doc);
    tul::read_file(defect, call, original, success, doc);
    ide::read_file(defect, call, original, success, doc);
    ide::grep_file(defect, call, original, success, doc);
    ide::apply_change(defect, call, original, success, doc);
    ide::call_chain(defect, call, original, success, doc);
    if defect == "any-undocumented-member" {
        if let Some(map) = doc.as_object_mut() {
            map.insert("elapsedMs".into(), json!(1));
        }
    }
}

/// Answer one TOOL_CALL with the defect; `None` when the engine panicked.
fn serve(defect: &Defect, mut msg: ToolCallMsg) -> Option<String> {
    let original = msg.clone();
    let root = PathBuf::from(&msg.workspace_root);
    let touched = defect.tools.contains(&msg.tool_name.as_str());
    let before = if touched {
        snapshot(&root)
    } else {
        BTreeMap::new()
    };
    let early = if !touched {
        None
    } else if defect.name == "follows-symlink-out" {
        through_links(&msg)
    } else {
        before_call(defect.name, &mut msg)
    };
    let (mut success, mut doc) = match early {
        Some(answered) => answered,
        None => {
            let result = answer(&msg).ok()?;
            let doc: Value = serde_json::from_str(&result.data.result).ok()?;
            (result.data.success, doc)
        }
    };
    if touched {
        let call = Call {
            root: &root,
            params: &original.params,
            before: &before,
        };
        after_call(defect.name, &call, &original, &mut success, &mut doc);
    }
    let error = (!success).then(|| {
        doc.pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("the tool failed")
            .to_owned()
    });
    let mut data =
        json!({"toolCallId": msg.tool_call_id, "success": success, "result": doc.to_string()});
    if let Some(error) = error {
        data["error"] = json!(error);
    }
    Some(json!({"type": "TOOL_RESULT", "data": data}).to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprintln!("usage: patchspec-mutant DEFECT [--session] | --list");
        std::process::exit(2);
    };
    if name == "--list" {
        for d in DEFECTS {
            println!(
                "{}\t{}\t{}\t{}",
                d.name,
                d.tools.join(","),
                d.what,
                d.pending.unwrap_or("")
            );
        }
        return;
    }
    let Some(defect) = DEFECTS.iter().find(|d| d.name == name) else {
        eprintln!("patchspec-mutant: unknown defect {name:?} (--list lists them)");
        std::process::exit(2);
    };
    let reply_to = |line: &str| -> Option<String> {
        let value: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        match value.get("type").and_then(Value::as_str) {
            Some("HELLO") => Some(serde_json::to_string(&hello()).expect("HELLO serialises")),
            Some("TOOL_CALL") => match serde_json::from_value::<ToolCallMsg>(value) {
                Ok(msg) => serve(defect, msg),
                Err(e) => {
                    eprintln!("patchspec-mutant: malformed TOOL_CALL: {e}");
                    std::process::exit(2);
                }
            },
            _ => None,
        }
    };
    if args.get(1).map(String::as_str) == Some("--session") {
        // The session transport: one message per line until BYE or EOF.
        let stdin = std::io::stdin();
        let mut out = std::io::stdout().lock();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { return };
            if line.trim().is_empty() {
                continue;
            }
            if serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
                .as_deref()
                == Some("BYE")
            {
                return;
            }
            match reply_to(&line) {
                Some(text) => {
                    let _ = writeln!(out, "{text}");
                    let _ = out.flush();
                }
                None => std::process::exit(101),
            }
        }
        return;
    }
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        std::process::exit(2);
    }
    match reply_to(&input) {
        Some(text) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}");
        }
        None => std::process::exit(101),
    }
}
