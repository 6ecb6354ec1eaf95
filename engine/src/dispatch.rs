//! The wire boundary: a tool name and its JSON params in, the tool's JSON
//! result document out. The runner's built-in executor and `patchspec exec`
//! call exactly [`call`]; nothing else in the engine sees JSON requests.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

/// Session state that travels with a call (TUL-001 ActiveFiles, and the
/// executor's configurable limits).
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// docPath → content of the files already in the model's context.
    pub active_files: BTreeMap<String, String>,
    /// Limits the caller sets for this call; absent ones keep their defaults.
    pub limits: Limits,
    /// Where the writing tools' calls are recorded and `get_patch_change`
    /// reads them; `None`: nothing is recorded.
    pub store: Option<Arc<dyn crate::store::PatchStore>>,
    /// The caller's id of this call (the protocol's `toolCallId`), carried
    /// by the events and the store; `None`: [`call`] makes one up.
    pub call_id: Option<String>,
}

/// Per-call overrides of configurable limits (a conformance runner sets them
/// so that a case can reach a limit with a small workspace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `workspace_create_file`'s size limit in normalised bytes (TUL-004
    /// §5.3); `None` keeps [`crate::tools::tul::create_file::DEFAULT_MAX_BYTES`].
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

/// The tools this engine implements, by wire name: the names of
/// [`crate::tools::REGISTRY`], in its order.
pub const SUPPORTED_TOOLS: &[&str] = &REGISTERED_NAMES;

const REGISTERED_NAMES: [&str; crate::tools::REGISTRY.len()] = {
    let mut names = [""; crate::tools::REGISTRY.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = crate::tools::REGISTRY[i].name;
        i += 1;
    }
    names
};

/// Run one tool call against its workspace.
///
/// A tool that may write opens the workspace with the writer lock
/// ([`crate::tools::open_for_writing`]); every tool first recovers an
/// interrupted commit left by a dead writer (see [`crate::workspace`]).
///
/// Around the tool, it emits the call's events ([`crate::events`]) and,
/// when the session has a store, records every call of a writing tool in
/// it after the tool ran (a store failure is an event and leaves the
/// outcome as the tool made it: C-store-write-failure).
pub fn call(call: &ToolCall<'_>) -> ToolOutcome {
    let made_up;
    let call_id = match &call.session.call_id {
        Some(id) => id.as_str(),
        None => {
            made_up = format!("call-{:016x}", fastrand::u64(..));
            made_up.as_str()
        }
    };
    crate::events::received(call.tool_name, call_id, call.params);
    let started = Instant::now();
    let outcome = run(call);
    let duration = started.elapsed();
    if let Some(store) = call.session.store.as_deref() {
        if crate::tools::writes(call.tool_name) {
            record(store, call, call_id, &outcome, duration);
        }
    }
    crate::events::finished(call.tool_name, call_id, call.params, &outcome, duration);
    outcome
}

fn record(
    store: &dyn crate::store::PatchStore,
    call: &ToolCall<'_>,
    call_id: &str,
    outcome: &ToolOutcome,
    duration: std::time::Duration,
) {
    let started = Instant::now();
    let recorded = crate::store::RecordedCall {
        tool: call.tool_name,
        call_id,
        params: call.params,
        outcome,
        duration,
    };
    match store.record(&recorded) {
        Ok(()) => {
            crate::events::stored(call.tool_name, call_id, &outcome.result, started.elapsed())
        }
        Err(e) => crate::events::store_failed(call.tool_name, call_id, &e.message),
    }
}

fn run(call: &ToolCall<'_>) -> ToolOutcome {
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
    match crate::tools::find(call.tool_name) {
        Some(tool) => (tool.run)(call, open),
        None => unknown_tool(call.tool_name),
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
