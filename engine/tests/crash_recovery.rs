//! Crash recovery through every tool: a writing tool's process "dies" at
//! each filesystem step of its call ([`FaultFs::dying`]: that step and every
//! later one fail, so no rollback runs); then a reading tool's call changes
//! nothing at all (a read writes nothing, not even a recovery), and the next
//! writing tool's call — each tool in turn, through `dispatch::call`, the
//! production entry — must first recover it: the visible tree is then
//! exactly the pre-state or exactly the post-state, with no temp file and no
//! journal left. Also: two writers serialize on the workspace lock, and a
//! FIFO swapped in for a file is refused, never waited on.

use std::collections::BTreeMap;
use std::path::Path;

use patchspec_engine::dispatch::{call, Session, ToolCall, ToolOutcome};
use patchspec_engine::fs::{FaultFs, Fs, RealFs};
use patchspec_engine::journal;
use patchspec_engine::layout::is_temp_name;
use serde_json::{json, Value};

mod common;
use common::{call_on, every_entry};

/// Every visible entry (the engine's `.patchspec/` left out), with its bytes.
fn visible(root: &Path) -> BTreeMap<String, Vec<u8>> {
    patchspec_snapshot::flat(root, Some(patchspec_engine::layout::PRIVATE_DIR))
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    std::fs::write(dir.path().join("from.txt"), "move me\n").unwrap();
    std::fs::create_dir(dir.path().join("p")).unwrap();
    std::fs::write(
        dir.path().join("p/A.java"),
        "package p;\nclass A {\n  void f() { g(); }\n  void g() {}\n}\n",
    )
    .unwrap();
    dir
}

/// The IDE-plugin tools, registered only with the engine's `ide` feature (on
/// by default): without it their calls are left out here.
fn registered(tool: &str) -> bool {
    cfg!(feature = "ide")
        || !["read_file", "grep_file", "apply_change", "call_chain"].contains(&tool)
}

/// The writing tools, with params that change several files where the tool can.
fn writes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Delete File: gone.txt\n*** Update File: from.txt\n*** Move to: p/to.txt\n@@\n-move me\n+moved\n*** Add File: new.txt\n+new\n*** End Patch\n"}),
        ),
        ("workspace_write_patch", common::write_patch_two_files()),
        (
            "workspace_create_file",
            json!({"path": "n/e/w.txt", "content": "x\n"}),
        ),
        (
            "apply_change",
            json!({"relativePath": "a.txt", "searchContent": "a", "replaceContent": "b"}),
        ),
    ]
}

