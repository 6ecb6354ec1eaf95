//! The generators' view of a workspace: a tree of [`Node`]s by normalised
//! path, and the two lookups they need to cut hunks and batches from the
//! files they name ([`lookup`] for an envelope path, [`lookup_doc`] for a
//! `docPath`, case-insensitive as C-wp-doc-path says).
//!
//! These only shape inputs: a path they resolve differently from the engine
//! makes a generated edit less likely to match, never a wrong verdict. The
//! oracles' models (oracles/, crate patchspec-oracles) and the runner judge with their own
//! code.

use std::collections::BTreeMap;

/// One entry of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A regular file: bytes and permission bits (`0o7777` part only).
    File(Vec<u8>, u32),
    /// A directory.
    Dir,
}

/// A workspace: normalised relative path → entry; the root is implicit.
pub type Tree = BTreeMap<String, Node>;

/// The lexical form of a workspace-relative path (`.` and empty segments
/// dropped, `..` folded), or `None` for a path the guard refuses: empty,
/// NUL, absolute, a drive, a backslash, or `..` above the root.
pub fn normalise(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if raw.trim().is_empty() || raw.contains('\0') || raw.starts_with('/') || drive {
        return None;
    }
    if raw.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in raw.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The entry an envelope path names, if any.
pub fn lookup<'t>(tree: &'t Tree, raw: &str) -> Option<&'t Node> {
    tree.get(&normalise(raw)?)
}

/// The bytes of the file a `docPath` names: exactly, else the one file equal
/// to it case-insensitively (none when there are several).
pub fn lookup_doc<'t>(tree: &'t Tree, doc: &str) -> Option<&'t [u8]> {
    let exact = normalise(doc)?;
    if let Some(Node::File(b, _)) = tree.get(&exact) {
        return Some(b);
    }
    let lower = exact.to_lowercase();
    let mut found = tree.iter().filter_map(|(p, n)| match n {
        Node::File(b, _) if p.to_lowercase() == lower => Some(b.as_slice()),
        _ => None,
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// A file's lines as text (endings, one `\r` before `\n`, and a leading BOM
/// left out; bytes that are not UTF-8 replaced).
pub fn line_texts(bytes: &[u8]) -> Vec<String> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if body.is_empty() {
        return Vec::new();
    }
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    body.split(|&b| b == b'\n')
        .map(|l| String::from_utf8_lossy(l.strip_suffix(b"\r").unwrap_or(l)).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fold_lexically_and_refusals_resolve_to_nothing() {
        assert_eq!(normalise("./a//b/../c").as_deref(), Some("a/c"));
        for bad in ["", " ", "/etc", "C:x", "a\\b", "../x", "a/../..", "a\0"] {
            assert_eq!(normalise(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn doc_paths_fall_back_to_one_case_insensitive_match() {
        let mut tree = Tree::new();
        tree.insert("A.txt".into(), Node::File(b"x".to_vec(), 0o644));
        assert_eq!(lookup_doc(&tree, "a.txt"), Some(&b"x"[..]));
        tree.insert("a.TXT".into(), Node::File(b"y".to_vec(), 0o644));
        assert_eq!(lookup_doc(&tree, "a.txt"), None);
        assert_eq!(lookup_doc(&tree, "A.txt"), Some(&b"x"[..]));
    }

    #[test]
    fn lines_leave_out_endings_and_the_bom() {
        assert_eq!(line_texts(b"\xEF\xBB\xBFa\r\nb\nc"), ["a", "b", "c"]);
        assert_eq!(line_texts(b"a\n"), ["a"]);
        assert!(line_texts(b"").is_empty());
        assert_eq!(line_texts(b"\n"), [""]);
    }
}
