//! Just enough Rust lexing to find the paths a file names: comments and
//! string literals blanked out (a path in a doc comment or a message is no
//! arrow), `use` trees expanded, and the `crate::`/`super::`/`self::` and
//! `patchspec_*::` paths in the code.

/// A path named at a line: its segments (`["super", "tools", "REGISTRY"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedPath {
    /// The 1-based line.
    pub line: usize,
    /// The segments, `crate`/`super`/`self` kept as written.
    pub segments: Vec<String>,
}

/// `text` with every comment and every string or character literal's
/// contents replaced by spaces (newlines kept, so lines still count).
pub fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // A raw string: r"…" or r#…#"…"#…#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
            while i < b.len() {
                if b[i] == '"' && (0..hashes).all(|h| b.get(i + 1 + h) == Some(&'#')) {
                    out.extend(std::iter::repeat_n(' ', hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' && i + 1 < b.len() {
                    out.push(' ');
                    i += 1;
                }
                out.push(blank(b[i]));
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || b.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{..}'); a lifetime has no
            // closing quote and is left alone.
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '\'' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (ident_char(b[i - 1]) || b[i - 1] == '$')
}

/// Every path `code` (from [`code_only`]) names that starts with `crate`,
/// `super`, `self` or an identifier starting `patchspec_`: the leaves of its
/// `use` trees, then the paths elsewhere in the code.
pub fn named_paths(code: &str) -> Vec<NamedPath> {
    let chars: Vec<char> = code.chars().collect();
    let line_of = {
        let mut starts = vec![0usize];
        starts.extend(
            chars
                .iter()
                .enumerate()
                .filter(|(_, &c)| c == '\n')
                .map(|(i, _)| i + 1),
        );
        move |i: usize| starts.partition_point(|&s| s <= i)
    };
    let mut out = Vec::new();
    let mut in_use = vec![false; chars.len()];
    // `use` declarations first: a tree may branch (`{a, b::c}`).
    let mut i = 0;
    while i + 3 < chars.len() {
        if word_at(&chars, i, "use") {
            let end = chars[i..]
                .iter()
                .position(|&c| c == ';')
                .map_or(chars.len(), |p| i + p);
            let tree: String = chars[i + 3..end].iter().collect();
            for leaf in expand_use_tree(&tree) {
                if interesting(&leaf) {
                    out.push(NamedPath {
                        line: line_of(i),
                        segments: leaf,
                    });
                }
            }
            in_use[i..end].iter_mut().for_each(|u| *u = true);
            i = end;
        } else {
            i += 1;
        }
    }
    // Then the paths written in the code.
    let mut i = 0;
    while i < chars.len() {
        if in_use[i] || !ident_char(chars[i]) || ident_before(&chars, i) {
            i += 1;
            continue;
        }
        let start = i;
        let mut segments = Vec::new();
        loop {
            let s = i;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
            segments.push(chars[s..i].iter().collect::<String>());
            if chars.get(i) == Some(&':')
                && chars.get(i + 1) == Some(&':')
                && chars.get(i + 2).is_some_and(|&c| ident_char(c))
            {
                i += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 && interesting(&segments) {
            out.push(NamedPath {
                line: line_of(start),
                segments,
            });
        }
    }
    out
}

fn word_at(chars: &[char], i: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    chars[i..].starts_with(&w)
        && !ident_before(chars, i)
        && chars.get(i + w.len()).is_some_and(|c| c.is_whitespace())
}

fn interesting(segments: &[String]) -> bool {
    segments.first().is_some_and(|s| {
        matches!(s.as_str(), "crate" | "super" | "self") || s.starts_with("patchspec_")
    })
}

/// The leaves of a `use` tree (`crate::{a::{b, c as d}, e::*}` → `crate::a::b`,
/// `crate::a::c`, `crate::e`), each as its segments; a leading `::` and
/// `as` renames are dropped, `self` in a group stands for the group's path.
pub fn expand_use_tree(tree: &str) -> Vec<Vec<String>> {
    let tokens = tokenize(tree);
    let mut out = Vec::new();
    let mut pos = 0;
    parse_tree(&tokens, &mut pos, &[], &mut out);
    out
}

fn tokenize(tree: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = tree.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if ident_char(c) {
            let s = i;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
            tokens.push(chars[s..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".into());
            i += 2;
        } else if matches!(c, '{' | '}' | ',' | '*') {
            tokens.push(c.to_string());
            i += 1;
        } else {
            i += 1;
        }
    }
    tokens
}

fn parse_tree(tokens: &[String], pos: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path: Vec<String> = prefix.to_vec();
    let mut grew = false;
    while let Some(t) = tokens.get(*pos) {
        match t.as_str() {
            "::" => *pos += 1,
            "{" => {
                *pos += 1;
                loop {
                    match tokens.get(*pos).map(String::as_str) {
                        None => return,
                        Some("}") => {
                            *pos += 1;
                            return;
                        }
                        Some(",") => *pos += 1,
                        Some(_) => parse_tree(tokens, pos, &path, out),
                    }
                }
            }
            "*" => {
                *pos += 1;
                out.push(path);
                return;
            }
            "," | "}" => break,
            "as" => {
                *pos += 2;
                break;
            }
            "self" if grew || !prefix.is_empty() => {
                *pos += 1;
                grew = true;
            }
            _ => {
                path.push(t.clone());
                grew = true;
                *pos += 1;
            }
        }
    }
    if grew {
        out.push(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(code: &str) -> Vec<String> {
        named_paths(&code_only(code))
            .into_iter()
            .map(|p| format!("{}:{}", p.line, p.segments.join("::")))
            .collect()
    }

    #[test]
    fn use_trees_expand_to_their_leaves() {
        let leaves: Vec<String> = expand_use_tree(" crate::{a::{b, c as d, self}, e::*, f}")
            .into_iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(
            leaves,
            [
                "crate::a::b",
                "crate::a::c",
                "crate::a",
                "crate::e",
                "crate::f"
            ]
        );
    }

    #[test]
    fn paths_in_comments_and_strings_are_not_arrows() {
        let code = "//! see [`crate::docs`]\nuse super::x::Y;\nfn f() { let s = \"crate::no\"; let c = '\"'; crate::z::g(); }\n/* crate::no */ pub(super) fn h<'a>(v: &'a str) { r#\"crate::no\"#; }\nuse std::io;\nuse patchspec_engine::hash;";
        assert_eq!(
            paths(code),
            ["2:super::x::Y", "6:patchspec_engine::hash", "3:crate::z::g"]
        );
    }
}
