//! The tool catalog: every tool of [`crate::tools::REGISTRY`] as a model
//! sees it — its name, a description written for a model, where it
//! executes ([`Side`]), whether it writes, and the JSON Schemas (draft
//! 2020-12) of its params and of its result document.
//!
//! The schemas are not written by hand: each comes from the Rust type that
//! the tool's parser produces (params) or that the tool serializes to build
//! its wire document (result), through schemars, so a field added to a
//! result is in its schema by construction. The descriptions are text
//! files beside this module (`descriptions/<tool>.md`), compiled in.
//!
//! What this module holds and why here: the registry carries, per tool, a
//! description, a side and two schema functions; this module turns them
//! into [`ToolDefinition`]s, the one form that `patchspec catalog` and the
//! MCP server read. Formats for model APIs (MCP, OpenAI, Anthropic) are the
//! runner's business (`patchspec-conformance`'s `catalog` module).

use serde::Serialize;
use serde_json::Value;

pub use crate::tools::Side;
use crate::tools::REGISTRY;

/// One tool as a catalog lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The wire name a call carries (`apply_patch`, `workspace.read_file`, ...).
    pub name: &'static str,
    /// What the tool does, when to use it and its rules, written for a model.
    pub description: String,
    /// Where the tool executes, per its spec.
    pub side: Side,
    /// A short human-readable name (MCP's `title`).
    pub title: &'static str,
    /// True when the tool may change the workspace.
    pub writes: bool,
    /// True when a second call with the same arguments changes nothing more.
    pub idempotent: bool,
    /// JSON Schema (draft 2020-12) of the params object.
    pub params_schema: Value,
    /// JSON Schema (draft 2020-12) of the result document, success and failure alike.
    pub result_schema: Value,
}

/// Every tool of [`REGISTRY`], in registry order.
pub fn catalog() -> Vec<ToolDefinition> {
    REGISTRY.iter().map(definition_of).collect()
}

/// The catalog entry of the tool called `name`, if this engine has it.
pub fn definition(name: &str) -> Option<ToolDefinition> {
    crate::tools::find(name).map(definition_of)
}

fn definition_of(entry: &crate::tools::ToolEntry) -> ToolDefinition {
    let mut params_schema = (entry.params_schema)().to_value();
    optional_members_without_null(&mut params_schema);
    ToolDefinition {
        name: entry.name,
        description: entry.description.trim_end().to_string(),
        side: entry.side,
        title: entry.title,
        writes: entry.writes,
        idempotent: entry.idempotent,
        params_schema,
        result_schema: (entry.result_schema)().to_value(),
    }
}

/// A params schema's optional members typed without `null`: a member a
/// call may leave out is `"type": "integer"`, not `["integer", "null"]`,
/// so a generic client (a form that types each field) sends `5` rather
/// than the string `"5"`. The parsers still take `null` as absent; the
/// schema describes what to send. A member whose only type is `null` (a
/// field another variant uses) keeps it.
fn optional_members_without_null(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let required: Vec<String> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                for (name, member) in properties.iter_mut() {
                    if !required.contains(name) {
                        drop_null(member);
                    }
                }
            }
            map.values_mut().for_each(optional_members_without_null);
        }
        Value::Array(items) => items.iter_mut().for_each(optional_members_without_null),
        _ => {}
    }
}

