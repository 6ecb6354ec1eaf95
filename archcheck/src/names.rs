//! The files ARCHITECTURE.md names, read the way a person reads them.
//!
//! A name is a backticked path (`` `src/fs.rs` ``, `` `write_patch/` ``, a
//! brace list `` `mcp-ts-client.{sh,mjs}` ``) or a plain-text path with a
//! folder and an extension (docs/tools.md). It names every file whose path
//! ends with it. Inside one list item (a bullet and its continuation
//! lines), a bare file name is also read after each folder named earlier in
//! the item, and after each pair of them in order (`` `src/tools/tul/` … ``
//! `` `write_patch/` (`validate.rs` …) ``), so a list of a folder's files
//! need not repeat the folder. A folder names its `mod.rs`. A name with an extension or a `/` must name
//! something; a bare word without either (`` `engine` `` after
//! `` `benches/` ``) names a file only if it, or it with `.rs`, fits.

use std::collections::BTreeSet;

const EXTENSIONS: &[&str] = &[
    ".rs", ".py", ".sh", ".mjs", ".js", ".ts", ".md", ".toml", ".json", ".yml", ".yaml", ".html",
    ".lock", ".txt",
];

/// One name in the document.
#[derive(Debug, PartialEq, Eq)]
pub struct Name {
    /// The 1-based line it is on.
    pub line: usize,
    /// As written (brace lists expanded: one `Name` per member).
    pub text: String,
    /// The files it names.
    pub files: BTreeSet<String>,
}

/// Whether `text` must name something (an extension or a folder part).
pub fn must_exist(text: &str) -> bool {
    text.contains('/') || EXTENSIONS.iter().any(|e| text.ends_with(e))
}

/// Every name in `doc`, resolved against `files` (every tracked file).
pub fn names(doc: &str, files: &[String]) -> Vec<Name> {
    let dirs: BTreeSet<String> = files
        .iter()
        .flat_map(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (1..parts.len())
                .map(|k| format!("{}/", parts[..k].join("/")))
                .collect::<Vec<_>>()
        })
        .collect();
    let basename_count = |name: &str| {
        files
            .iter()
            .filter(|f| f.rsplit('/').next() == Some(name))
            .count()
    };
    let ends = |path: &str, tail: &str| path == tail || path.ends_with(&format!("/{tail}"));
    let mut out = Vec::new();
    let mut context: Vec<String> = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty()
            || trimmed.starts_with('#')
            || trimmed.starts_with("- ")
            || trimmed.starts_with("**")
        {
            context.clear();
        }
        for token in tokens(line) {
            for text in expand_braces(&token) {
                let mut tails = vec![text.clone()];
                if !text.contains('/') {
                    for (a, d) in context.iter().enumerate() {
                        tails.push(format!("{d}{text}"));
                        for e in &context[a + 1..] {
                            tails.push(format!("{d}{e}{text}"));
                        }
                    }
                }
                if !must_exist(&text) {
                    // A bare word alone names nothing: only after a folder.
                    tails = tails
                        .into_iter()
                        .filter(|t| t.contains('/'))
                        .flat_map(|t| [format!("{t}.rs"), t])
                        .collect();
                }
                let found: BTreeSet<String> = if text.ends_with('/') {
                    dirs.iter()
                        .filter(|d| tails.iter().any(|t| ends(d, t)))
                        .cloned()
                        .collect()
                } else {
                    files
                        .iter()
                        .filter(|f| {
                            tails.iter().any(|t| {
                                // A bare file name alone only when it is the only file so named.
                                ends(f, t) && (t.contains('/') || basename_count(t) == 1)
                            })
                        })
                        .cloned()
                        .collect()
                };
                if text.ends_with('/') && !found.is_empty() {
                    context.push(text.clone());
                }
                // A folder names its module file too.
                let found: BTreeSet<String> = match text.ends_with('/') {
                    true => found
                        .into_iter()
                        .flat_map(|d| {
                            let root = format!("{d}mod.rs");
                            let module = files.contains(&root).then_some(root);
                            std::iter::once(d).chain(module)
                        })
                        .collect(),
                    false => found,
                };
                if must_exist(&text) || !found.is_empty() {
                    out.push(Name {
                        line: i + 1,
                        text,
                        files: found,
                    });
                }
            }
        }
    }
    out
}

