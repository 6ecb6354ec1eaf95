//! The one renderer of invisible characters: the visible form of a line in
//! the diagnosis (docs/diagnostics.md, "The visible form") and in the
//! runner's reports (docs/case-format.md, "Tooling"), each in its own marks
//! ([`VisibleStyle`]), so what the model and the reader see is made one way.

use super::chars::{is_invisible, is_mark};
use super::MAX_SHOWN_BYTES;

/// The marks a line is made visible with. Both show a trailing space as `·`,
/// a trailing tab as `→` and a carriage return as `␍`; they differ in what
/// else they mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VisibleStyle {
    /// The diagnosis's wire form, unambiguous (see `visible`): every tab
    /// `→`, a no-break space `⍽`, other invisible characters, combining marks
    /// and the marks themselves `⟨U+XXXX⟩`, a byte that is not UTF-8 `⟨0xFF⟩`.
    Diagnosis,
    /// The runner's reports, read as text in a diff: a tab that is not
    /// trailing stays a tab, another control character is its control picture
    /// (`␀`, DEL `␡`), every other character is itself, and a byte that is
    /// not UTF-8 is `\xNN`. Lines are shown whole.
    Report,
}

/// A line made visible: a trailing space is `·` (as is every space of a
/// line of only whitespace), a tab `→`, a carriage return `␍`, a
/// non-breaking space `⍽`; other invisible characters (Unicode spaces,
/// zero-width and format characters, controls) are `⟨U+XXXX⟩`; a byte that is
/// not UTF-8 is `⟨0xFF⟩`; a combining mark is `⟨U+0301⟩` (so NFC and NFD
/// differ visibly); and the mark characters themselves (`· → ␍ ⍽ ⟨ ⟩`),
/// when the text contains them, are written `⟨U+XXXX⟩` too, so the form is
/// unambiguous. Other characters, leading and inner spaces included, are
/// shown as they are. At most [`MAX_SHOWN_BYTES`] bytes of the line are
/// shown, around byte offset `focus` when the line is longer; a cut end is
/// `⟨…⟩`.
pub fn visible(line: &[u8], focus: usize) -> String {
    let (mut from, mut to) = (0, line.len());
    if line.len() > MAX_SHOWN_BYTES {
        from = focus
            .saturating_sub(MAX_SHOWN_BYTES / 3)
            .min(line.len() - MAX_SHOWN_BYTES);
        while from > 0 && line[from] & 0xc0 == 0x80 {
            from -= 1;
        }
        to = (from + MAX_SHOWN_BYTES).min(line.len());
        while to < line.len() && line[to] & 0xc0 == 0x80 {
            to += 1;
        }
    }
    render(line, from, to, VisibleStyle::Diagnosis)
}

/// A whole line (no line break in it) made visible in `style`, uncut.
pub fn visible_line(line: &[u8], style: VisibleStyle) -> String {
    render(line, 0, line.len(), style)
}

/// Bytes `from..to` of `line` (at character boundaries) in `style`; the
/// trailing whitespace is the line's, and a cut end is `⟨…⟩`.
fn render(line: &[u8], from: usize, to: usize, style: VisibleStyle) -> String {
    let trail_from = line
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push_str("⟨…⟩");
    }
    let mut at = from;
    for chunk in line[from..to].utf8_chunks() {
        for c in chunk.valid().chars() {
            let trailing = at >= trail_from;
            match style {
                VisibleStyle::Diagnosis => diagnosis_char(c, trailing, &mut out),
                VisibleStyle::Report => report_char(c, trailing, &mut out),
            }
            at += c.len_utf8();
        }
        for &b in chunk.invalid() {
            match style {
                VisibleStyle::Diagnosis => out.push_str(&format!("⟨0x{b:02X}⟩")),
                VisibleStyle::Report => out.push_str(&format!("\\x{b:02X}")),
            }
            at += 1;
        }
    }
    if to < line.len() {
        out.push_str("⟨…⟩");
    }
    out
}

fn diagnosis_char(c: char, trailing: bool, out: &mut String) {
    match c {
        ' ' if trailing => out.push('·'),
        '\t' => out.push('→'),
        '\r' => out.push('␍'),
        '\u{a0}' => out.push('⍽'),
        c if needs_code_point(c) => out.push_str(&format!("⟨U+{:04X}⟩", c as u32)),
        c => out.push(c),
    }
}

fn report_char(c: char, trailing: bool, out: &mut String) {
    match c {
        ' ' if trailing => out.push('·'),
        '\t' if trailing => out.push('→'),
        '\t' => out.push('\t'),
        '\r' => out.push('␍'),
        // The Unicode "control pictures" block mirrors C0: U+2400 + code.
        c if (c as u32) < 0x20 => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
        '\u{7f}' => out.push('␡'),
        c => out.push(c),
    }
}

/// Characters [`visible`] writes as a code point.
pub(super) fn needs_code_point(c: char) -> bool {
    matches!(c, '·' | '→' | '␍' | '⍽' | '⟨' | '⟩')
        || is_mark(c)
        || (c.is_whitespace() && c != ' ')
        || c.is_control()
        || is_invisible(c)
}
