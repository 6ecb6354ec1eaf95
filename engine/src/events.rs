//! The structured events of a tool call (TUL-002 §9, TUL-004 §6), emitted
//! through `tracing` under the target [`TARGET`]: [`crate::dispatch::call`]
//! is the one place that emits them, so every transport logs alike. Each
//! event carries an `event` field (its name, e.g. `Tool.Call.Received`),
//! the `tool` and the `call_id`; the list with every field is in
//! docs/tools.md ("Events"). Without a subscriber (a library user, `patchspec
//! apply`) they cost one relaxed atomic load each.
//!
//! Every call emits `Tool.Call.Received` first and then exactly one of
//! `Tool.Call.Executed` (success) and `Tool.Call.Error` (failure).
//!
//! A tool's own events (its `ToolHooks` in `crate::tools::REGISTRY`)
//! come in as closures, so this module never names a tool.

use std::time::Duration;

use serde_json::Value;

use crate::call::ToolOutcome;

/// The `tracing` target of every event.
pub const TARGET: &str = "patchspec::events";

/// Milliseconds, with microseconds as the fraction.
fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(crate) fn array_len(v: Option<&Value>) -> usize {
    v.and_then(Value::as_array).map_or(0, Vec::len)
}

/// The call arrived; then `tool_events`, the tool's own §9 / §6.1 start event.
pub(crate) fn received(tool: &str, call_id: &str, tool_events: impl FnOnce()) {
    tracing::info!(target: TARGET, event = "Tool.Call.Received", tool, call_id);
    tool_events();
}

/// The first error's code of a result document, whichever tool's shape it has.
fn error_code(result: &Value) -> Option<&str> {
    let first_error = result
        .get("errors")
        .and_then(Value::as_array)
        .and_then(|e| e.first());
    result
        .get("errorCode")
        .and_then(Value::as_str)
        .or_else(|| {
            first_error
                .and_then(|e| e.get("code"))
                .and_then(Value::as_str)
        })
        .or_else(|| {
            result
                .get("error")
                .and_then(|e| e.get("kind").or_else(|| e.get("code")))
                .and_then(Value::as_str)
        })
}

/// The call finished: its per-tool events (`tool_events`, given the
/// outcome's error code, or `""`, and the duration in milliseconds), then
/// `Tool.Call.Executed` or `Tool.Call.Error`.
pub(crate) fn finished(
    tool: &str,
    call_id: &str,
    outcome: &ToolOutcome,
    duration: Duration,
    tool_events: impl FnOnce(&str, f64),
) {
    let result = &outcome.result;
    let code = error_code(result).unwrap_or("");
    let duration_ms = millis(duration);
    tool_events(code, duration_ms);
    if outcome.success {
        tracing::info!(
            target: TARGET,
            event = "Tool.Call.Executed",
            tool,
            call_id,
            success = true,
            duration_ms,
        );
    } else {
        tracing::warn!(
            target: TARGET,
            event = "Tool.Call.Error",
            tool,
            call_id,
            success = false,
            error_code = code,
            reason = outcome.error.as_deref().unwrap_or(""),
            duration_ms,
        );
    }
}

/// A `workspace_write_patch` result's `batchId`, when it has one.
pub(crate) fn batch_id(result: &Value) -> Option<&str> {
    result
        .get("result")
        .and_then(|r| r.get("batchId"))
        .and_then(Value::as_str)
}

/// The store recorded the call: first `tool_events`, the tool's own
/// (for a batch: TUL-002 §9's "batch stored"), given the duration in
/// milliseconds, then `Store.Recorded`.
pub(crate) fn stored(tool: &str, call_id: &str, duration: Duration, tool_events: impl FnOnce(f64)) {
    let duration_ms = millis(duration);
    tool_events(duration_ms);
    tracing::info!(target: TARGET, event = "Store.Recorded", tool, call_id, duration_ms);
}

/// The store could not record the call; the tool's effect stands
/// (docs/clarifications.md C-store-write-failure).
pub(crate) fn store_failed(tool: &str, call_id: &str, reason: &str) {
    tracing::error!(target: TARGET, event = "Store.WriteFailed", tool, call_id, reason);
}

/// Something in the workspace's journal folder that the engine did not act
/// on: not proven to be its own (docs/security.md). Never executed, never
/// removed; `patchspec recover --discard` removes it.
pub(crate) fn foreign_journal(path: &str, reason: &str) {
    tracing::warn!(target: TARGET, event = "Journal.Foreign", path, reason);
}

/// A reader found a journal folder: it does not recover (a read writes
/// nothing), so it may see a commit a dead writer left half done until the
/// next writer or `patchspec recover` rolls it back.
pub(crate) fn journal_pending(root: &str) {
    tracing::warn!(target: TARGET, event = "Journal.Pending", root);
}
