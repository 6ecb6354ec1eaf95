//! The workspace trash: where deleted and moved-away files go
//! (`.patchspec/trash/<transaction>/<path>`), and its bound.
//!
//! Every transaction that deletes files gets one folder, named
//! `<unix millis>-<random>-<bytes>` by the committer, so the folders sort
//! oldest first and each one's size is known without reading it. After each
//! commit that trashed something, [`prune`] removes whole folders, oldest
//! first, while the trash holds more than [`Bounds::max_bytes`] or a folder is
//! older than [`Bounds::max_age_ms`]; the folder of the commit that just ran
//! is always kept (docs/clarifications.md, C-commit-trash). Folders whose
//! name does not parse are not the engine's and are left alone; folders of
//! older engines (`<millis>-<random>`, no size) count as 0 bytes and age out.
//!
//! Cost: pruning lists the trash folder once and walks only the folders it
//! removes; [`list`] walks the whole trash.

use std::io;

use crate::commit::TRASH_DIR;
use crate::fs::{EntryKind, Fs};

/// How much the trash keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Folders older than this are removed (default: 7 days).
    pub max_age_ms: u128,
    /// Oldest folders are removed while the total is above this (default: 1 GiB).
    pub max_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_age_ms: 7 * 24 * 60 * 60 * 1000,
            max_bytes: 1 << 30,
        }
    }
}

/// One transaction's folder in the trash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrashEntry {
    /// The folder name (the transaction id).
    pub transaction: String,
    /// When it was made, Unix milliseconds.
    pub millis: u128,
    /// The bytes it holds, as recorded in its name (`None`: an older engine's folder).
    pub bytes: Option<u64>,
    /// The workspace paths of the files it holds, sorted.
    pub files: Vec<String>,
}

/// Parse `<millis>-<hex>[-<bytes>]`; `None` for a name the engine did not make.
fn parse_name(name: &str) -> Option<(u128, Option<u64>)> {
    let mut parts = name.split('-');
    let millis = parts.next()?.parse::<u128>().ok()?;
    let random = parts.next()?;
    if random.len() != 8 || !random.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = match parts.next() {
        Some(b) => Some(b.parse::<u64>().ok()?),
        None => None,
    };
    parts.next().is_none().then_some((millis, bytes))
}

/// The trash's folders, oldest first, with the files each holds.
pub fn list(fs: &dyn Fs) -> io::Result<Vec<TrashEntry>> {
    let mut out = Vec::new();
    for (name, millis, bytes) in folders(fs)? {
        let mut files = Vec::new();
        walk(fs, &format!("{TRASH_DIR}/{name}"), "", &mut files)?;
        files.sort();
        out.push(TrashEntry {
            transaction: name,
            millis,
            bytes,
            files,
        });
    }
    Ok(out)
}

fn folders(fs: &dyn Fs) -> io::Result<Vec<(String, u128, Option<u64>)>> {
    if fs.kind(TRASH_DIR)? != Some(EntryKind::Dir) {
        return Ok(Vec::new());
    }
    let mut out: Vec<(String, u128, Option<u64>)> = fs
        .list_dir(TRASH_DIR)?
        .into_iter()
        .filter(|(_, kind)| *kind == EntryKind::Dir)
        .filter_map(|(name, _)| parse_name(&name).map(|(m, b)| (name, m, b)))
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    Ok(out)
}

fn walk(fs: &dyn Fs, dir: &str, rel: &str, out: &mut Vec<String>) -> io::Result<()> {
    for (name, kind) in fs.list_dir(dir)? {
        let rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if kind == EntryKind::Dir {
            walk(fs, &format!("{dir}/{name}"), &rel, out)?;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

/// Remove `dir` and everything in it (symlinks are removed, not followed).
fn remove_tree(fs: &dyn Fs, dir: &str) -> io::Result<()> {
    for (name, kind) in fs.list_dir(dir)? {
        let path = format!("{dir}/{name}");
        if kind == EntryKind::Dir {
            remove_tree(fs, &path)?;
        } else {
            fs.remove_file(&path)?;
        }
    }
    fs.remove_dir(dir)
}

/// Remove trash folders beyond `bounds`, oldest first, never `keep` (the
/// folder of the commit that just ran); returns the folders removed.
pub fn prune(fs: &dyn Fs, keep: &str, bounds: Bounds, now_ms: u128) -> io::Result<Vec<String>> {
    let folders = folders(fs)?;
    let mut total: u64 = folders.iter().filter_map(|f| f.2).sum();
    let mut removed = Vec::new();
    for (name, millis, bytes) in folders {
        if name == keep {
            continue;
        }
        let too_old = now_ms.saturating_sub(millis) > bounds.max_age_ms;
        if !too_old && total <= bounds.max_bytes {
            continue;
        }
        remove_tree(fs, &format!("{TRASH_DIR}/{name}"))?;
        total = total.saturating_sub(bytes.unwrap_or(0));
        removed.push(name);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::RealFs;

    fn folder(root: &std::path::Path, name: &str, files: &[&str]) {
        for f in files {
            let p = root.join(TRASH_DIR).join(name).join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
    }

    #[test]
    fn names_parse_only_when_the_engine_made_them() {
        assert_eq!(
            parse_name("0001700000000000-0a1b2c3d-42"),
            Some((1_700_000_000_000, Some(42)))
        );
        assert_eq!(
            parse_name("1700000000000-0a1b2c3d"),
            Some((1_700_000_000_000, None))
        );
        for bad in [
            "notes",
            "1-2-3",
            "17-0a1b2c3d-x",
            "17-0a1b2c3d-1-2",
            "x-0a1b2c3d",
        ] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn prune_removes_the_oldest_until_within_size_and_the_too_old() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        folder(root, "0000000001000-00000001-600", &["a.txt", "d/b.txt"]);
        folder(root, "0000000002000-00000002-600", &["c.txt"]);
        folder(root, "0000000003000-00000003-600", &["e.txt"]);
        folder(root, "0000000004000-00000004-600", &["f.txt"]);
        folder(root, "not-ours", &["keep.txt"]);
        let fs = RealFs::open(root).unwrap();
        let bounds = Bounds {
            max_age_ms: 10_000,
            max_bytes: 1300,
        };
        // 2400 bytes: the two oldest go (1800, then 1200 ≤ 1300).
        let removed = prune(&fs, "0000000004000-00000004-600", bounds, 5_000).unwrap();
        assert_eq!(
            removed,
            ["0000000001000-00000001-600", "0000000002000-00000002-600"]
        );
        // Age: everything older than 10 s at t = 13.5 s goes, but not `keep`.
        let removed = prune(&fs, "0000000004000-00000004-600", bounds, 13_500).unwrap();
        assert_eq!(removed, ["0000000003000-00000003-600"]);
        let left = list(&fs).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].files, ["f.txt"]);
        assert!(root.join(TRASH_DIR).join("not-ours/keep.txt").exists());
    }
}
