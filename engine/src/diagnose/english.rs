//! The English of a diagnosis: the note on one pair of lines, and the hint
//! of a located or unlocated edit, kept together so the wording is reviewed
//! in one place (the wire says hints are unstable wording).

use unicode_normalization::UnicodeNormalization;

use super::classify::{ascii_ws, first_diff_byte};
use super::invisible::needs_code_point;
use super::keys::{loose_key, substantive};
use super::vote::Index;
use super::{visible, Cause, Diagnosis, MAX_CLASSIFY_BYTES, MAX_EXPECTED_LINES};

fn describe_char(c: char) -> String {
    let shown = match c {
        ' ' => "space".to_string(),
        '\t' => "tab".to_string(),
        '\r' => "CR".to_string(),
        c if needs_code_point(c) => "an invisible character".to_string(),
        c => format!("'{c}'"),
    };
    format!("{shown} (U+{:04X})", c as u32)
}

fn leading_ws(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches(ascii_ws).len()]
}

fn trailing_ws(s: &str) -> &str {
    let t = s.trim_end_matches(ascii_ws);
    &s[t.len()..]
}

fn describe_ws(ws: &str) -> String {
    if ws.is_empty() {
        return "none".into();
    }
    let tabs = ws.chars().filter(|&c| c == '\t').count();
    let spaces = ws.chars().count() - tabs;
    let mut parts = Vec::new();
    if tabs > 0 {
        parts.push(format!("{tabs} tab{}", if tabs == 1 { "" } else { "s" }));
    }
    if spaces > 0 {
        parts.push(format!(
            "{spaces} space{}",
            if spaces == 1 { "" } else { "s" }
        ));
    }
    parts.join(" + ")
}

/// The 1-based column (in characters) of the first difference.
fn first_diff_col(expected: &[u8], actual: &[u8]) -> usize {
    let b = first_diff_byte(expected, actual);
    String::from_utf8_lossy(&expected[..b]).chars().count() + 1
}

/// A sentence on the first difference of a pair, given its causes.
pub(super) fn note_for(expected: &[u8], actual: &[u8], causes: &[Cause]) -> String {
    if expected.len() > MAX_CLASSIFY_BYTES || actual.len() > MAX_CLASSIFY_BYTES {
        // Long lines: say it from the bytes, without decoding them whole.
        let trail = |s: &[u8]| {
            let s = s.strip_suffix(b"\r").unwrap_or(s);
            let n = s
                .iter()
                .rev()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            std::str::from_utf8(&s[s.len() - n..]).map_or(String::new(), describe_ws)
        };
        return if causes.contains(&Cause::TrailingWhitespace) {
            format!(
                "trailing whitespace: the file has {}, the edit has {}",
                trail(actual),
                trail(expected)
            )
        } else {
            format!(
                "the text differs from byte {}",
                first_diff_byte(expected, actual) + 1
            )
        };
    }
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let mut notes = Vec::new();
    for cause in causes {
        let n = match cause {
            Cause::LineEndings => {
                if e.ends_with('\r') && !a.ends_with('\r') {
                    "the edit's line ends with a carriage return (␍) the file's line does not have"
                        .to_string()
                } else {
                    "the file's line ends with a carriage return (␍) the edit's line does not have"
                        .to_string()
                }
            }
            Cause::TrailingWhitespace => format!(
                "trailing whitespace: the file has {}, the edit has {}",
                describe_ws(trailing_ws(a.strip_suffix('\r').unwrap_or(&a))),
                describe_ws(trailing_ws(e.strip_suffix('\r').unwrap_or(&e)))
            ),
            Cause::Indentation => format!(
                "indentation: the file has {}, the edit has {}",
                describe_ws(leading_ws(&a)),
                describe_ws(leading_ws(&e))
            ),
            Cause::InnerWhitespace => {
                "whitespace inside the line differs (spacing between words)".to_string()
            }
            Cause::UnicodeLookalike => {
                let ec: Vec<char> = e.chars().collect();
                let ac: Vec<char> = a.chars().collect();
                let col = ec.iter().zip(&ac).take_while(|(x, y)| x == y).count();
                if e.nfc().eq(a.nfc()) {
                    format!(
                        "same text in a different Unicode normal form (NFC vs NFD) from column {}: the {} is {}",
                        col + 1,
                        if e.nfc().eq(e.chars()) { "file" } else { "edit" },
                        "decomposed (a letter followed by a combining mark)"
                    )
                } else {
                    match (ec.get(col), ac.get(col)) {
                        (Some(x), Some(y)) => format!(
                            "column {}: the edit has {}, the file has {}",
                            col + 1,
                            describe_char(*x),
                            describe_char(*y)
                        ),
                        (Some(x), None) => {
                            format!(
                                "column {}: the edit has {}, the file's line ends",
                                col + 1,
                                describe_char(*x)
                            )
                        }
                        (None, Some(y)) => {
                            format!(
                                "column {}: the file has {}, the edit's line ends",
                                col + 1,
                                describe_char(*y)
                            )
                        }
                        (None, None) => "look-alike characters differ".to_string(),
                    }
                }
            }
            Cause::ContentDiffers => {
                format!(
                    "the text differs from column {}",
                    first_diff_col(expected, actual)
                )
            }
            _ => continue,
        };
        notes.push(n);
    }
    notes.join("; ")
}

