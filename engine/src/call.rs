//! The call types: one tool call ([`ToolCall`], with its [`Session`]) and
//! what it produced ([`ToolOutcome`], defined in [`crate::outcome`] so that
//! the store, which a session carries, records outcomes without naming the
//! call). Low in the engine so that the tools and the events speak them
//! without importing the dispatcher ([`crate::dispatch`] re-exports them).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::outcome::ToolOutcome;

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
    /// by the events and the store; `None`: [`crate::dispatch::call`] makes one up.
    pub call_id: Option<String>,
}

/// Per-call overrides of configurable limits (a conformance runner sets them
/// so that a case can reach a limit with a small workspace). Serialized as
/// the runner protocol's `session.limits` (docs/protocol.md), each member
/// only when set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// `workspace_create_file`'s size limit in normalised bytes (TUL-004
    /// §5.3); `None` keeps `crate::tools::tul::create_file::DEFAULT_MAX_BYTES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_file_max_bytes: Option<u64>,
}

impl Limits {
    /// No limit set: every one keeps its default.
    pub fn is_empty(&self) -> bool {
        self.create_file_max_bytes.is_none()
    }
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