/// A call of each tool that reaches the workspace (used as "the next call").
fn any_call(i: usize) -> (&'static str, Value) {
    let all = [
        (
            "apply_change",
            json!({"relativePath": "p/A.java", "searchContent": "nothing here", "replaceContent": "x"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: p/A.java\n@@\n-no such line\n+x\n*** End Patch\n"}),
        ),
        (
            "workspace_create_file",
            json!({"path": "p/A.java", "content": "x"}),
        ),
        (
            "workspace_write_patch",
            json!({"files": [{"docPath": "p/A.java", "originalSha256": "0".repeat(64), "changes": []}]}),
        ),
    ];
    let all: Vec<_> = all.into_iter().filter(|(t, _)| registered(t)).collect();
    all[i % all.len()].clone()
}

/// The `i`-th of the reading tools' calls (cycling).
fn any_read(i: usize) -> (&'static str, Value) {
    let all = [
        ("read_file", json!({"relativePath": "p/A.java"})),
        ("grep_file", json!({"pattern": "class"})),
        ("call_chain", json!({"method": "p.A.f"})),
        ("workspace.read_file", json!({"path": "p/A.java"})),
    ];
    let all: Vec<_> = all.into_iter().filter(|(t, _)| registered(t)).collect();
    all[i % all.len()].clone()
}

fn run(tool: &str, params: &Value, root: &Path, fs: Option<&dyn Fs>) -> ToolOutcome {
    match fs {
        None => {
            let session = Session::default();
            call(&ToolCall {
                tool_name: tool,
                params,
                workspace_root: root,
                session: &session,
            })
        }
        Some(fs) => call_on(fs, root, tool, params),
    }
}

#[test]
fn a_tool_killed_at_any_step_is_recovered_by_the_next_call_of_any_tool() {
    let mut next = 0;
    for (tool, params) in writes().into_iter().filter(|(t, _)| registered(t)) {
        let (steps, post) = {
            let dir = workspace();
            let real = RealFs::open(dir.path()).unwrap();
            let counting = FaultFs::new(&real, |_| true, None);
            let out = run(tool, &params, dir.path(), Some(&counting));
            assert!(out.success, "{tool}: {}", out.result);
            (counting.count(), visible(dir.path()))
        };
        let mut saw_pre = 0;
        let mut saw_post = 0;
        for k in 0..steps {
            let dir = workspace();
            let pre = visible(dir.path());
            let real = RealFs::open(dir.path()).unwrap();
            let dying = FaultFs::dying(&real, |_| true, k);
            let _ = run(tool, &params, dir.path(), Some(&dying));
            // A read first: it must change nothing, the journal included.
            let (read_tool, read_params) = any_read(next);
            let dead = every_entry(dir.path());
            let _ = run(read_tool, &read_params, dir.path(), None);
            assert_eq!(
                every_entry(dir.path()),
                dead,
                "{tool} died at step {k}; the read {read_tool} wrote"
            );
            // The next writing call, through the production entry.
            let (next_tool, next_params) = any_call(next);
            next += 1;
            let _ = run(next_tool, &next_params, dir.path(), None);
            let after = visible(dir.path());
            let what = format!(
                "{tool} died at step {k} ({:?}); next: {next_tool}",
                dying.log().last()
            );
            assert!(after.keys().all(|p| !is_temp_name(p)), "{what}: {after:?}");
            assert!(
                !journal::pending(&real).unwrap(),
                "{what}: a journal is left: {:?}",
                journal::recover(&real).map(|r| r.foreign)
            );
            // Folders included: the ones create_file makes for a new file's
            // parents are commit steps, rolled back with the file.
            if after == pre {
                saw_pre += 1;
            } else if after == post {
                saw_post += 1;
            } else {
                panic!("{what}: a mixed tree: {after:?}");
            }
        }
        assert!(
            saw_pre > 0 && saw_post > 0,
            "{tool}: {saw_pre} pre, {saw_post} post"
        );
    }
}

#[test]
fn two_writers_on_one_workspace_run_one_after_the_other() {
    // Two threads, each an apply_patch editing its own line of one file,
    // with the stale check of the original content: exactly one succeeds,
    // the other is refused as stale, and the file holds the winner's edit.
    for _ in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let original = "1\n2\n3\n4\n";
        std::fs::write(dir.path().join("f.txt"), original).unwrap();
        let sha = patchspec_engine::hash::sha256_hex(original.as_bytes());
        let root = dir.path().to_path_buf();
        let results: Vec<ToolOutcome> = std::thread::scope(|s| {
            let handles: Vec<_> = [("1", "one"), ("4", "four")]
                .into_iter()
                .map(|(line, new)| {
                    let root = root.clone();
                    let sha = sha.clone();
                    s.spawn(move || {
                        let params = json!({
                            "patch": format!("*** Begin Patch\n*** Update File: f.txt\n@@\n-{line}\n+{new}\n*** End Patch\n"),
                            "expectedSha256ByPath": {"f.txt": sha},
                        });
                        run("apply_patch", &params, &root, None)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ok: Vec<bool> = results.iter().map(|r| r.success).collect();
        assert_eq!(ok.iter().filter(|o| **o).count(), 1, "{results:?}");
        let loser = results.iter().find(|r| !r.success).unwrap();
        assert_eq!(
            loser.result["error"]["kind"], "stale_file",
            "{}",
            loser.result
        );
        let text = std::fs::read_to_string(dir.path().join("f.txt")).unwrap();
        assert!(
            text == "one\n2\n3\n4\n" || text == "1\n2\n3\nfour\n",
            "{text}"
        );
    }
}

#[cfg(feature = "ide")]
#[test]
fn a_fifo_where_a_file_was_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.txt");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo is not available; skipped");
        return;
    }
    let fs = RealFs::open(dir.path()).unwrap();
    // Without O_NONBLOCK this open would wait forever for a writer.
    let e = fs.read("pipe.txt").unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let out = run(
        "read_file",
        &json!({"relativePath": "pipe.txt"}),
        dir.path(),
        None,
    );
    assert!(!out.success, "{}", out.result);
}
