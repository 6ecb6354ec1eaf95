//! Workspace-relative paths (`a/b.txt`: `/`-separated, as cases, tool calls
//! and snapshots name them) and the runner's one way to join them: a name
//! onto a relative folder ([`join`], as the engine's private layout joins
//! them), a relative path onto a root on disk ([`under`]).
//!
//! Neither checks its input: a case's paths are checked when the corpus is
//! loaded (`case.rs`), and an executor's tree is read through the snapshot
//! walker, never through these paths.

use std::path::{Path, PathBuf};

/// `name` in the workspace-relative folder `dir` (`""`: the root).
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The workspace-relative path `rel` under `root` on disk, as
/// [`Path::join`] makes it: an absolute `rel` stands for itself, `..` is
/// kept, `""` is `root` with a trailing separator, and a backslash is a
/// character of a name.
pub fn under(root: &Path, rel: &str) -> PathBuf {
    root.join(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_puts_a_slash_between_a_folder_and_a_name() {
        assert_eq!(join("", "a.txt"), "a.txt");
        assert_eq!(join("d/e", "a.txt"), "d/e/a.txt");
        assert_eq!(join("d", ".."), "d/..");
        assert_eq!(join("", ".."), "..");
        assert_eq!(join("d", "/abs"), "d//abs");
        assert_eq!(join("d", ""), "d/");
        assert_eq!(join("", ""), "");
        assert_eq!(join("d\\e", "f\\g"), "d\\e/f\\g");
    }

    #[test]
    fn under_joins_as_path_join_does() {
        let root = Path::new("/run/ws");
        let on_disk = |rel: &str| {
            under(root, rel)
                .into_os_string()
                .into_string()
                .unwrap_or_default()
        };
        assert_eq!(on_disk("a/b.txt"), "/run/ws/a/b.txt");
        assert_eq!(on_disk("../outside"), "/run/ws/../outside");
        assert_eq!(on_disk("/etc/passwd"), "/etc/passwd");
        assert_eq!(on_disk(""), "/run/ws/");
        assert_eq!(on_disk("a\\b"), "/run/ws/a\\b");
        assert_eq!(under(root, "a\\b").components().count(), 4);
    }
}
