//! TEMPORARY stand-in for `patchspec_engine::catalog` until branch
#![allow(missing_docs)]
//! issue19-catalog is merged; removed by the merge commit.
use serde_json::{json, Value};

#[derive(Clone, Debug)]
pub struct ToolDefinition {
    pub name: &'static str,
    pub description: String,
    pub writes: bool,
    pub params_schema: Value,
    pub result_schema: Value,
}

pub fn catalog() -> Vec<ToolDefinition> {
    patchspec_engine::dispatch::SUPPORTED_TOOLS
        .iter()
        .map(|name| ToolDefinition {
            name,
            description: format!("the {name} tool"),
            writes: patchspec_engine::tools::writes(name),
            params_schema: json!({"type": "object"}),
            result_schema: json!({"type": "object"}),
        })
        .collect()
}
