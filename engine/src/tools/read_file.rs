//! `read_file` (being written).

use crate::dispatch::{ToolCall, ToolOutcome};

/// Run one `read_file` call.
pub fn run(call: &ToolCall<'_>) -> ToolOutcome {
    crate::dispatch::unknown_tool(call.tool_name)
}
