//! Which files make up a corpus directory, and which of them are cases.
//!
//! One walk for both places that read a corpus directory: the loader
//! ([`crate::case::Corpus::load`]) and the build script that compiles the
//! repository's `corpus/` into the binary (`build.rs` includes this file with
//! `#[path]`), so the embedded corpus and the directory can never differ in
//! what they contain, nor in their content hash. Plain `std` only, for that
//! reason.

use std::path::{Path, PathBuf};

/// Every regular file under `root`, as paths relative to it, in [`Path`]
/// order (component by component, the order the content hash is taken in).
/// Top-level entries whose name starts with `.` (`.git`, editor state) are
/// left out; symbolic links are not followed.
pub fn files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if dir == root && entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if kind.is_file() {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
    Ok(())
}

/// Is this file (relative to the corpus root) a case: a `*.json` outside the
/// top-level `schema/` folder?
pub fn is_case_file(rel: &Path) -> bool {
    rel.extension().is_some_and(|e| e == "json") && !rel.starts_with("schema")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_json_files_outside_schema() {
        assert!(is_case_file(Path::new("apply_patch/a.json")));
        assert!(is_case_file(Path::new("top.json")));
        assert!(!is_case_file(Path::new("schema/case.schema.json")));
        assert!(!is_case_file(Path::new("VERSION")));
        assert!(!is_case_file(Path::new("CHANGELOG.md")));
        assert!(is_case_file(Path::new("apply_patch/schema/x.json")));
    }

    #[test]
    fn the_walk_skips_top_level_dot_entries_and_sorts_by_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for rel in [
            "a/b.json",
            "a-c.json",
            ".git/x.json",
            "d/.hidden.json",
            "VERSION",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "{}").expect("write");
        }
        let got = files(root).expect("walk");
        let want: Vec<PathBuf> = ["VERSION", "a/b.json", "a-c.json", "d/.hidden.json"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want, "Path order: `a/b.json` before `a-c.json`");
    }
}
