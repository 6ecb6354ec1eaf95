//! Readable renderings shared by the human and JUnit reports: a case's call,
//! its result mismatches, and unified diffs of files with invisible
//! characters made visible.
//!
//! Visible forms: a trailing space is `·`, a trailing tab `→`, a carriage
//! return `␍`, a byte order mark `<BOM>`, other control characters their
//! Unicode "control picture" (`␀`…), and a last line without a newline is
//! followed by `\ No newline at end of file`. Content that is not UTF-8 is
//! shown as its size and SHA-256.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};
use similar::TextDiff;

use crate::case::hex;
use crate::event::CaseResult;
use crate::workspace::{Entry, TreeDiff};

/// Text with its invisible characters made visible, each line ending in `\n`.
pub fn visible(text: &str) -> String {
    let mut out = String::new();
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            out.push_str("<BOM>");
            rest
        }
        None => text,
    };
    let mut lines = text.split_inclusive('\n').peekable();
    if text.is_empty() {
        return out;
    }
    while let Some(line) = lines.next() {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, true),
            None => (line, false),
        };
        let (body, cr) = match body.strip_suffix('\r') {
            Some(b) => (b, true),
            None => (body, false),
        };
        let trimmed = body.trim_end_matches([' ', '\t']);
        for c in trimmed.chars() {
            out.push(picture(c));
        }
        for c in body[trimmed.len()..].chars() {
            out.push(if c == ' ' { '·' } else { '→' });
        }
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

fn picture(c: char) -> char {
    match c {
        '\t' => '\t',
        '\r' => '␍',
        c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
        '\u{7f}' => '␡',
        c => c,
    }
}

/// Bytes as visible text, or a size-and-hash line when not UTF-8.
pub fn visible_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => visible(text),
        Err(_) => format!(
            "<{} bytes, not UTF-8, sha256 {}>\n",
            bytes.len(),
            hex(&Sha256::digest(bytes))
        ),
    }
}

fn entry_text(entry: &Entry) -> String {
    match entry {
        Entry::File(bytes, None) => visible_bytes(bytes),
        Entry::File(bytes, Some(mode)) => format!("<mode {mode:03o}>\n{}", visible_bytes(bytes)),
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

/// The call's params: string members with newlines as text blocks, others as JSON.
pub fn params(tool: &str, params: &Value) -> String {
    let mut out = format!("{tool}\n");
    match params.as_object() {
        Some(map) => {
            for (k, v) in map {
                match v.as_str() {
                    Some(s) if s.contains('\n') => {
                        let _ = writeln!(out, "  {k}: |");
                        out.push_str(&indent(&visible(s), "    "));
                    }
                    _ => {
                        let _ = writeln!(
                            out,
                            "  {k}: {}",
                            serde_json::to_string(v).unwrap_or_default()
                        );
                    }
                }
            }
        }
        None => {
            let _ = writeln!(out, "  {params}");
        }
    }
    out
}

/// Everything a reader needs to understand why a case did not pass.
pub fn explain(r: &CaseResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "summary: {}", r.summary);
    let _ = writeln!(out, "spec:    {}", r.spec.join(", "));
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
    fn diff_shows_the_trailing_space() {
        let d = file_diff(
            "a.txt",
            &Entry::File(b"x\n".to_vec(), None),
            &Entry::File(b"x \n".to_vec(), None),
        );
        assert!(d.contains("-x\n") && d.contains("+x·\n"), "{d}");
    }
}
