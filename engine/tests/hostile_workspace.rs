//! A workspace is hostile (docs/security.md): a clone can carry any file,
//! the engine's private folder included. These tests plant journals and
//! private-folder shapes and check that the engine never acts on what it did
//! not write, that nothing planted bricks it, that reads write nothing, and
//! that writers of nested roots exclude each other and never leave a nested
//! workspace's dead commit to undo their work later.

use std::path::Path;

use patchspec_engine::commit::{commit, Change};
use patchspec_engine::dispatch::{call, Session, ToolCall, ToolOutcome};
use patchspec_engine::fs::{FaultFs, RealFs};
use patchspec_engine::journal::{self, Intent, Step};
use patchspec_engine::workspace;
use serde_json::{json, Value};

mod common;
use common::every_entry;

fn run(tool: &str, params: Value, root: &Path) -> ToolOutcome {
    let session = Session::default();
    call(&ToolCall {
        tool_name: tool,
        params: &params,
        workspace_root: root,
        session: &session,
    })
}

/// A cloned repository: a few files, a `.git` with a hook folder and a config.
fn clone() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (path, text) in [
        ("a.txt", "a\n"),
        ("notes.md", "my notes\n"),
        (".env", "API_KEY=secret\n"),
        ("src/x.txt", "x\n"),
        (".git/config", "[core]\n"),
        (".git/hooks/README", "hooks\n"),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Plant `.patchspec/txn/<name>/` with `files` (name, bytes).
fn plant(root: &Path, name: &str, files: &[(&str, &[u8])]) {
    let dir = root.join(patchspec_engine::layout::TXN_DIR).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, bytes) in files {
        std::fs::write(dir.join(file), bytes).unwrap();
    }
}

const NAME: &str = "1700000000000-0a1b2c3d-0";

/// The attacks of the threat model: an unsealed intent whose steps would
/// install a git hook, a git config, delete a file, overwrite `.env`.
/// What an attack plants beside its intent: file name and bytes.
type Planted = Vec<(&'static str, &'static [u8])>;

fn attacks() -> Vec<(&'static str, Value, Planted)> {
    vec![
        (
            "update installs a hook",
            json!({"version": 2, "transaction": NAME, "steps": [
                {"op": "update", "path": ".git/hooks/post-checkout", "temp": "nope", "pre": "payload.sh"}]}),
            vec![("renaming", b"")],
        ),
        (
            "delete installs a git config",
            json!({"version": 2, "transaction": NAME, "steps": [
                {"op": "delete", "path": ".git/config", "trash": "evilcfg"}]}),
            vec![("renaming", b"")],
        ),
        (
            "create deletes a file",
            json!({"version": 2, "transaction": NAME, "steps": [
                {"op": "create", "path": "notes.md", "temp": "nope"}]}),
            vec![("renaming", b"")],
        ),
        (
            "derived names, forged seal",
            json!({"version": 2, "transaction": NAME, "seal": "0".repeat(64), "steps": [
                {"op": "update", "path": ".env", "temp": ".env.0123456789abcdef.apply-patch.tmp",
                 "pre": format!(".patchspec/txn/{NAME}/pre-0")}]}),
            vec![("renaming", b""), ("pre-0", b"API_KEY=attacker\n")],
        ),
        (
            "the old, unsealed format",
            json!({"version": 1, "transaction": NAME, "steps": [
                {"op": "create", "path": "a.txt", "temp": "nope"}]}),
            vec![("renaming", b"")],
        ),
    ]
}

