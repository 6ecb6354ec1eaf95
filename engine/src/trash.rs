//! The workspace trash: where deleted and moved-away files go
//! (`.patchspec/trash/<transaction>/<path>`), and its bound.
//!
//! Every transaction that deletes files gets one folder, named
//! `<unix millis>-<random>-<bytes>-<tag>` by the committer, so the folders
//! sort oldest first and each one's size is known without reading it. After
//! each commit that trashed something, `prune` removes whole folders,
//! oldest first, while the trash holds more than [`Bounds::max_bytes`] or a
//! folder is older than [`Bounds::max_age_ms`]; the folder of the commit that
//! just ran is always kept (docs/clarifications.md, C-commit-trash).
//!
//! The trash is in the workspace, so a clone can plant folders there too
//! (docs/security.md): one dated in the future with a huge size would make
//! every real folder look old and too big. So `prune` counts and removes
//! only the folders it can prove are the engine's: the `<tag>` is the
//! name's tag under this user's key (`crate::seal::Seal::name_tag`).
//! Without a key, untagged names are taken (older engines made them), but
//! never one dated more than a day ahead. Every other folder is left alone
//! and counts for nothing; [`list`] shows them all.
//!
//! Cost: pruning lists the trash folder once and walks only the folders it
//! removes; [`list`] walks the whole trash.

use std::io;

use crate::fs::{EntryKind, Fs};
use crate::layout::TRASH_DIR;

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

/// How far ahead of the clock a folder's date may be before it cannot be
/// the engine's (clocks of machines sharing a workspace differ a little).
const FUTURE_SKEW_MS: u128 = 24 * 60 * 60 * 1000;

/// A trash folder's name, parsed: `<millis>-<hex>[-<bytes>[-<tag>]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Name {
    millis: u128,
    bytes: Option<u64>,
    /// The tag, and the part of the name it is of.
    tag: Option<(String, String)>,
}

/// Parse a trash folder's name; `None` for a name the engine did not make.
fn parse_name(name: &str) -> Option<Name> {
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
    let tag = match parts.next() {
        Some(t) if t.len() == 16 && t.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) => {
            Some((t.to_string(), name[..name.len() - 17].to_string()))
        }
        Some(_) => return None,
        None => None,
    };
    parts
        .next()
        .is_none()
        .then_some(Name { millis, bytes, tag })
}

/// True when a folder named `name` is provably the engine's here (the
/// module doc): its tag verifies, or, without a key, it is untagged and
/// not dated in the future.
fn is_own(fs: &dyn Fs, name: &Name, now_ms: u128) -> bool {
    match (fs.seal(), &name.tag) {
        (Some(seal), Some((tag, base))) => seal.name_tag(base) == *tag,
        (Some(_), None) | (None, Some(_)) => false,
        (None, None) => name.millis <= now_ms.saturating_add(FUTURE_SKEW_MS),
    }
}

/// The trash's folders, oldest first, with the files each holds.
pub fn list(fs: &dyn Fs) -> io::Result<Vec<TrashEntry>> {
    let mut out = Vec::new();
    for (name, parsed) in folders(fs)? {
        let mut files = Vec::new();
        walk(fs, &format!("{TRASH_DIR}/{name}"), "", &mut files)?;
        files.sort();
        out.push(TrashEntry {
            transaction: name,
            millis: parsed.millis,
            bytes: parsed.bytes,
            files,
        });
    }
    Ok(out)
}