/// The candidate names of a line: backticked spans without spaces, and
/// plain-text words that have a folder and an extension.
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = line.split('`').collect();
    for (k, part) in parts.iter().enumerate() {
        let quoted = k % 2 == 1 && k + 1 < parts.len();
        if quoted {
            let t = part.trim_start_matches("./");
            // Hidden paths are names only in the tracked folders (not
            // `.patchspec/`, the engine's private folder in a workspace).
            let hidden_ok = [".ci/", ".github/", ".cargo/", ".clusterfuzzlite/"]
                .iter()
                .any(|h| t.starts_with(h));
            let path_like = !t.is_empty()
                && t.chars()
                    .all(|c| c.is_alphanumeric() || "_-./{},".contains(c))
                && (!t.starts_with('.') || hidden_ok)
                && !t.starts_with('/')
                && !t.contains("..");
            if path_like {
                out.push(t.to_owned());
            }
        } else {
            for word in part.split_whitespace() {
                let w = word
                    .trim_matches(|c: char| "(),;:\"'".contains(c))
                    .trim_end_matches('.');
                if w.contains('/')
                    && !w.contains("://")
                    && EXTENSIONS.iter().any(|e| w.ends_with(e))
                {
                    out.push(w.to_owned());
                }
            }
        }
    }
    out
}

/// `a.{sh,py}` → `a.sh`, `a.py`; anything else as it is.
fn expand_braces(token: &str) -> Vec<String> {
    match (token.find('{'), token.find('}')) {
        (Some(open), Some(close)) if open < close => token[open + 1..close]
            .split(',')
            .map(|m| format!("{}{m}{}", &token[..open], &token[close + 1..]))
            .collect(),
        _ => vec![token.to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<String> {
        [
            "engine/src/tools/tul/apply_patch.rs",
            "engine/src/tools/tul/write_patch/validate.rs",
            "engine/src/tools/tul/write_patch/tests.rs",
            "engine/src/matching/tests.rs",
            "engine/tests/apply_patch.rs",
            "benches/benches/engine.rs",
            "scripts/mcp-ts-client.sh",
            "scripts/mcp-ts-client.mjs",
            "docs/tools.md",
        ]
        .map(String::from)
        .to_vec()
    }

    fn named(doc: &str) -> Vec<(String, Vec<String>)> {
        names(doc, &files())
            .into_iter()
            .map(|n| (n.text, n.files.into_iter().collect()))
            .collect()
    }

    #[test]
    fn a_folder_named_earlier_in_an_item_reads_before_a_bare_name() {
        let doc = "- `src/tools/tul/` — `apply_patch.rs`, `write_patch/` (`validate.rs`, `tests.rs`)\n  and docs/tools.md.\n- `tests.rs`";
        let n = named(doc);
        assert_eq!(n[1].1, ["engine/src/tools/tul/apply_patch.rs"]);
        assert_eq!(n[3].1, ["engine/src/tools/tul/write_patch/validate.rs"]);
        assert_eq!(n[4].1, ["engine/src/tools/tul/write_patch/tests.rs"]);
        assert_eq!(n[5], ("docs/tools.md".into(), vec!["docs/tools.md".into()]));
        // A new item forgets the folders; a bare name two files share names neither.
        assert_eq!(n[6], ("tests.rs".into(), vec![]));
    }

    #[test]
    fn brace_lists_and_bare_words_after_a_folder() {
        let n = named(
            "- `benches/` (`engine`, `nothing`), `scripts/mcp-ts-client.{sh,mjs}`, `gone.rs`",
        );
        assert_eq!(n[1].1, ["benches/benches/engine.rs"]);
        assert_eq!(n[2].1, ["scripts/mcp-ts-client.sh"]);
        assert_eq!(n[3].1, ["scripts/mcp-ts-client.mjs"]);
        assert_eq!(n[4], ("gone.rs".into(), vec![]));
        assert_eq!(n.len(), 5, "`nothing` is no name: {n:?}");
    }
}