#[test]
fn a_planted_journal_is_never_executed_by_any_entry() {
    for (what, intent, extra) in attacks() {
        let dir = clone();
        let root = dir.path();
        std::fs::write(root.join("payload.sh"), "#!/bin/sh\necho pwned\n").unwrap();
        std::fs::write(root.join("evilcfg"), "[core]\nfsmonitor = evil\n").unwrap();
        let mut files: Vec<(&str, &[u8])> = extra.clone();
        let bytes = serde_json::to_vec(&intent).unwrap();
        files.push(("intent", &bytes));
        plant(root, NAME, &files);
        let before = every_entry(root);
        // Every read-only entry: nothing changes, not even in .patchspec.
        for (tool, params) in [
            ("workspace.read_file", json!({"path": "a.txt"})),
            ("read_file", json!({"relativePath": "a.txt"})),
            ("grep_file", json!({"pattern": "a"})),
        ] {
            if !cfg!(feature = "ide") && tool != "workspace.read_file" {
                continue;
            }
            let out = run(tool, params, root);
            assert!(out.success, "{what}: {tool}: {}", out.result);
            assert_eq!(every_entry(root), before, "{what}: {tool} wrote");
        }
        // A write: only its own file changes.
        let out = run(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: src/x.txt\n@@\n-x\n+y\n*** End Patch\n"}),
            root,
        );
        assert!(out.success, "{what}: {}", out.result);
        let mut after = every_entry(root);
        assert_eq!(after.remove("src/x.txt"), Some(b"y\n".to_vec()), "{what}");
        let mut expected = before.clone();
        expected.remove("src/x.txt");
        assert_eq!(
            after, expected,
            "{what}: the write touched what the journal names"
        );
        // Recovery reports it and leaves it; --discard removes it, and only it.
        let done = workspace::recover(root, false).unwrap();
        assert_eq!(done.journal.foreign.len(), 1, "{what}: {done:?}");
        assert_eq!(done.journal.rolled_back, 0, "{what}");
        assert!(root
            .join(patchspec_engine::layout::TXN_DIR)
            .join(NAME)
            .join("intent")
            .exists());
        let done = workspace::recover(root, true).unwrap();
        assert_eq!(done.discarded.len(), 1, "{what}: {done:?}");
        assert!(!root.join(".patchspec/txn").exists(), "{what}");
        for kept in ["payload.sh", "evilcfg", "notes.md", ".env", ".git/config"] {
            assert!(root.join(kept).exists(), "{what}: {kept}");
        }
        assert!(!root.join(".git/hooks/post-checkout").exists(), "{what}");
    }
}