/// Take `null` out of one member's schema (its `type` list, an `anyOf`
/// branch `{"type": "null"}`, its `enum`), unless `null` is all it allows.
fn drop_null(member: &mut Value) {
    let Some(map) = member.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        if types.len() > 1 {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                map.insert("type".into(), only);
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if values.len() > 1 {
            values.retain(|v| !v.is_null());
        }
    }
    let is_null = |b: &Value| {
        b.get("type").is_some_and(|t| t == "null") && b.as_object().is_some_and(|o| o.len() == 1)
    };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if branches.len() > 1 && branches.iter().any(is_null) {
            branches.retain(|b| !is_null(b));
            if branches.len() == 1 {
                // One branch left: the member is that branch (its own
                // description yields to the member's).
                if let Some(Value::Object(branch)) = branches.pop() {
                    map.remove("anyOf");
                    for (k, v) in branch {
                        if !(k == "description" && map.contains_key("description")) {
                            map.insert(k, v);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_lists_every_registered_tool_in_order() {
        let names: Vec<&str> = catalog().iter().map(|t| t.name).collect();
        assert_eq!(names, crate::tools::SUPPORTED_TOOLS);
        for tool in catalog() {
            assert_eq!(definition(tool.name), Some(tool.clone()));
            assert!(
                tool.description.len() > 200,
                "{}: description too short",
                tool.name
            );
            for schema in [&tool.params_schema, &tool.result_schema] {
                assert_eq!(
                    schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
                    "{}",
                    tool.name
                );
                assert_eq!(schema["type"], "object", "{}", tool.name);
                assert!(
                    !schema.to_string().contains("\"$ref\""),
                    "{}: a $ref left in",
                    tool.name
                );
                let mut formats = Vec::new();
                collect_formats(schema, &mut formats);
                assert!(
                    formats
                        .iter()
                        .all(|f| crate::schema::STANDARD_FORMATS.contains(&f.as_str())),
                    "{}: non-standard formats {formats:?}",
                    tool.name
                );
                assert!(
                    !schema.to_string().contains("[`"),
                    "{}: a rustdoc link in a description",
                    tool.name
                );
                let mut texts = Vec::new();
                descriptions(schema, &mut texts);
                assert!(!texts.is_empty(), "{}", tool.name);
                for text in texts {
                    assert!(
                        !text.replace("\n\n", "").contains('\n'),
                        "{}: a wrapped description: {text:?}",
                        tool.name
                    );
                }
            }
        }
        assert_eq!(definition("no_such_tool"), None);
    }

    fn collect_formats(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(f)) = map.get("format") {
                    out.push(f.clone());
                }
                map.values().for_each(|v| collect_formats(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| collect_formats(v, out)),
            _ => {}
        }
    }

    /// Optional params are typed without `null`; `uint` became `minimum`.
    #[test]
    fn optional_params_are_typed_without_null() {
        let read = definition("workspace.read_file").expect("the tool");
        let max_bytes = &read.params_schema["properties"]["maxBytes"];
        assert_eq!(max_bytes["type"], "integer", "{max_bytes}");
        assert_eq!(max_bytes["minimum"], 1, "{max_bytes}");
        // call_chain is registered only with the `ide` feature.
        if let Some(chain) = definition("call_chain") {
            let direction = &chain.params_schema["properties"]["direction"];
            assert!(direction.get("anyOf").is_none(), "{direction}");
            assert!(direction["oneOf"].is_array(), "{direction}");
            assert_eq!(
                chain.params_schema["properties"]["includeSource"]["type"],
                "boolean"
            );
        }
    }

    fn descriptions<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match v {
                        Value::String(text) if key == "description" => out.push(text),
                        _ => descriptions(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| descriptions(v, out)),
            _ => {}
        }
    }

    /// The result types serialize the error codes through serde; the wire
    /// names are the `as_str` tables.
    #[test]
    fn serialized_error_codes_are_the_wire_codes() {
        use crate::tools::tul::apply_patch::ErrorKind as K;
        use crate::tools::tul::create_file::CreateFileErrorCode as C;
        use crate::tools::tul::read_file::ReadFileErrorCode as R;
        let same = |v: Option<Value>, s: &str| assert_eq!(v, Some(Value::from(s)));
        for k in [
            K::PatchParseError,
            K::PatchApplyError,
            K::MultipleMatches,
            K::OverlappingEdits,
            K::StaleFile,
            K::OutsideWorkspace,
            K::CommandFailed,
            K::NotFound,
            K::AlreadyExists,
        ] {
            same(serde_json::to_value(k).ok(), k.as_str());
        }
        for c in [
            C::FileExists,
            C::InvalidPath,
            C::DirectoryCreateFailed,
            C::WriteFailed,
            C::TooLarge,
            C::HashFailed,
            C::UnhandledException,
            C::InvalidArgument,
        ] {
            same(serde_json::to_value(c).ok(), c.as_str());
        }
        for r in [
            R::AlreadyInContext,
            R::NotFound,
            R::InvalidArgument,
            R::InternalError,
        ] {
            same(serde_json::to_value(r).ok(), r.as_str());
        }
    }

    #[test]
    fn sides_and_write_flags_follow_the_specs() {
        let side = |n: &str| definition(n).map(|d| d.side);
        assert_eq!(side("workspace.read_file"), Some(Side::Server));
        assert_eq!(side("workspace_create_file"), Some(Side::Client));
        assert_eq!(side("workspace_write_patch"), Some(Side::Client));
        assert_eq!(side("apply_patch"), Some(Side::Client));
        assert_eq!(
            serde_json::to_value(Side::Server).ok(),
            Some("server".into())
        );
        for t in catalog() {
            assert_eq!(t.writes, crate::tools::writes(t.name), "{}", t.name);
            // A tool that never writes cannot change anything the second time.
            assert!(t.writes || t.idempotent, "{}", t.name);
            assert!(!t.title.is_empty() && t.title.len() <= 40, "{}", t.name);
        }
        let idempotent_writers: Vec<&str> = catalog()
            .iter()
            .filter(|t| t.writes && t.idempotent)
            .map(|t| t.name)
            .collect();
        assert_eq!(idempotent_writers, ["workspace_create_file"]);
    }
}
