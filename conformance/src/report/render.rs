//! Readable renderings shared by the human and JUnit reports: a case's call,
//! its result mismatches, and unified diffs of files with invisible
//! characters made visible.
//!
//! Visible forms: a trailing space is `·`, a trailing tab `→`, a carriage
//! return `␍`, a byte order mark `<BOM>`, other control characters their
//! Unicode "control picture" (`␀`…), and a last line without a newline is
//! followed by `\ No newline at end of file`. In content that is not UTF-8,
//! each byte that is not part of a valid UTF-8 sequence is shown as `\xNN`,
//! under a first line saying so. The marks within a line come from the
//! engine's one renderer of invisible characters (the diagnosis's), in its
//! report style ([`patchspec_engine::VisibleStyle::Report`]); this
//! module adds the framing (BOM, line ends, the not-UTF-8 header).
//!
//! A call's params ([`params`], [`params_labelled`]) are shown as an
//! indented outline rather than one long JSON line: multi-line strings and
//! arrays of lines (`expectedOriginalLines`, `newLines`) as text blocks with
//! a `│` gutter, arrays of objects one element per line (their scalar
//! members inline, their blocks below), and every SHA-256 labelled with the
//! given file it is the hash of, or "matches no given file".

use std::fmt::Write as _;

use patchspec_engine::hash::{sha256_hex, to_hex};
use patchspec_engine::VisibleStyle;
use serde_json::Value;
use similar::TextDiff;

use crate::event::CaseResult;
use crate::workspace::{Entry, TreeDiff};

/// Text with its invisible characters made visible, each line ending in `\n`.
pub fn visible(text: &str) -> String {
    visible_lines(text.as_bytes())
}

/// The lines of `bytes` made visible (see the module docs): the framing
/// (`<BOM>`, the line breaks, a final `␍`, `\ No newline at end of file`)
/// is the report's; each line's marks are the engine's one renderer, in its
/// report style.
fn visible_lines(bytes: &[u8]) -> String {
    let mut out = String::new();
    let bytes = match bytes.strip_prefix("\u{feff}".as_bytes()) {
        Some(rest) => {
            out.push_str("<BOM>");
            rest
        }
        None => bytes,
    };
    if bytes.is_empty() {
        return out;
    }
    let mut lines = bytes.split_inclusive(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (line, false),
        };
        // A carriage return ends the line after its trailing whitespace.
        let (body, cr) = match body.strip_suffix(b"\r") {
            Some(b) => (b, true),
            None => (body, false),
        };
        out.push_str(&patchspec_engine::visible_line(body, VisibleStyle::Report));
        if cr {
            out.push('␍');
        }
        out.push('\n');
        if !newline && lines.peek().is_none() {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    out
}

/// Bytes as visible text; bytes that are not valid UTF-8 as `\xNN`.
pub fn visible_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => visible(text),
        Err(_) => format!(
            "<not UTF-8: {} bytes, sha256 {}; invalid bytes shown as \\xNN>\n{}",
            bytes.len(),
            sha256_hex(bytes),
            visible_lines(bytes)
        ),
    }
}

/// One line of text made visible (no line ending added).
fn visible_line(line: &str) -> String {
    let shown = visible(&format!("{line}\n"));
    shown.strip_suffix('\n').unwrap_or(&shown).to_owned()
}

fn entry_text(entry: &Entry) -> String {
    match entry {
        Entry::File(bytes, None) => visible_bytes(bytes),
        Entry::File(bytes, Some(mode)) => format!("<mode {mode:03o}>\n{}", visible_bytes(bytes)),
        Entry::Large { len, sha256, mode } => format!(
            "{}<{len} bytes, sha256 {}: too large to show>\n",
            mode.map_or(String::new(), |m| format!("<mode {m:03o}>\n")),
            to_hex(sha256)
        ),
        Entry::Dir => "<directory>\n".into(),
        Entry::Symlink(t) => format!("<symlink to {t}>\n"),
        Entry::Other => "<special file>\n".into(),
    }
}

