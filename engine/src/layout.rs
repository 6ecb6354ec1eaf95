//! Where the engine's own files live in a workspace, and how a path is
//! put together: the private folder and its parts (journal, trash, lock),
//! the names of staged temp files, and the one `/`-join of a
//! workspace-relative path. The one home of these names: the committer,
//! the journal, the trash, the writer lock and the tools read them here.

/// The private folder of the engine inside a workspace.
pub const PRIVATE_DIR: &str = ".patchspec";

/// Where the transaction folders live.
pub const TXN_DIR: &str = ".patchspec/txn";

/// Where deleted files go, one folder per transaction.
pub const TRASH_DIR: &str = ".patchspec/trash";
/// The writer lock's file, where the filesystem cannot lock the root
/// directory itself (NFS).
pub const LOCK_FILE: &str = ".patchspec/lock";

/// The longest file name, in bytes, that Linux, macOS and the BSDs take.
pub const NAME_MAX: usize = 255;

/// The name of a sibling temp file for `path`: `<path>.<rand>.apply-patch.tmp`,
/// except that the file name part of `path` is cut (at a character boundary)
/// so that the temp file's name stays within [`NAME_MAX`] bytes. Without the
/// cut, any name longer than 222 bytes could not be staged, hence not be
/// created or updated at all (docs/clarifications.md, C-commit-temp-name).
pub fn temp_name(path: &str) -> String {
    let suffix = format!(".{:016x}.apply-patch.tmp", fastrand::u64(..));
    let name = file_name_of(path);
    let dir = &path[..path.len() - name.len()];
    let mut keep = name.len().min(NAME_MAX - suffix.len());
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{dir}{}{suffix}", &name[..keep])
}

/// True when `name` is a staged temp file of this engine: it ends in
/// `.<16 lowercase hex digits>.apply-patch.tmp`, exactly what [`temp_name`]
/// makes (a user's `notes.apply-patch.tmp` is not one).
pub fn is_temp_name(name: &str) -> bool {
    let Some(stem) = file_name_of(name).strip_suffix(".apply-patch.tmp") else {
        return false;
    };
    let Some(dot) = stem.len().checked_sub(17) else {
        return false;
    };
    stem.as_bytes()[dot] == b'.'
        && stem.as_bytes()[dot + 1..]
            .iter()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Directory names that are build output or dependency caches: never entered
/// by the IDE tools' workspace walk, at any depth (C-ide-walk), nor by the
/// similar-path hints ([`crate::hints`]). Here, not in `ide`, because the
/// hints need it when the `ide` feature is off.
pub const SKIPPED_DIRS: &[&str] = &[
    "target",
    "build",
    "out",
    "dist",
    "node_modules",
    "__pycache__",
];

/// `name` inside the workspace-relative folder `dir` (`""`: the root).
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The parent directory of a workspace-relative path (`""` for the root).
pub fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[..i],
        None => "",
    }
}

/// The last component of a workspace-relative path.
pub fn file_name_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers_split_parent_and_name() {
        assert_eq!(parent_of("a/b/c.txt"), "a/b");
        assert_eq!(parent_of("c.txt"), "");
        assert_eq!(file_name_of("a/b/c.txt"), "c.txt");
    }
}
