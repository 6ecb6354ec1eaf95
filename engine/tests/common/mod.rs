//! Helpers shared by the engine's integration tests.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

/// Every entry under `root`, `.patchspec` included (the snapshot kit's
/// flat form: `dir/`, `link@`, `special|`, files with their bytes).
pub fn every_entry(root: &Path) -> BTreeMap<String, Vec<u8>> {
    patchspec_snapshot::flat(root, None)
}

/// A tool's call through `dispatch::call_with`, its workspace at `root`
/// opened as `fs` (the fault-injection seam).
pub fn call_on(
    fs: &dyn patchspec_engine::fs::Fs,
    root: &Path,
    tool: &str,
    params: &serde_json::Value,
) -> patchspec_engine::dispatch::ToolOutcome {
    use patchspec_engine::dispatch::{call_with, Session, ToolCall};
    let session = Session::default();
    let call = ToolCall {
        tool_name: tool,
        params,
        workspace_root: root,
        session: &session,
    };
    let open =
        |_: &Path| -> std::io::Result<Box<dyn patchspec_engine::fs::Fs + '_>> { Ok(Box::new(fs)) };
    call_with(&call, &open)
}

/// A `workspace_write_patch` batch over two files of the crash tests'
/// workspaces: `a.txt` ("a\n") replaced, `gone.txt` ("bye\n") appended to.
pub fn write_patch_two_files() -> serde_json::Value {
    serde_json::json!({"files": [{
        "docPath": "a.txt",
        "originalSha256": patchspec_engine::hash::sha256_hex(b"a\n"),
        "changes": [{"operation": "replace", "startLine": 1, "endLine": 1, "expectedOriginalLines": ["a"], "newLines": ["b"]}]
    }, {
        "docPath": "gone.txt",
        "originalSha256": patchspec_engine::hash::sha256_hex(b"bye\n"),
        "changes": [{"operation": "insert", "afterLine": 1, "newLines": ["more"]}]
    }]})
}