/// A genuine journal of this engine, copied into another workspace (or
/// replayed after the folder was made anew, as a checkout would), is not
/// proven there: the seal binds the workspace's path and the folder's inode.
#[test]
fn a_genuine_journal_replayed_elsewhere_is_not_proven() {
    let origin = clone();
    let fs = RealFs::open(origin.path()).unwrap();
    let dying = FaultFs::dying(&fs, |op| op == patchspec_engine::fs::FsOp::Rename, 0);
    let changes = vec![Change::Write {
        path: "a.txt".into(),
        content: b"b\n".to_vec().into(),
        before: Some(std::sync::Arc::new(b"a\n".to_vec())),
        mode: None,
    }];
    assert!(commit(&dying, &changes).is_err());
    let txn = origin.path().join(patchspec_engine::layout::TXN_DIR);
    let name = std::fs::read_dir(&txn)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let name = name.to_string_lossy().into_owned();
    assert!(matches!(
        journal::prove(&fs, &name),
        Ok(journal::Proven::Interrupted(_))
    ));
    // The same bytes in another workspace.
    let other = clone();
    let copy = other
        .path()
        .join(patchspec_engine::layout::TXN_DIR)
        .join(&name);
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(txn.join(&name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    let other_fs = RealFs::open(other.path()).unwrap();
    let why = journal::prove(&other_fs, &name).unwrap_err();
    assert!(why.contains("seal"), "{why}");
    // The same workspace, the folder made anew (new inode).
    let moved = txn.join("moved");
    std::fs::rename(txn.join(&name), &moved).unwrap();
    std::fs::create_dir(txn.join(&name)).unwrap();
    for entry in std::fs::read_dir(&moved).unwrap() {
        let entry = entry.unwrap();
        std::fs::rename(entry.path(), txn.join(&name).join(entry.file_name())).unwrap();
    }
    std::fs::remove_dir(&moved).unwrap();
    assert!(journal::prove(&fs, &name).unwrap_err().contains("seal"));
    // Without the key nothing is proven.
    let unsealed = RealFs::open_unsealed(origin.path()).unwrap();
    assert!(journal::prove(&unsealed, &name)
        .unwrap_err()
        .contains("key"));
}

/// A sealed intent (the engine's own key) whose names are not the ones the
/// committer derives is refused too: the seal is not the only check.
#[test]
fn a_sealed_intent_with_names_the_committer_would_not_make_is_not_proven() {
    let dir = clone();
    let fs = RealFs::open(dir.path()).unwrap();
    for (i, step) in [
        Step::Update {
            path: "a.txt".into(),
            temp: "notes.md".into(),
            pre: format!("{}/{NAME}/pre-0", patchspec_engine::layout::TXN_DIR),
        },
        Step::Update {
            path: "a.txt".into(),
            temp: "a.txt.0123456789abcdef.apply-patch.tmp".into(),
            pre: "payload.sh".into(),
        },
        Step::Delete {
            path: ".git/config".into(),
            trash: "evilcfg".into(),
        },
        Step::Create {
            path: "../outside".into(),
            temp: "../outside.0123456789abcdef.apply-patch.tmp".into(),
        },
        Step::CreateDir {
            path: ".patchspec/trash".into(),
        },
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("17000000000{i:02}-0a1b2c3d-0");
        let intent = Intent::new(&name, vec![step]);
        journal::write_intent(&fs, &intent, &mut Vec::new()).unwrap();
        let why = journal::prove(&fs, &name).unwrap_err();
        assert!(why.contains("step 0"), "{why}");
    }
    let before = every_entry(dir.path());
    let done = journal::recover(&fs).unwrap();
    assert_eq!(done.foreign.len(), 5);
    assert_eq!(every_entry(dir.path()), before);
}

/// Nothing planted in the private folder bricks the engine: recovery never
/// fails on it, reads and writes go on, and `recover --discard` clears it.
#[test]
fn nothing_planted_bricks_the_workspace() {
    type Shape = fn(&Path);
    let shapes: Vec<(&str, Shape)> = vec![
        ("a subfolder in the txn folder", |r| {
            plant(r, NAME, &[("intent", b"{}")]);
            std::fs::create_dir(
                r.join(patchspec_engine::layout::TXN_DIR)
                    .join(NAME)
                    .join("sub"),
            )
            .unwrap();
        }),
        ("intent a folder", |r| {
            plant(r, NAME, &[]);
            std::fs::create_dir(
                r.join(patchspec_engine::layout::TXN_DIR)
                    .join(NAME)
                    .join("intent"),
            )
            .unwrap();
        }),
        ("intent a symlink to /dev/zero", |r| {
            plant(r, NAME, &[]);
            std::os::unix::fs::symlink(
                "/dev/zero",
                r.join(patchspec_engine::layout::TXN_DIR)
                    .join(NAME)
                    .join("intent"),
            )
            .unwrap();
        }),
        ("intent a FIFO", |r| {
            plant(r, NAME, &[]);
            let fifo = r
                .join(patchspec_engine::layout::TXN_DIR)
                .join(NAME)
                .join("intent");
            let ok = std::process::Command::new("mkfifo").arg(&fifo).status();
            if !ok.is_ok_and(|s| s.success()) {
                std::fs::write(fifo, b"not json").unwrap();
            }
        }),
        ("a step naming ../x", |r| {
            let intent = json!({"version": 2, "transaction": NAME, "steps": [
                {"op": "create", "path": "../x", "temp": "../x.0123456789abcdef.apply-patch.tmp"}]});
            plant(
                r,
                NAME,
                &[
                    ("intent", &serde_json::to_vec(&intent).unwrap()),
                    ("renaming", b""),
                ],
            );
        }),
        ("a file where txn should be", |r| {
            std::fs::create_dir_all(r.join(".patchspec")).unwrap();
            std::fs::write(r.join(patchspec_engine::layout::TXN_DIR), "x").unwrap();
        }),
        ("txn a symlink leading out", |r| {
            std::fs::create_dir_all(r.join(".patchspec")).unwrap();
            std::os::unix::fs::symlink("/tmp", r.join(patchspec_engine::layout::TXN_DIR)).unwrap();
        }),
        (".patchspec a file", |r| {
            std::fs::write(r.join(".patchspec"), "x").unwrap();
        }),
        (".patchspec a symlink leading out", |r| {
            std::os::unix::fs::symlink("/tmp", r.join(".patchspec")).unwrap();
        }),
        (".patchspec a symlink to a folder of the user's", |r| {
            std::fs::create_dir_all(r.join("inner/txn")).unwrap();
            std::os::unix::fs::symlink("inner", r.join(".patchspec")).unwrap();
        }),
        ("a file in txn", |r| {
            std::fs::create_dir_all(r.join(patchspec_engine::layout::TXN_DIR)).unwrap();
            std::fs::write(r.join(patchspec_engine::layout::TXN_DIR).join("stray"), "x").unwrap();
        }),
        ("2,000 planted folders", |r| {
            for i in 0..2000 {
                plant(
                    r,
                    &format!("17000000{i:05}-0a1b2c3d-0"),
                    &[("intent", b"{}")],
                );
            }
        }),
    ];
    for (what, shape) in shapes {
        let dir = clone();
        let root = dir.path();
        shape(root);
        let before = every_entry(root);
        let out = run("workspace.read_file", json!({"path": "a.txt"}), root);
        assert!(out.success, "{what}: {}", out.result);
        assert_eq!(every_entry(root), before, "{what}: the read wrote");
        let out = run(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"}),
            root,
        );
        let wrote = out.success;
        if root.join("inner").exists() {
            assert!(
                root.join("inner/txn").is_dir(),
                "{what}: the user's inner/txn was removed"
            );
        }
        let done = workspace::recover(root, true);
        assert!(done.is_ok(), "{what}: {done:?}");
        if !wrote {
            // Only where the private folder could not hold a journal.
            let out = run(
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"}),
                root,
            );
            assert!(out.success, "{what}: after --discard: {}", out.result);
        }
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "b\n",
            "{what}"
        );
        assert!(root.join("notes.md").exists() && root.join(".git/config").exists());
    }
}

/// Writers whose roots overlap exclude each other: while a writer holds
/// `ws`, a writer of `ws/sub` cannot take its locks, and the other way
/// round; writers of sibling roots do not wait for each other.
#[test]
fn writers_of_nested_roots_exclude_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    for sub in ["sub", "sub/deep", "other"] {
        std::fs::create_dir_all(ws.join(sub)).unwrap();
    }
    let outer = workspace::open_for_writing(ws).unwrap();
    let mut inner = RealFs::open(&ws.join("sub/deep")).unwrap();
    assert!(
        !inner.lock_ancestors(false).unwrap(),
        "the inner writer must wait"
    );
    drop(outer);
    assert!(inner.lock_ancestors(false).unwrap());
    assert_eq!(inner.lock_root(false).unwrap(), Some(true));
    // The outer root is now an ancestor the inner writer holds shared.
    let mut outer = RealFs::open(ws).unwrap();
    assert!(outer.lock_ancestors(false).unwrap());
    assert_eq!(
        outer.lock_root(false).unwrap(),
        Some(false),
        "the outer writer must wait"
    );
    // A sibling root shares the ancestors and has its own root.
    let mut sibling = RealFs::open(&ws.join("other")).unwrap();
    assert!(sibling.lock_ancestors(false).unwrap());
    assert_eq!(sibling.lock_root(false).unwrap(), Some(true));
}

