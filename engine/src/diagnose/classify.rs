//! Which classes of difference (line endings, look-alikes, trailing,
//! leading or inner whitespace) a pair of lines shows: each class has a
//! normaliser, and a pair is in every class whose normaliser it needs.

use unicode_normalization::UnicodeNormalization;

use super::fold::lookalike;
use super::{Cause, MAX_CLASSIFY_BYTES};

/// The look-alike fold used to classify: NFKC, then quotes, dashes and
/// spaces to ASCII, zero-width characters removed.
fn fold_lookalikes(s: &str, dash_runs: bool) -> String {
    if s.is_ascii() {
        // NFKC leaves ASCII as it is and no ASCII character is a look-alike:
        // only the dash runs can change. Most lines of source are ASCII, and
        // this skips the Unicode machinery for every one of them.
        return if dash_runs {
            let mut out = String::with_capacity(s.len());
            for c in s.chars() {
                if !(c == '-' && out.ends_with('-')) {
                    out.push(c);
                }
            }
            out
        } else {
            s.to_owned()
        };
    }
    fold_lookalikes_unicode(s, dash_runs)
}

/// [`fold_lookalikes`] through NFKC and the look-alike table: the whole
/// definition, for any text.
fn fold_lookalikes_unicode(s: &str, dash_runs: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.nfkc() {
        match lookalike(c) {
            Some(r) => out.push_str(r),
            None => out.push(c),
        }
        if dash_runs && out.ends_with("--") {
            out.pop();
        }
    }
    out
}

/// A typographic dash (en, em, figure dash, horizontal bar, minus sign…):
/// when either line of a pair has one, a run of dashes folds to one hyphen,
/// so `--` or `-` written for `—` is a look-alike (C-diag-causes).
fn has_typographic_dash(s: &str) -> bool {
    s.chars()
        .any(|c| c != '-' && !c.is_ascii() && lookalike(c) == Some("-"))
}

pub(super) fn ascii_ws(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// The normalisers a pair of lines is compared under; each erases one class.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Norm {
    Cr,
    Look,
    Trail,
    Indent,
    Inner,
}

const NORMS: [Norm; 5] = [Norm::Cr, Norm::Look, Norm::Trail, Norm::Indent, Norm::Inner];

fn normalise(s: &str, skip: Option<Norm>, dash_runs: bool) -> String {
    let on = |n: Norm| skip != Some(n);
    let mut t: String = if on(Norm::Cr) {
        s.strip_suffix('\r').unwrap_or(s).to_string()
    } else {
        s.to_string()
    };
    if on(Norm::Look) {
        t = fold_lookalikes(&t, dash_runs);
    }
    // Split into leading whitespace, middle, trailing whitespace.
    let lead_end = t.len() - t.trim_start_matches(ascii_ws).len();
    let trail_start = lead_end + t[lead_end..].trim_end_matches(ascii_ws).len();
    let lead = &t[..lead_end];
    let mid = &t[lead_end..trail_start];
    let trail = &t[trail_start..];
    let mut out = String::with_capacity(t.len());
    if !on(Norm::Indent) {
        out.push_str(lead);
    }
    if on(Norm::Inner) {
        // Spacing inside the line, added, removed or changed: `foo(a,b)`
        // and `foo(a, b)` differ only by it.
        out.extend(mid.chars().filter(|&c| !ascii_ws(c)));
    } else {
        out.push_str(mid);
    }
    if !on(Norm::Trail) {
        out.push_str(trail);
    }
    out
}

fn norm_cause(n: Norm) -> Cause {
    match n {
        Norm::Cr => Cause::LineEndings,
        Norm::Look => Cause::UnicodeLookalike,
        Norm::Trail => Cause::TrailingWhitespace,
        Norm::Indent => Cause::Indentation,
        Norm::Inner => Cause::InnerWhitespace,
    }
}

/// The causes that explain why `expected` (the edit's line) and `actual`
/// (the file's) differ: every class of difference whose normaliser is needed
/// for them to compare equal, or `[ContentDiffers]`.
pub(super) fn classify_pair(expected: &[u8], actual: &[u8]) -> Vec<Cause> {
    if expected.len() > MAX_CLASSIFY_BYTES || actual.len() > MAX_CLASSIFY_BYTES {
        let strip = |s: &[u8]| -> Vec<u8> {
            let s = s.strip_suffix(b"\r").unwrap_or(s);
            let end = s
                .iter()
                .rposition(|&b| b != b' ' && b != b'\t')
                .map_or(0, |i| i + 1);
            s[..end].to_vec()
        };
        return if strip(expected) == strip(actual) {
            vec![Cause::TrailingWhitespace]
        } else {
            vec![Cause::ContentDiffers]
        };
    }
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let dashes = has_typographic_dash(&e) || has_typographic_dash(&a);
    let norm = |s: &str, skip: Option<Norm>| normalise(s, skip, dashes);
    if norm(&e, None) != norm(&a, None) {
        return vec![Cause::ContentDiffers];
    }
    let mut causes: Vec<Cause> = NORMS
        .iter()
        .filter(|&&n| norm(&e, Some(n)) != norm(&a, Some(n)))
        .map(|&n| norm_cause(n))
        .collect();
    if causes.is_empty() {
        // Two normalisers erase the same difference; name what changes.
        causes = NORMS
            .iter()
            .filter(|&&n| {
                let only = |s: &str| norm(s, Some(n)) != norm(s, None);
                only(&e) || only(&a)
            })
            .map(|&n| norm_cause(n))
            .take(1)
            .collect();
    }
    if causes.is_empty() {
        causes.push(Cause::ContentDiffers);
    }
    causes
}

/// The first byte where two lines differ, at a character boundary.
pub(super) fn first_diff_byte(expected: &[u8], actual: &[u8]) -> usize {
    let mut i = expected
        .iter()
        .zip(actual)
        .take_while(|(x, y)| x == y)
        .count();
    while i > 0 && expected.get(i).is_some_and(|b| b & 0xc0 == 0x80) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{fold_lookalikes, fold_lookalikes_unicode};

    proptest! {
        /// The ASCII shortcut folds exactly as the definition does.
        #[test]
        fn ascii_shortcut_folds_as_the_definition(
            s in "[ -~\t]{0,40}|[-a ]{0,20}",
            dash_runs: bool,
        ) {
            prop_assert_eq!(fold_lookalikes(&s, dash_runs), fold_lookalikes_unicode(&s, dash_runs));
        }
    }

    #[test]
    fn ascii_dash_runs_fold_to_one_hyphen() {
        assert_eq!(fold_lookalikes("a---b--c-", true), "a-b-c-");
        assert_eq!(fold_lookalikes("a---b", false), "a---b");
    }
}
