//! `apply_patch` (being written).

use crate::dispatch::{ToolCall, ToolOutcome};

/// Run one `apply_patch` call.
pub fn run(call: &ToolCall<'_>) -> ToolOutcome {
    crate::dispatch::unknown_tool(call.tool_name)
}