fn folders(fs: &dyn Fs) -> io::Result<Vec<(String, Name)>> {
    if fs.kind(TRASH_DIR)? != Some(EntryKind::Dir) {
        return Ok(Vec::new());
    }
    let mut out: Vec<(String, Name)> = fs
        .list_dir(TRASH_DIR)?
        .into_iter()
        .filter(|(_, kind)| *kind == EntryKind::Dir)
        .filter_map(|(name, _)| parse_name(&name).map(|n| (name, n)))
        .collect();
    out.sort_by(|a, b| a.1.millis.cmp(&b.1.millis).then_with(|| a.0.cmp(&b.0)));
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

/// Remove the engine's trash folders beyond `bounds`, oldest first, never
/// `keep` (the folder of the commit that just ran); returns the folders
/// removed. Folders it cannot prove its own (the module doc) are neither
/// counted nor removed.
pub(crate) fn prune(
    fs: &dyn Fs,
    keep: &str,
    bounds: Bounds,
    now_ms: u128,
) -> io::Result<Vec<String>> {
    let folders: Vec<(String, Name)> = folders(fs)?
        .into_iter()
        .filter(|(_, name)| is_own(fs, name, now_ms))
        .collect();
    let mut total: u64 = folders
        .iter()
        .filter_map(|(_, n)| n.bytes)
        .fold(0, u64::saturating_add);
    let mut removed = Vec::new();
    for (name, parsed) in folders {
        if name == keep {
            continue;
        }
        let too_old = now_ms.saturating_sub(parsed.millis) > bounds.max_age_ms;
        if !too_old && total <= bounds.max_bytes {
            continue;
        }
        remove_tree(fs, &format!("{TRASH_DIR}/{name}"))?;
        total = total.saturating_sub(parsed.bytes.unwrap_or(0));
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
            Some(Name {
                millis: 1_700_000_000_000,
                bytes: Some(42),
                tag: None
            })
        );
        assert_eq!(
            parse_name("1700000000000-0a1b2c3d"),
            Some(Name {
                millis: 1_700_000_000_000,
                bytes: None,
                tag: None
            })
        );
        assert_eq!(
            parse_name("1700000000000-0a1b2c3d-42-0123456789abcdef").and_then(|n| n.tag),
            Some((
                "0123456789abcdef".to_string(),
                "1700000000000-0a1b2c3d-42".to_string()
            ))
        );
        for bad in [
            "notes",
            "1-2-3",
            "17-0a1b2c3d-x",
            "17-0a1b2c3d-1-2",
            "17-0a1b2c3d-1-0123456789ABCDEF",
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
        // Without a key, untagged names are the engine's (the rule for
        // trash that older engines left).
        let fs = RealFs::open_unsealed(root).unwrap();
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

    #[test]
    fn planted_folders_are_neither_counted_nor_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let fs = RealFs::open(root).unwrap();
        let seal = fs.seal().expect("tests run with a journal key").clone();
        let own = |base: &str| format!("{base}-{}", seal.name_tag(base));
        let (a, b) = (
            own("0000000001000-00000001-600"),
            own("0000000002000-00000002-600"),
        );
        folder(root, &a, &["a.txt"]);
        folder(root, &b, &["b.txt"]);
        // Planted: dated far ahead with a huge size, untagged and tagged
        // with a tag that is not this key's; and an untagged old one.
        folder(root, "9999999999999-aaaaaaaa-99999999999999", &["x"]);
        folder(
            root,
            "9999999999999-aaaaaaaa-99999999999999-0123456789abcdef",
            &["y"],
        );
        folder(root, "0000000000500-bbbbbbbb-99999999999999", &["z"]);
        let bounds = Bounds {
            max_age_ms: 10_000,
            max_bytes: 1300,
        };
        // 1200 bytes of the engine's own: within the bound, nothing goes.
        assert!(prune(&fs, &b, bounds, 5_000).unwrap().is_empty());
        // Age still works on the engine's own, and only on those.
        assert_eq!(prune(&fs, &b, bounds, 11_500).unwrap(), [a]);
        for planted in [
            "9999999999999-aaaaaaaa-99999999999999/x",
            "9999999999999-aaaaaaaa-99999999999999-0123456789abcdef/y",
            "0000000000500-bbbbbbbb-99999999999999/z",
        ] {
            assert!(root.join(TRASH_DIR).join(planted).exists(), "{planted}");
        }
        // Without a key, a folder dated more than a day ahead is not the
        // engine's either.
        let unsealed = RealFs::open_unsealed(root).unwrap();
        let far = prune(&unsealed, "", bounds, 20_000).unwrap();
        assert!(!far.iter().any(|f| f.starts_with("9999")), "{far:?}");
    }
}
