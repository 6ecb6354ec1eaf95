//! A panic inside any tool (a bug: the engine never panics on input) must
//! come back as that tool's own internal-error result, never take the
//! executor down. The panic is injected through the filesystem seam
//! ([`FaultFs::panicking`], handed to every tool by `dispatch::call_with`):
//! the first filesystem operation of each call panics. `get_patch_change`
//! reads no file: its panic comes from the store ([`PanickingStore`]).

use std::path::Path;
use std::sync::Arc;

use patchspec_engine::dispatch::{call_with, Session, ToolCall, ToolOutcome, SUPPORTED_TOOLS};
use patchspec_engine::fs::{FaultFs, Fs, RealFs};
use patchspec_engine::store::{
    PatchStore, Pending, PendingCommit, RecordedCall, StoreError, StoredBatch,
};
use serde_json::{json, Value};

/// Each tool, params that reach the filesystem, and what its internal error
/// looks like in its own vocabulary (a JSON pointer and the value there).
fn cases() -> Vec<(&'static str, Value, &'static str, Value)> {
    vec![
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n"}),
            "/error/details/reason",
            json!("internal_error"),
        ),
        (
            "workspace_write_patch",
            json!({"files": [{
                "docPath": "a.txt",
                "originalSha256": patchspec_engine::hash::sha256_hex(b"a\n"),
                "changes": [{"operation": "replace", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"], "newLines": ["b"]}]
            }]}),
            "/errors/0/code",
            json!("internal_error"),
        ),
        (
            "workspace_create_file",
            json!({"path": "new.txt", "content": "x\n"}),
            "/errorCode",
            json!("UnhandledException"),
        ),
        (
            "get_patch_change",
            json!({"batchId": BATCH}),
            "/error/kind",
            json!("internal_error"),
        ),
        (
            "workspace.read_file",
            json!({"path": "a.txt"}),
            "/errorCode",
            json!("INTERNAL_ERROR"),
        ),
        (
            "read_file",
            json!({"relativePath": "a.txt"}),
            "/error/kind",
            json!("internal_error"),
        ),
        (
            "grep_file",
            json!({"pattern": "a"}),
            "/error/kind",
            json!("internal_error"),
        ),
        (
            "apply_change",
            json!({"relativePath": "a.txt", "searchContent": "a", "replaceContent": "b"}),
            "/error/kind",
            json!("internal_error"),
        ),
        (
            "call_chain",
            json!({"method": "p.A.f"}),
            "/error/kind",
            json!("internal_error"),
        ),
    ]
}

const BATCH: &str = "batch-0123456789abcdef0123456789abcdef";

/// A store that holds one empty batch, or that panics on every read.
#[derive(Debug)]
struct PanickingStore {
    panics: bool,
}

impl PatchStore for PanickingStore {
    fn record(&self, _: &RecordedCall<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    fn begin(&self, _: &PendingCommit<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    fn pending(&self, _: &str) -> Result<Vec<Pending>, StoreError> {
        Ok(Vec::new())
    }

    fn settle(&self, _: &Pending, _: bool) -> Result<(), StoreError> {
        Ok(())
    }

    fn batch(&self, batch_id: &str) -> Result<Option<StoredBatch>, StoreError> {
        assert!(!self.panics, "injected panic");
        Ok(Some(StoredBatch {
            batch_id: batch_id.into(),
            batch_key: None,
            batch_label: None,
            call_id: "c".into(),
            recorded_at_ms: 0,
            applied: true,
            files: Vec::new(),
        }))
    }
}

/// The IDE-plugin tools, registered only with the engine's `ide` feature (on
/// by default): without it their calls are left out here.
fn registered(tool: &str) -> bool {
    cfg!(feature = "ide")
        || !["read_file", "grep_file", "apply_change", "call_chain"].contains(&tool)
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    std::fs::create_dir(dir.path().join("p")).unwrap();
    std::fs::write(
        dir.path().join("p/A.java"),
        "package p;\nclass A {\n  void f() { g(); }\n  void g() {}\n}\n",
    )
    .unwrap();
    dir
}

fn call(tool: &str, params: &Value, root: &Path, panic_at: Option<usize>) -> ToolOutcome {
    let real = RealFs::open(root).unwrap();
    let open = |_: &Path| -> std::io::Result<Box<dyn Fs + '_>> {
        Ok(match panic_at {
            Some(k) => Box::new(FaultFs::panicking(&real, |_| true, k)),
            None => Box::new(FaultFs::new(&real, |_| true, None)),
        })
    };
    let session = Session {
        store: Some(Arc::new(PanickingStore {
            panics: panic_at.is_some(),
        })),
        ..Session::default()
    };
    call_with(
        &ToolCall {
            tool_name: tool,
            params,
            workspace_root: root,
            session: &session,
        },
        &open,
    )
}

#[test]
fn every_tool_turns_a_panic_into_its_internal_error() {
    let cases: Vec<_> = cases().into_iter().filter(|c| registered(c.0)).collect();
    let mut tools: Vec<&str> = cases.iter().map(|c| c.0).collect();
    tools.sort_unstable();
    let mut supported = SUPPORTED_TOOLS.to_vec();
    supported.sort_unstable();
    assert_eq!(tools, supported, "every tool is covered");
    for (tool, params, pointer, internal) in cases {
        // Without the fault the call succeeds: the params are good and the
        // filesystem is reached.
        let dir = workspace();
        let fine = call(tool, &params, dir.path(), None);
        assert!(fine.success, "{tool}: {}", fine.result);
        assert_ne!(fine.result.pointer(pointer), Some(&internal), "{tool}");
        // The first filesystem operation panics.
        let dir = workspace();
        let out = call(tool, &params, dir.path(), Some(0));
        assert!(!out.success, "{tool}");
        assert_eq!(
            out.result.pointer(pointer),
            Some(&internal),
            "{tool}: {}",
            out.result
        );
        assert!(out.error.is_some_and(|m| !m.is_empty()), "{tool}");
    }
}
