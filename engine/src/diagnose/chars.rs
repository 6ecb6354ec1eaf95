//! The character classes both the loose form ([`super::fold`]) and the
//! visible form ([`super::invisible`]) are made of, so the two agree on
//! what a combining mark and an invisible character are.

/// Combining marks dropped by the loose key (the diacritical-mark blocks).
pub(super) fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036f | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff | 0xfe20..=0xfe2f)
}

/// Zero-width and format characters that render as nothing.
pub(super) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{ad}' | '\u{202a}'..='\u{202e}'
    )
}
