//! The visible form of a line (docs/diagnostics.md, "The visible form"):
//! invisible characters made visible, unambiguously, so the model sees what
//! differs.

use super::fold::is_mark;
use super::MAX_SHOWN_BYTES;

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
    let trail_from = line
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
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
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push_str("⟨…⟩");
    }
    let mut at = from;
    for chunk in line[from..to].utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                ' ' if at >= trail_from => out.push('·'),
                '\t' => out.push('→'),
                '\r' => out.push('␍'),
                '\u{a0}' => out.push('⍽'),
                c if needs_code_point(c) => out.push_str(&format!("⟨U+{:04X}⟩", c as u32)),
                c => out.push(c),
            }
            at += c.len_utf8();
        }
        for &b in chunk.invalid() {
            out.push_str(&format!("⟨0x{b:02X}⟩"));
            at += 1;
        }
    }
    if to < line.len() {
        out.push_str("⟨…⟩");
    }
    out
}

/// Characters [`visible`] writes as a code point.
pub(super) fn needs_code_point(c: char) -> bool {
    matches!(c, '·' | '→' | '␍' | '⍽' | '⟨' | '⟩')
        || is_mark(c)
        || (c.is_whitespace() && c != ' ')
        || c.is_control()
        || is_invisible(c)
}

/// Zero-width and format characters that render as nothing.
pub(super) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}' | '\u{202a}'..='\u{202e}'
    )
}