/// Indent every line of `text` by `pad`.
pub fn indent(text: &str, pad: &str) -> String {
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

/// A unified diff of one path, expected → actual.
pub fn file_diff(path: &str, expected: &Entry, actual: &Entry) -> String {
    let (a, b) = (entry_text(expected), entry_text(actual));
    let diff = TextDiff::from_lines(&a, &b);
    let mut out = String::new();
    let _ = write!(
        out,
        "{}",
        diff.unified_diff()
            .context_radius(3)
            .header(&format!("expected/{path}"), &format!("actual/{path}"))
    );
    out
}

/// The tree differences, readable (`prefix` names the tree, e.g. `files`).
pub fn tree_diff(diff: &TreeDiff) -> String {
    let mut out = String::new();
    for (p, e) in &diff.missing {
        let _ = writeln!(out, "missing {}: {p}", e.kind());
    }
    for (p, e) in &diff.extra {
        let note = if p.ends_with(".tmp") {
            " (a stray temporary file)"
        } else {
            ""
        };
        let _ = writeln!(out, "extra {}: {p}{note}", e.kind());
    }
    for (p, want, got) in &diff.changed {
        if want.kind() != got.kind() {
            let _ = writeln!(
                out,
                "changed: {p} is a {}, expected a {}",
                got.kind(),
                want.kind()
            );
        } else {
            let _ = writeln!(out, "changed: {p}");
        }
        out.push_str(&indent(&file_diff(p, want, got), "  "));
    }
    out
}

/// SHA-256 (lowercase hex) → what it is the hash of, e.g. `given file a.txt`.
pub type HashLabels = std::collections::BTreeMap<String, String>;

/// The call's params as an outline (see the module docs), without hash labels.
pub fn params(tool: &str, params: &Value) -> String {
    render_params(tool, params, None)
}

/// The call's params as an outline, each SHA-256 labelled from `labels`.
pub fn params_labelled(tool: &str, params: &Value, labels: &HashLabels) -> String {
    render_params(tool, params, Some(labels))
}

fn render_params(tool: &str, params: &Value, labels: Option<&HashLabels>) -> String {
    let mut out = format!("{tool}\n");
    match params.as_object() {
        Some(map) => {
            for (k, v) in map {
                member(&mut out, "  ", k, v, labels);
            }
        }
        None => {
            let _ = writeln!(out, "  {params}");
        }
    }
    out
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A scalar as shown inline: JSON, plus a label for a SHA-256.
fn scalar(v: &Value, labels: Option<&HashLabels>) -> String {
    let json = serde_json::to_string(v).unwrap_or_default();
    match (v.as_str(), labels) {
        (Some(s), Some(labels)) if is_sha256(s) => match labels.get(s) {
            Some(what) => format!("{json} (sha256 of {what})"),
            None => format!("{json} (matches no given file)"),
        },
        _ => json,
    }
}

/// A value shown on one line after its key?
fn is_inline(v: &Value) -> bool {
    match v {
        Value::String(s) => !s.contains('\n'),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// A text block: each line behind a `│` gutter, invisible characters shown.
fn block<'a>(out: &mut String, pad: &str, lines: impl Iterator<Item = &'a str>) {
    for line in lines {
        let _ = writeln!(out, "{pad}│ {}", visible_line(line));
    }
}

fn member(out: &mut String, pad: &str, key: &str, v: &Value, labels: Option<&HashLabels>) {
    let deeper = format!("{pad}  ");
    match v {
        _ if is_inline(v) => {
            let _ = writeln!(out, "{pad}{key}: {}", scalar(v, labels));
        }
        Value::String(s) => {
            let _ = writeln!(out, "{pad}{key}: |");
            out.push_str(&indent(&visible(s), &deeper));
        }
        Value::Array(items) if items.iter().all(Value::is_string) => {
            // An array of lines: a text block, one element per line.
            let _ = writeln!(out, "{pad}{key}: ({} line(s))", items.len());
            block(out, &deeper, items.iter().filter_map(Value::as_str));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                element(out, pad, &format!("{key}[{i}]"), item, labels);
            }
        }
        Value::Object(map) => {
            let _ = writeln!(out, "{pad}{key}:");
            for (k, v) in map {
                member(out, &deeper, k, v, labels);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// One array element: an object's inline members on its line, the rest below.
fn element(out: &mut String, pad: &str, name: &str, v: &Value, labels: Option<&HashLabels>) {
    let Some(map) = v.as_object() else {
        return member(out, pad, name, v, labels);
    };
    let inline: Vec<String> = map
        .iter()
        .filter(|(_, v)| is_inline(v))
        .map(|(k, v)| format!("{k}={}", scalar(v, labels)))
        .collect();
    let _ = writeln!(out, "{pad}{name}: {}", inline.join(" "));
    let deeper = format!("{pad}  ");
    for (k, v) in map.iter().filter(|(_, v)| !is_inline(v)) {
        member(out, &deeper, k, v, labels);
    }
}

/// Everything a reader needs to understand why a case did not pass.
pub fn explain(r: &CaseResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "summary: {}", r.summary);
    // Each clause with its sentence and the docs section that explains it.
    for (i, clause) in r.spec.iter().enumerate() {
        let label = if i == 0 { "spec:" } else { "" };
        let _ = writeln!(out, "{label:<9}{}", crate::spec_links::describe(clause));
    }
    if let Some(expected) = r.expected {
        let _ = writeln!(
            out,
            "baseline: expected {}, got {}",
            expected.as_str(),
            r.raw
        );
    }
    if let Some(m) = &r.detail.message {
        let kind = r
            .detail
            .error_kind
            .map(|k| format!("[{k}] "))
            .unwrap_or_default();
        let _ = writeln!(out, "error:   {kind}{m}");
    }
    out.push_str("call:    ");
    out.push_str(&params(&r.tool, &r.params));
    if !r.detail.result.is_empty() {
        out.push_str("result mismatches:\n");
        for m in &r.detail.result {
            let _ = writeln!(out, "  {m}");
        }
        if let Some(doc) = &r.result {
            let pretty = serde_json::to_string_pretty(doc).unwrap_or_default();
            out.push_str("result received:\n");
            out.push_str(&indent(&pretty, "  "));
        }
    }
    if !r.detail.files.is_empty() {
        out.push_str("files:\n");
        out.push_str(&indent(&tree_diff(&r.detail.files), "  "));
    }
    if !r.detail.outside.is_empty() {
        out.push_str("WROTE OUTSIDE THE WORKSPACE (changes next to it):\n");
        out.push_str(&indent(&tree_diff(&r.detail.outside), "  "));
    }
    if !r.stderr.trim().is_empty() {
        out.push_str("stderr:\n");
        out.push_str(&indent(r.stderr.trim_end(), "  "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(
            visible("a \nb\t\r\nc"),
            "a·\nb→␍\nc\n\\ No newline at end of file\n"
        );
        assert_eq!(visible("\u{feff}x\n"), "<BOM>x\n");
        assert_eq!(visible("\0\n"), "␀\n");
        assert_eq!(visible(""), "");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_escaped() {
        let shown = visible_bytes(b"ok \xff\xfe \n");
        let mut lines = shown.lines();
        assert!(
            lines
                .next()
                .is_some_and(|l| l.starts_with("<not UTF-8: 7 bytes")),
            "{shown}"
        );
        assert_eq!(lines.next(), Some("ok \\xFF\\xFE·"));
    }

    #[test]
    fn params_are_an_outline_with_labelled_hashes() {
        let given = "57f34f2aad981c5bb287145a5c6b2970908cec505631fefce3581abfcd579091";
        let other = "0".repeat(64);
        let call = serde_json::json!({"files": [{"docPath": "p.md", "originalSha256": given,
        "changes": [
            {"operation": "delete", "startLine": 2, "endLine": 3, "expectedOriginalLines": ["", "x "]},
            {"operation": "insert", "afterLine": 4, "newLines": ["More"], "expectedSha256": other}
        ]}]});
        let labels: HashLabels = [(given.to_owned(), "given file p.md".to_owned())].into();
        let shown = params_labelled("workspace_write_patch", &call, &labels);
        let want = format!(
            "workspace_write_patch
  files[0]: docPath=\"p.md\" originalSha256=\"{given}\" (sha256 of given file p.md)
    changes[0]: operation=\"delete\" startLine=2 endLine=3
      expectedOriginalLines: (2 line(s))
        │ 
        │ x·
    changes[1]: operation=\"insert\" afterLine=4 expectedSha256=\"{other}\" (matches no given file)
      newLines: (1 line(s))
        │ More
"
        );
        assert_eq!(shown, want);
    }

    #[test]
    fn diff_shows_the_trailing_space() {
        let d = file_diff(
            "a.txt",
            &Entry::File(b"x\n".to_vec(), None),
            &Entry::File(b"x \n".to_vec(), None),
        );
        assert!(d.contains("-x\n") && d.contains("+x·\n"), "{d}");
    }
}
