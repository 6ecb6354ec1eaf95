//! docs/clarifications.md C-path-toctou: a directory swapped for a symlink
//! to a directory outside the workspace *between the path guard's check and
//! the write* makes the write fail, never escape.
//!
//! [`SwapFs`] wraps the real filesystem and, at the first operation that
//! would change the workspace (after every path was guarded and the plan
//! made), renames the directory `d` away and puts a symlink `d -> outside`
//! in its place. The write must then fail and the outside directory stay
//! exactly as it was — because all I/O goes through the handle held on the
//! workspace root, not because anything re-checks the path.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use patchspec_engine::dispatch::{call_with, Session, ToolCall};
use patchspec_engine::fs::{EntryKind, Fs, FsOp, RealFs};
use patchspec_engine::hash::sha256_hex;
use serde_json::{json, Value};

/// The real filesystem, with a symlink swapped in before the first mutation.
struct SwapFs {
    inner: RealFs,
    /// The directory (an absolute path) to replace.
    dir: PathBuf,
    /// What the symlink that replaces it points at.
    target: PathBuf,
    swapped: AtomicBool,
}

impl SwapFs {
    fn before(&self, op: FsOp) -> io::Result<()> {
        if op.is_mutation() && !self.swapped.swap(true, Ordering::SeqCst) {
            std::fs::rename(&self.dir, self.dir.with_extension("orig"))?;
            std::os::unix::fs::symlink(&self.target, &self.dir)?;
        }
        Ok(())
    }
}

impl Fs for SwapFs {
    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn kind(&self, path: &str) -> io::Result<Option<EntryKind>> {
        self.inner.kind(path)
    }
    fn read_link(&self, path: &str) -> io::Result<PathBuf> {
        self.inner.read_link(path)
    }
    fn list_dir(&self, path: &str) -> io::Result<Vec<(String, EntryKind)>> {
        self.inner.list_dir(path)
    }
    fn mode(&self, path: &str) -> io::Result<u32> {
        self.inner.mode(path)
    }
    fn write_new(&self, path: &str, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        self.before(FsOp::WriteNew)?;
        self.inner.write_new(path, bytes, mode)
    }
    fn hard_link(&self, original: &str, link: &str) -> io::Result<()> {
        self.before(FsOp::HardLink)?;
        self.inner.hard_link(original, link)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.before(FsOp::Rename)?;
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &str) -> io::Result<()> {
        self.before(FsOp::RemoveFile)?;
        self.inner.remove_file(path)
    }
    fn create_dir(&self, path: &str) -> io::Result<()> {
        self.before(FsOp::CreateDir)?;
        self.inner.create_dir(path)
    }
    fn remove_dir(&self, path: &str) -> io::Result<()> {
        self.before(FsOp::RemoveDir)?;
        self.inner.remove_dir(path)
    }
    fn sync_dir(&self, path: &str) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
}

/// Every entry below `dir`, with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    patchspec_snapshot::flat(dir, None)
}

/// The IDE-plugin tools, registered only with the engine's `ide` feature (on
/// by default): without it their calls are left out here.
fn registered(tool: &str) -> bool {
    cfg!(feature = "ide")
        || !["read_file", "grep_file", "apply_change", "call_chain"].contains(&tool)
}

/// Each writing tool, with params that write `d/a.txt` (content `a\n`).
fn writes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: d/a.txt\n@@\n-a\n+b\n*** End Patch\n"}),
        ),
        (
            "workspace_write_patch",
            json!({"files": [{
                "docPath": "d/a.txt",
                "originalSha256": sha256_hex(b"a\n"),
                "changes": [{"operation": "replace", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"], "newLines": ["b"]}]
            }]}),
        ),
        (
            "workspace_create_file",
            json!({"path": "d/a.txt", "content": "b\n", "overwrite": true}),
        ),
        (
            "apply_change",
            json!({"relativePath": "d/a.txt", "searchContent": "a", "replaceContent": "b"}),
        ),
    ]
}

#[test]
fn a_directory_swapped_for_an_outside_symlink_after_the_check_makes_the_write_fail() {
    for (tool, params) in writes().into_iter().filter(|(t, _)| registered(t)) {
        for absolute in [false, true] {
            let base = tempfile::tempdir().unwrap();
            let (root, outside) = (base.path().join("ws"), base.path().join("outside"));
            std::fs::create_dir_all(root.join("d")).unwrap();
            std::fs::create_dir(&outside).unwrap();
            std::fs::write(root.join("d/a.txt"), "a\n").unwrap();
            std::fs::write(outside.join("a.txt"), "a\n").unwrap();
            let outside_before = tree(&outside);
            let target = if absolute {
                outside.clone()
            } else {
                PathBuf::from("../outside")
            };
            let open = |r: &Path| -> io::Result<Box<dyn Fs>> {
                Ok(Box::new(SwapFs {
                    inner: RealFs::open(r)?,
                    dir: r.join("d"),
                    target: target.clone(),
                    swapped: AtomicBool::new(false),
                }))
            };
            let session = Session::default();
            let out = call_with(
                &ToolCall {
                    tool_name: tool,
                    params: &params,
                    workspace_root: &root,
                    session: &session,
                },
                &open,
            );
            let what = format!("{tool} (absolute target: {absolute})");
            assert!(root.join("d.orig").is_dir(), "{what}: the swap happened");
            assert!(root.join("d").is_symlink(), "{what}");
            assert!(!out.success, "{what}: {}", out.result);
            assert_eq!(tree(&outside), outside_before, "{what}: outside untouched");
            assert_eq!(
                std::fs::read(root.join("d.orig/a.txt")).unwrap(),
                b"a\n",
                "{what}: the real file untouched"
            );
            if tool == "apply_patch" {
                assert_eq!(out.result["error"]["kind"], "command_failed", "{what}");
                assert_eq!(
                    out.result["error"]["details"]["reason"], "io_error",
                    "{what}"
                );
            }
        }
    }
}
