//! The wire boundary: a tool name and its JSON params in, the tool's JSON
//! result document out. The runner's built-in executor and `patchspec exec`
//! call exactly [`call`]; nothing else in the engine sees JSON requests.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Session state that travels with a call (TUL-001 ActiveFiles, and the
/// executor's configurable limits).
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// docPath → content of the files already in the model's context.
    pub active_files: BTreeMap<String, String>,
    /// Limits the caller sets for this call; absent ones keep their defaults.
    pub limits: Limits,
}

/// Per-call overrides of configurable limits (a conformance runner sets them
/// so that a case can reach a limit with a small workspace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `workspace_create_file`'s size limit in normalised bytes (TUL-004
    /// §5.3); `None` keeps [`crate::tools::create_file::DEFAULT_MAX_BYTES`].
    pub create_file_max_bytes: Option<u64>,
}

/// One tool call.
#[derive(Clone, Copy, Debug)]
pub struct ToolCall<'a> {
    /// The tool's wire name (`apply_patch`, `workspace_write_patch`, ...).
    pub tool_name: &'a str,
    /// The tool's own arguments.
    pub params: &'a Value,
    /// The workspace every path is relative to.
    pub workspace_root: &'a Path,
    /// Session state.
    pub session: &'a Session,
}

/// What a tool call produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutcome {
    /// Did the tool do what was asked?
    pub success: bool,
    /// The tool's result document (its own spec's shape), on success and failure alike.
    pub result: Value,
    /// A one-line message when `success` is false.
    pub error: Option<String>,
}

/// The tools this engine implements, by wire name.
pub const SUPPORTED_TOOLS: &[&str] = &[
    "apply_patch",
    "workspace_write_patch",
    "workspace_create_file",
    "workspace.read_file",
    "read_file",
    "grep_file",
    "apply_change",
    "call_chain",
];

/// Run one tool call against its workspace.
///
/// A tool that may write opens the workspace with the writer lock
/// ([`crate::tools::open_for_writing`]); every tool first recovers an
/// interrupted commit left by a dead writer (see [`crate::workspace`]).
pub fn call(call: &ToolCall<'_>) -> ToolOutcome {
    // Recover before anything else, even a call its params will refuse
    // (one lstat when the workspace is clean). A failure here is not
    // reported here: the tool's own open recovers again and reports it in
    // the tool's vocabulary.
    let _ = crate::workspace::open_for_reading(call.workspace_root);
    if crate::tools::writes(call.tool_name) {
        call_with(call, &crate::tools::open_for_writing)
    } else {
        call_with(call, &crate::tools::open_real)
    }
}

/// [`call`], opening the workspace with `open` instead of the real
/// filesystem (the fault-injection seam: tests pass a [`crate::fs::FaultFs`]).
pub fn call_with(call: &ToolCall<'_>, open: &crate::tools::OpenFs<'_>) -> ToolOutcome {
    use crate::tools::*;
    match call.tool_name {
        "apply_patch" => apply_patch::run_with(call, open),
        "workspace_write_patch" => write_patch::run_with(call, open),
        "workspace_create_file" => create_file::run_with(call, open),
        "workspace.read_file" => read_file::run_with(call, open),
        "read_file" => ide_read_file::run_with(call, open),
        "grep_file" => grep_file::run_with(call, open),
        "apply_change" => apply_change::run_with(call, open),
        "call_chain" => call_chain::run_with(call, open),
        other => unknown_tool(other),
    }
}

/// The outcome for a tool name this engine does not implement.
pub fn unknown_tool(name: &str) -> ToolOutcome {
    let message = format!("unknown tool {name:?}");
    ToolOutcome {
        success: false,
        result: serde_json::json!({"success": false, "error": {"kind": "unknown_tool", "message": message}}),
        error: Some(message),
    }
}
