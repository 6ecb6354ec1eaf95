//! The loose form of a line, the text its key is the hash of: whitespace
//! removed, look-alike characters folded to ASCII, accents and compatibility
//! forms decomposed, so lines that differ only invisibly fold alike.

use unicode_normalization::char::decompose_compatible;

use super::chars::{is_invisible, is_mark};

/// The ASCII text a look-alike character stands for.
pub(super) fn lookalike(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' | '\u{2035}'
        | '\u{02bc}' | '\u{ff07}' => "'",
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' | '\u{2036}'
        | '\u{ff02}' => "\"",
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => "-",
        '\u{2026}' => "...",
        '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => " ",
        '\u{2044}' | '\u{2215}' => "/",
        c if is_invisible(c) => "",
        _ => return None,
    })
}

/// Characters whose compatibility decomposition the loose key uses (Latin,
/// Greek and Cyrillic letters with marks, ligatures, full-width forms,
/// letter-like symbols).
fn decomposes(c: char) -> bool {
    matches!(c as u32,
        0x00a0..=0x024f | 0x0370..=0x04ff | 0x1e00..=0x1fff | 0x2100..=0x218f | 0xfb00..=0xfb4f | 0xff00..=0xffef)
}

/// Push the loose form of a character (see `loose_key`).
fn push_char(c: char, buf: &mut Vec<u8>) {
    if c.is_ascii() {
        if c > ' ' && c != '\u{7f}' {
            buf.push(c as u8);
        }
        return;
    }
    if let Some(s) = lookalike(c) {
        buf.extend(s.bytes().filter(|&b| b > b' '));
        return;
    }
    if is_mark(c) || c.is_whitespace() {
        return;
    }
    let u = c as u32;
    if (0xa0..0x250).contains(&u) {
        buf.extend_from_slice(latin_fold()[(u - 0xa0) as usize].as_bytes());
        return;
    }
    if decomposes(c) {
        let mut tmp = [0u8; 4];
        decompose_compatible(c, |d| {
            if d.is_ascii() {
                if d > ' ' {
                    buf.push(d as u8);
                }
            } else if let Some(s) = lookalike(d) {
                buf.extend(s.bytes().filter(|&b| b > b' '));
            } else if !(is_mark(d) || d.is_whitespace()) {
                buf.extend_from_slice(d.encode_utf8(&mut tmp).as_bytes());
            }
        });
        return;
    }
    let mut tmp = [0u8; 4];
    buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
}

/// The loose forms of U+00A0..U+024F (Latin-1 and Latin Extended), built
/// once from their compatibility decompositions.
fn latin_fold() -> &'static [String] {
    static TABLE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0xa0u32..0x250)
            .map(|u| {
                let mut out = String::new();
                if let Some(c) = char::from_u32(u) {
                    if let Some(s) = lookalike(c) {
                        out.extend(s.chars().filter(|&d| d > ' '));
                    } else if !c.is_whitespace() {
                        decompose_compatible(c, |d| {
                            if !(is_mark(d) || d.is_whitespace()) {
                                out.push(d);
                            }
                        });
                    }
                }
                out
            })
            .collect()
    })
}

/// The loose form of a line, into `buf`.
pub(super) fn compact_into(line: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    if line.is_ascii() {
        // Eight bytes at a time while none is whitespace, a control or DEL.
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let mut chunks = line.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            let low = w.wrapping_sub(0x21 * ONES) & !w & HIGH;
            let x = w ^ (0x7f * ONES);
            let del = x.wrapping_sub(ONES) & !x & HIGH;
            if low | del == 0 {
                buf.extend_from_slice(c);
            } else {
                buf.extend(c.iter().copied().filter(|&b| b > b' ' && b != 0x7f));
            }
        }
        buf.extend(
            chunks
                .remainder()
                .iter()
                .copied()
                .filter(|&b| b > b' ' && b != 0x7f),
        );
    } else {
        for chunk in line.utf8_chunks() {
            let text = chunk.valid();
            let bytes = text.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 {
                    if b > b' ' && b != 0x7f {
                        buf.push(b);
                    }
                    i += 1;
                } else if (0xe4..=0xed).contains(&b)
                    || (b == 0xe3 && bytes[i + 1..i + 3] != [0x80, 0x80])
                {
                    // U+3001..U+DFFF (kana, CJK ideographs, Yi, Hangul): no
                    // look-alike, mark, space or decomposition there (U+3000,
                    // the ideographic space, is a look-alike).
                    buf.extend_from_slice(&bytes[i..i + 3]);
                    i += 3;
                } else {
                    let c = text[i..].chars().next().unwrap_or(' ');
                    push_char(c, buf);
                    i += c.len_utf8();
                }
            }
            // Bytes that are not UTF-8 stay themselves (marked, so they
            // cannot collide with the text of a character).
            for &b in chunk.invalid() {
                buf.extend_from_slice(&[0xff, b]);
            }
        }
    }
    // A run of dashes is one dash: `--` written for `—` locates like it.
    if memchr::memchr(b'-', buf).is_some() {
        buf.dedup_by(|a, b| *a == b'-' && *b == b'-');
    }
}