pub(super) fn span_text(from: Option<usize>, to: Option<usize>) -> String {
    match (from, to) {
        (Some(a), Some(b)) if b > a => format!("lines {a}–{b}"),
        (Some(a), _) => format!("line {a}"),
        _ => "the file".into(),
    }
}

/// The hint of `no_similar_region`: "check the path" only when no
/// substantive line of the edit is in the file at all, even loosely.
pub(super) fn no_similar_hint(index: &Index, expected: &[&[u8]], what: &str) -> String {
    let found = expected.iter().filter(|l| substantive(l)).find_map(|l| {
        let n = index.count(loose_key(l));
        (n > 0).then_some((l, n))
    });
    match found {
        None => format!(
            "no region of the file resembles {what}, even ignoring whitespace and look-alike characters: check the path, and re-read the file before writing the edit"
        ),
        Some((l, n)) => format!(
            "no region of the file has {what} together, even loosely, though some occur on their own (e.g. {:?}, {n} time{}): re-read the region you mean and copy it exactly, with context lines that occur only there",
            visible(l, 0),
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The hint sentence for a located diagnosis; `first_note` gives the note
/// of the walk's first row with a cause (empty when there is none).
pub(super) fn hint_for(d: &Diagnosis, first_note: impl Fn(Cause) -> String) -> String {
    let region = span_text(d.line, d.end_line);
    let lines_with = |c: Cause| -> String {
        let mut ls: Vec<String> = d
            .rows
            .iter()
            .filter(|r| r.causes.contains(&c))
            .filter_map(|r| r.line.map(|l| l.to_string()))
            .collect();
        ls.dedup();
        if ls.len() > 6 {
            ls.truncate(6);
            ls.push("…".into());
        }
        ls.join(", ")
    };
    let at = |c: Cause| {
        let l = lines_with(c);
        if l.is_empty() {
            String::new()
        } else {
            format!(" (file line {l})")
        }
    };
    let what = match d.cause() {
        Cause::LineNumberPrefix => format!(
            "the hunk's lines start with line numbers copied from a read output; remove the prefixes and send the lines as they are in the file ({region})"
        ),
        Cause::LiteralNewlineEscape => format!(
            "a hunk line contains a literal \\n where the file has separate lines{}; write each line of the file on its own hunk line",
            at(Cause::LiteralNewlineEscape)
        ),
        Cause::LineEndings => format!(
            "{}{}; send the lines without carriage returns (the engine matches LF hunks to CRLF files)",
            first_note(Cause::LineEndings),
            at(Cause::LineEndings)
        ),
        Cause::UnicodeLookalike => format!(
            "look-alike characters differ{}: {}; copy the characters exactly",
            at(Cause::UnicodeLookalike),
            first_note(Cause::UnicodeLookalike)
        ),
        Cause::Indentation => format!(
            "{}{}; copy the indentation exactly",
            first_note(Cause::Indentation),
            at(Cause::Indentation)
        ),
        Cause::TrailingWhitespace => format!(
            "{}{}; copy the lines exactly, trailing whitespace included",
            first_note(Cause::TrailingWhitespace),
            at(Cause::TrailingWhitespace)
        ),
        Cause::InnerWhitespace => format!(
            "the spacing inside a line differs{}; copy the lines exactly",
            at(Cause::InnerWhitespace)
        ),
        Cause::BlankLineMissing => format!(
            "the file has a blank line{} that the hunk leaves out; add it as a context line (a single space)",
            at(Cause::BlankLineMissing)
        ),
        Cause::BlankLineExtra => match lines_with(Cause::BlankLineExtra) {
            // An `extra` row past the file's end has no file line: the
            // phantom empty line a `split("\n")` makes after the last one.
            l if l.is_empty() => format!(
                "the hunk has a blank line past the end of the file (after {}, the file's last line); remove it",
                span_text(d.end_line.or(d.line), None)
            ),
            l => format!("the hunk has a blank line that is not in the file near file line {l}; remove it"),
        },
        Cause::NotAtEndOfFile => format!(
            "the lines match at {region}, but the hunk is anchored at the end of the file (*** End of File or a no-newline marker) and they are not its last lines; drop the anchor"
        ),
        Cause::FinalNewline => format!(
            "the lines are at {region}, but the hunk says the old last line has no final newline (\\ No newline at end of file) and the file ends with one; drop the marker from the old side"
        ),
        _ => format!(
            "the nearest region ({region}) differs in content{}; re-read those lines and copy them exactly",
            at(Cause::ContentDiffers)
        ),
    };
    let mut hint = what;
    if d.causes.len() > 1 {
        hint.push_str(&format!(
            ". Also: {}",
            d.causes[1..]
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if d.truncated {
        hint.push_str(&format!(
            ". Only the hunk's first {MAX_EXPECTED_LINES} old lines were compared"
        ));
    }
    hint
}
