//! What a tool call produced ([`ToolOutcome`]): below both the call types
//! ([`crate::call`], which re-exports it) and the patch store
//! ([`crate::store`], which records it), so neither names the other's
//! module for it.

use serde_json::Value;

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
