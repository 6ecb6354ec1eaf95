//! The one engine entry of every way the runner serves the reference
//! engine: a tool call given to `patchspec_engine::dispatch::call` with the
//! session the wire asked for, a panic caught as the call's `Err`, and the
//! engine's private paths. Below both the in-process transport (and so
//! `patchspec exec`) and the MCP server, which must not drift apart.

use std::path::Path;

use patchspec_engine::dispatch::{self, Session as EngineSession, ToolCall, ToolOutcome};

use crate::protocol::SessionMsg;

/// The engine's implementation-private paths (its trash folder).
pub const PRIVATE_PATHS: &[&str] = &[".patchspec"];

/// Run one tool call with the engine, catching a panic as `Err` (its
/// message). The one engine entry of every way the runner serves the
/// engine: the in-process transport's `answer` (and so `patchspec exec`),
/// the MCP server and the fuzzer's reference runs.
pub fn run_engine(
    tool_name: &str,
    params: &serde_json::Value,
    workspace_root: &Path,
    session: &SessionMsg,
    call_id: Option<&str>,
) -> Result<ToolOutcome, String> {
    let session = EngineSession {
        active_files: session.active_files.clone(),
        limits: session.limits,
        store: crate::engine_store::for_call(workspace_root, session.keep_store),
        call_id: call_id.map(str::to_string),
    };
    let call = ToolCall {
        tool_name,
        params,
        workspace_root,
        session: &session,
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch::call(&call))).map_err(
        |panic| {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("the engine panicked: {text}")
        },
    )
}