/// An inner-root commit dies half done; an outer-root write into the inner
/// workspace first rolls the dead commit back (it would otherwise undo the
/// outer edit later) and, having planned against the half-done file, is
/// refused; sent again, it lands and stands through every later call.
#[test]
fn an_outer_writer_recovers_a_dead_inner_commit_before_writing_into_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/f1.txt"), "one\n").unwrap();
    std::fs::write(ws.join("sub/f2.txt"), "two\n").unwrap();
    // The inner commit dies after its first rename.
    let inner = RealFs::open(&ws.join("sub")).unwrap();
    let dying = FaultFs::dying(&inner, |op| op == patchspec_engine::fs::FsOp::Rename, 1);
    let changes = vec![
        Change::Write {
            path: "f1.txt".into(),
            content: b"ONE\n".to_vec().into(),
            before: Some(std::sync::Arc::new(b"one\n".to_vec())),
            mode: None,
        },
        Change::Write {
            path: "f2.txt".into(),
            content: b"TWO\n".to_vec().into(),
            before: Some(std::sync::Arc::new(b"two\n".to_vec())),
            mode: None,
        },
    ];
    assert!(commit(&dying, &changes).is_err());
    drop(inner);
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f1.txt")).unwrap(),
        "ONE\n"
    );
    // The outer write, planned against the half-done file: the inner
    // commit is rolled back and the write refused, nothing written.
    let out = run(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: sub/f1.txt\n@@\n-ONE\n+outer\n*** End Patch\n"}),
        ws,
    );
    assert!(!out.success, "{}", out.result);
    assert_eq!(
        out.result["error"]["details"]["step"], "recovering",
        "{}",
        out.result
    );
    assert!(!ws.join("sub/.patchspec/txn").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f1.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f2.txt")).unwrap(),
        "two\n"
    );
    // Sent again against the restored file, it lands.
    let out = run(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: sub/f1.txt\n@@\n-one\n+outer\n*** End Patch\n"}),
        ws,
    );
    assert!(out.success, "{}", out.result);
    // A read and a write at the inner root leave the outer edit alone.
    let read = run(
        "workspace.read_file",
        json!({"path": "f1.txt"}),
        &ws.join("sub"),
    );
    assert!(read.success);
    let write = run(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: f2.txt\n@@\n-two\n+inner\n*** End Patch\n"}),
        &ws.join("sub"),
    );
    assert!(write.success, "{}", write.result);
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f1.txt")).unwrap(),
        "outer\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f2.txt")).unwrap(),
        "inner\n"
    );
}

/// The other way round: an outer-root commit dies half done naming a file
/// of the inner workspace; an inner-root writer refuses (it may not write
/// outside its root to roll the outer commit back) and says how to recover.
#[test]
fn an_inner_writer_refuses_while_a_dead_outer_commit_names_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/f1.txt"), "one\n").unwrap();
    std::fs::write(ws.join("top.txt"), "top\n").unwrap();
    let outer = RealFs::open(ws).unwrap();
    let dying = FaultFs::dying(&outer, |op| op == patchspec_engine::fs::FsOp::Rename, 1);
    let changes = vec![
        Change::Write {
            path: "sub/f1.txt".into(),
            content: b"ONE\n".to_vec().into(),
            before: Some(std::sync::Arc::new(b"one\n".to_vec())),
            mode: None,
        },
        Change::Write {
            path: "top.txt".into(),
            content: b"TOP\n".to_vec().into(),
            before: Some(std::sync::Arc::new(b"top\n".to_vec())),
            mode: None,
        },
    ];
    assert!(commit(&dying, &changes).is_err());
    drop(outer);
    let e = workspace::open_for_writing(&ws.join("sub"))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("patchspec recover --root"), "{e}");
    workspace::recover(ws, false).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f1.txt")).unwrap(),
        "one\n"
    );
    assert!(workspace::open_for_writing(&ws.join("sub")).is_ok());
}
