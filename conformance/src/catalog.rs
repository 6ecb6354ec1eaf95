//! The tool catalog in the shapes model APIs take: `patchspec catalog`.
//!
//! The catalog itself (names, descriptions, sides, JSON Schemas from the
//! engine's own types) is `patchspec_engine::catalog`; this module selects
//! tools from it and renders them as
//!
//! - [`Format::Json`]: the full catalog, one object per tool (`name`,
//!   `modelName`, `title`, `description`, `side`, `writes`, `idempotent`,
//!   `paramsSchema`, `resultSchema`);
//! - [`Format::Mcp`]: an MCP `tools/list` result, `{"tools": [{name,
//!   title, description, inputSchema, outputSchema, annotations}]}`;
//! - [`Format::Openai`]: Chat Completions function tools, `[{"type":
//!   "function", "function": {name, description, parameters}}]`;
//! - [`Format::OpenaiResponses`]: Responses API function tools, `[{"type":
//!   "function", name, description, parameters, strict}]`;
//! - [`Format::Anthropic`]: Messages API tools, `[{name, description,
//!   input_schema}]`.
//!
//! OpenAI and Anthropic tool names must match `^[a-zA-Z0-9_-]{1,64}$`, so a
//! wire name such as `workspace.read_file` is sent as its [`model_name`]
//! (every other character becomes `_`) and a call coming back is mapped to
//! the wire name by [`wire_name`] (docs/clarifications.md, C-catalog-names).
//! MCP allows `.` in tool names, so MCP keeps the wire names.
//!
//! [`render_strict`] renders the three model formats with `strict: true`
//! and params in the strict shape of [`crate::strict_schema`].
//!
//! [`schema_files`] is what `--write-schemas DIR` writes (and what
//! docs/schemas/ holds, kept fresh by a test).

use std::path::Path;

use serde_json::{json, Map, Value};

use patchspec_engine::catalog::{catalog, ToolDefinition};

/// The shapes `patchspec catalog --format` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The full catalog: names, descriptions, sides, write flags, params and result schemas.
    Json,
    /// The result of an MCP `tools/list` request.
    Mcp,
    /// OpenAI Chat Completions function tools.
    Openai,
    /// OpenAI Responses API function tools.
    OpenaiResponses,
    /// Anthropic Messages API tool definitions.
    Anthropic,
}

/// The longest tool name OpenAI and Anthropic accept.
pub const MAX_MODEL_NAME_LEN: usize = 64;

/// The tools named in `names` (in the order given), or every tool in
/// registry order when `names` is empty. An unknown name is an error that
/// lists the known ones; a name may be given as its wire or model name.
pub fn select(names: &[String]) -> Result<Vec<ToolDefinition>, String> {
    let all = catalog();
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|name| {
            let wire = wire_name(name).unwrap_or(name.as_str());
            all.iter().find(|t| t.name == wire).cloned().ok_or_else(|| {
                let known: Vec<&str> = all.iter().map(|t| t.name).collect();
                format!("unknown tool {name:?} (known: {})", known.join(", "))
            })
        })
        .collect()
}

/// The name a tool is sent under to OpenAI and Anthropic: the wire name
/// with every character outside `[a-zA-Z0-9_-]` replaced by `_`
/// (`workspace.read_file` → `workspace_read_file`).
pub fn model_name(wire: &str) -> String {
    wire.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The wire name of the tool a model called by `name`: the registered tool
/// whose [`model_name`] (or wire name) is `name`. The mapping is one to one
/// over the registry (a test holds it), so the answer is unique.
pub fn wire_name(name: &str) -> Option<&'static str> {
    patchspec_engine::REGISTRY
        .iter()
        .map(|t| t.name)
        .find(|wire| *wire == name || model_name(wire) == name)
}

/// `tools` rendered as `format`.
pub fn render(format: Format, tools: &[ToolDefinition]) -> Value {
    render_as(format, tools, false)
}

/// `tools` rendered as `format` for the provider's strict mode: `strict:
/// true` and each params schema in its strict shape
/// ([`crate::strict_schema::strict`]). Only the model formats (`openai`,
/// `openai-responses`, `anthropic`) have one.
pub fn render_strict(format: Format, tools: &[ToolDefinition]) -> Result<Value, String> {
    match format {
        Format::Openai | Format::OpenaiResponses | Format::Anthropic => {
            Ok(render_as(format, tools, true))
        }
        Format::Json | Format::Mcp => Err(format!(
            "--strict applies to the openai, openai-responses and anthropic formats, not {}",
            format_name(format)
        )),
    }
}

/// The `--format` spelling of `format`.
pub fn format_name(format: Format) -> &'static str {
    match format {
        Format::Json => "json",
        Format::Mcp => "mcp",
        Format::Openai => "openai",
        Format::OpenaiResponses => "openai-responses",
        Format::Anthropic => "anthropic",
    }
}

fn render_as(format: Format, tools: &[ToolDefinition], strict: bool) -> Value {
    let parameters = |t: &ToolDefinition| {
        let schema = for_model_api(&t.params_schema);
        if strict {
            crate::strict_schema::strict(&schema)
        } else {
            schema
        }
    };
    match format {
        Format::Json => Value::Array(tools.iter().map(full).collect()),
        Format::Mcp => json!({"tools": tools.iter().map(mcp).collect::<Vec<_>>()}),
        Format::Openai => Value::Array(
            tools
                .iter()
                .map(|t| {
                    let mut function = json!({
                        "name": model_name(t.name),
                        "description": t.description,
                        "parameters": parameters(t),
                    });
                    if strict {
                        function["strict"] = true.into();
                    }
                    json!({"type": "function", "function": function})
                })
                .collect(),
        ),
        // FunctionToolParam: `strict` is a required member (null allowed).
        Format::OpenaiResponses => Value::Array(
            tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "name": model_name(t.name),
                        "description": t.description,
                        "parameters": parameters(t),
                        "strict": strict,
                    })
                })
                .collect(),
        ),
        Format::Anthropic => Value::Array(
            tools
                .iter()
                .map(|t| {
                    let mut tool = json!({
                        "name": model_name(t.name),
                        "description": t.description,
                        "input_schema": parameters(t),
                    });
                    if strict {
                        tool["strict"] = true.into();
                    }
                    tool
                })
                .collect(),
        ),
    }
}

fn full(t: &ToolDefinition) -> Value {
    json!({
        "name": t.name,
        "modelName": model_name(t.name),
        "title": t.title,
        "description": t.description,
        "side": t.side.as_str(),
        "writes": t.writes,
        "idempotent": t.idempotent,
        "paramsSchema": t.params_schema,
        "resultSchema": t.result_schema,
    })
}

/// One tool of an MCP `tools/list` result. `title` is the name a client's
/// UI shows. The annotations are hints for clients (MCP 2025-06-18): a tool
/// that writes may change or remove files (destructive), the reading tools
/// do not; a repeated call with the same arguments changes nothing more
/// (idempotent) for the readers and `workspace_create_file`; none reaches
/// outside the workspace (closed world).
fn mcp(t: &ToolDefinition) -> Value {
    json!({
        "name": t.name,
        "title": t.title,
        "description": t.description,
        "inputSchema": t.params_schema,
        "outputSchema": t.result_schema,
        "annotations": {
            "title": t.title,
            "readOnlyHint": !t.writes,
            "destructiveHint": t.writes,
            "idempotentHint": t.idempotent,
            "openWorldHint": false,
        },
    })
}

/// A params schema as OpenAI's `parameters` and Anthropic's `input_schema`
/// take it: the same schema without `$schema` (both take a JSON Schema
/// object, not a document naming its dialect) and without `title` (the
/// tool's name already says it).
fn for_model_api(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

/// The schema files of `tools`, as `--write-schemas` writes them:
/// `<name>.params.json` and `<name>.result.json`, pretty JSON with a final
/// newline, in registry order.
pub fn schema_files(tools: &[ToolDefinition]) -> Vec<(String, String)> {
    let pretty = |v: &Value| {
        let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
        text.push('\n');
        text
    };
    tools
        .iter()
        .flat_map(|t| {
            [
                (format!("{}.params.json", t.name), pretty(&t.params_schema)),
                (format!("{}.result.json", t.name), pretty(&t.result_schema)),
            ]
        })
        .collect()
}

/// Write [`schema_files`] of `tools` into `dir` (created if missing), and
/// remove the `*.params.json` / `*.result.json` files there that belong
/// to no tool any more. Returns the names written.
pub fn write_schemas(dir: &Path, tools: &[ToolDefinition]) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let files = schema_files(tools);
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let ours = name.ends_with(".params.json") || name.ends_with(".result.json");
        if ours && !files.iter().any(|(f, _)| *f == name) {
            std::fs::remove_file(dir.join(&name))?;
        }
    }
    for (name, text) in &files {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(files.into_iter().map(|(name, _)| name).collect())
}

/// One rendered tool as the format checks see it: its name, its
/// description, and its schemas by field name.
type Rendered<'v> = (&'v str, &'v str, Vec<(&'static str, &'v Value)>);

/// The members of an object schema, for the format checks.
fn object_keys(schema: &Value) -> Option<&Map<String, Value>> {
    schema.as_object()
}

/// Why a rendered catalog breaks the rules of its format, if it does: the
/// checks `patchspec catalog` output is held to (tests) and that a caller
/// may run on a catalog it edited. Rules checked: names (`^[a-zA-Z0-9_-]{1,64}$`
/// for OpenAI and Anthropic, `^[a-zA-Z0-9_.-]{1,128}$` for MCP), unique
/// names, a non-empty description, and object schemas at the top
/// (`"type": "object"`, no top-level `anyOf`/`oneOf`/`allOf`/`not` for the
/// model APIs' parameters).
pub fn check_format(format: Format, rendered: &Value) -> Result<(), String> {
    let tools: Vec<Rendered<'_>> = match format {
        Format::Json => return Ok(()),
        Format::Mcp => items(rendered.get("tools"))?
            .iter()
            .map(|t| {
                (
                    str_of(t, "name"),
                    str_of(t, "description"),
                    vec![
                        ("inputSchema", t.get("inputSchema").unwrap_or(&Value::Null)),
                        (
                            "outputSchema",
                            t.get("outputSchema").unwrap_or(&Value::Null),
                        ),
                    ],
                )
            })
            .collect(),
        Format::Openai => items(Some(rendered))?
            .iter()
            .map(|t| {
                let f = t.get("function").unwrap_or(&Value::Null);
                (
                    str_of(f, "name"),
                    str_of(f, "description"),
                    vec![("parameters", f.get("parameters").unwrap_or(&Value::Null))],
                )
            })
            .collect(),
        Format::OpenaiResponses => items(Some(rendered))?
            .iter()
            .map(|t| {
                (
                    str_of(t, "name"),
                    str_of(t, "description"),
                    vec![("parameters", t.get("parameters").unwrap_or(&Value::Null))],
                )
            })
            .collect(),
        Format::Anthropic => items(Some(rendered))?
            .iter()
            .map(|t| {
                (
                    str_of(t, "name"),
                    str_of(t, "description"),
                    vec![(
                        "input_schema",
                        t.get("input_schema").unwrap_or(&Value::Null),
                    )],
                )
            })
            .collect(),
    };
    let (max_len, dot_ok) = match format {
        Format::Mcp => (128, true),
        _ => (MAX_MODEL_NAME_LEN, false),
    };
    let mut seen = Vec::new();
    for (name, description, schemas) in tools {
        let name_ok = !name.is_empty()
            && name.len() <= max_len
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || (dot_ok && c == '.'));
        if !name_ok {
            return Err(format!(
                "tool name {name:?} is not allowed by the {format:?} format"
            ));
        }
        if seen.contains(&name) {
            return Err(format!("tool name {name:?} appears twice"));
        }
        seen.push(name);
        if description.trim().is_empty() {
            return Err(format!("{name}: empty description"));
        }
        for (field, schema) in schemas {
            let Some(obj) = object_keys(schema) else {
                return Err(format!("{name}: {field} is not a JSON object"));
            };
            if obj.get("type") != Some(&Value::from("object")) {
                return Err(format!(
                    "{name}: {field} does not have \"type\": \"object\""
                ));
            }
            let combinator = ["anyOf", "oneOf", "allOf", "not"]
                .into_iter()
                .find(|k| obj.contains_key(*k));
            if let (Some(k), false) = (combinator, field == "outputSchema") {
                return Err(format!("{name}: {field} has a top-level {k}"));
            }
        }
    }
    Ok(())
}

fn items(value: Option<&Value>) -> Result<&Vec<Value>, String> {
    value
        .and_then(Value::as_array)
        .ok_or_else(|| "the tools are not a JSON array".to_string())
}

fn str_of<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_follows_its_rules() {
        let tools = catalog();
        for format in [
            Format::Mcp,
            Format::Openai,
            Format::OpenaiResponses,
            Format::Anthropic,
            Format::Json,
        ] {
            let rendered = render(format, &tools);
            assert_eq!(check_format(format, &rendered), Ok(()), "{format:?}");
        }
    }

    /// Every strict schema of every tool keeps the strict rules
    /// (docs/catalog.md), and says so with `strict: true`.
    #[test]
    fn every_strict_schema_keeps_the_strict_rules() {
        let tools = catalog();
        for format in [Format::Openai, Format::OpenaiResponses, Format::Anthropic] {
            let rendered = render_strict(format, &tools).unwrap();
            assert_eq!(check_format(format, &rendered), Ok(()), "{format:?}");
            for (tool, t) in tools.iter().zip(rendered.as_array().unwrap()) {
                let (schema, strict) = match format {
                    Format::Openai => (&t["function"]["parameters"], &t["function"]["strict"]),
                    Format::OpenaiResponses => (&t["parameters"], &t["strict"]),
                    _ => (&t["input_schema"], &t["strict"]),
                };
                assert_eq!(strict, &json!(true), "{format:?} {}", tool.name);
                let broken = crate::strict_schema::violations(schema);
                assert!(broken.is_empty(), "{format:?} {}: {broken:#?}", tool.name);
            }
        }
        // The non-strict renderings break them (which is why --strict exists).
        let plain = render(Format::Anthropic, &tools);
        assert!(plain
            .as_array()
            .unwrap()
            .iter()
            .any(|t| !crate::strict_schema::violations(&t["input_schema"]).is_empty()));
        assert!(render_strict(Format::Mcp, &tools).is_err());
        assert!(render_strict(Format::Json, &tools).is_err());
    }

    #[test]
    fn the_shapes_are_the_apis_own() {
        let tools = select(&["workspace.read_file".into()]).unwrap();
        let mcp = render(Format::Mcp, &tools);
        let t = &mcp["tools"][0];
        assert_eq!(t["name"], "workspace.read_file");
        assert_eq!(t["inputSchema"]["type"], "object");
        assert_eq!(t["outputSchema"]["type"], "object");
        assert_eq!(t["annotations"]["readOnlyHint"], true);
        assert_eq!(t["annotations"]["idempotentHint"], true);
        assert_eq!(t["title"], "Read a workspace file");
        let openai = render(Format::Openai, &tools);
        assert_eq!(openai[0]["type"], "function");
        let f = &openai[0]["function"];
        assert_eq!(f["name"], "workspace_read_file");
        assert_eq!(f["parameters"]["type"], "object");
        assert!(f["parameters"].get("$schema").is_none());
        assert_eq!(f["parameters"]["required"], json!(["path"]));
        let responses = render(Format::OpenaiResponses, &tools);
        assert_eq!(responses[0]["type"], "function");
        assert_eq!(responses[0]["name"], "workspace_read_file");
        assert_eq!(responses[0]["strict"], false);
        assert_eq!(responses[0]["parameters"]["type"], "object");
        let anthropic = render(Format::Anthropic, &tools);
        assert_eq!(anthropic[0]["name"], "workspace_read_file");
        assert_eq!(anthropic[0]["input_schema"]["type"], "object");
        assert_eq!(
            anthropic[0].as_object().map(|o| o.len()),
            Some(3),
            "name, description, input_schema only"
        );
        let full = render(Format::Json, &tools);
        assert_eq!(full[0]["side"], "server");
        assert_eq!(full[0]["writes"], false);
        assert_eq!(full[0]["modelName"], "workspace_read_file");
        assert!(full[0]["resultSchema"]["anyOf"].is_array());
    }

    #[test]
    fn model_names_map_back_one_to_one() {
        let mut seen = Vec::new();
        for t in patchspec_engine::REGISTRY {
            let name = model_name(t.name);
            assert!(name.len() <= MAX_MODEL_NAME_LEN, "{name}");
            assert!(!seen.contains(&name), "{name} would name two tools");
            assert_eq!(wire_name(&name), Some(t.name));
            assert_eq!(wire_name(t.name), Some(t.name));
            seen.push(name);
        }
        assert_eq!(model_name("workspace.read_file"), "workspace_read_file");
        assert_eq!(
            wire_name("workspace_read_file"),
            Some("workspace.read_file")
        );
        assert_eq!(wire_name("no_such_tool"), None);
    }

    #[test]
    fn selection_keeps_the_order_given_and_names_the_unknown() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let picked = select(&names(&["call_chain", "workspace_read_file"])).unwrap();
        let got: Vec<&str> = picked.iter().map(|t| t.name).collect();
        assert_eq!(got, ["call_chain", "workspace.read_file"]);
        assert_eq!(select(&[]).unwrap().len(), patchspec_engine::REGISTRY.len());
        let e = select(&names(&["apply_patch", "nope"])).unwrap_err();
        assert!(e.contains("\"nope\"") && e.contains("apply_patch"), "{e}");
    }

    #[test]
    fn the_format_check_catches_what_the_apis_refuse() {
        let tool = |name: &str, schema: Value| json!([{"type": "function", "function": {"name": name, "description": "d", "parameters": schema}}]);
        let object = json!({"type": "object", "properties": {}});
        assert_eq!(
            check_format(Format::Openai, &tool("ok_name-1", object.clone())),
            Ok(())
        );
        assert!(
            check_format(Format::Openai, &tool("workspace.read_file", object.clone())).is_err()
        );
        assert!(check_format(Format::Openai, &tool(&"x".repeat(65), object.clone())).is_err());
        assert!(check_format(Format::Openai, &tool("a", json!({"type": "string"}))).is_err());
        assert!(check_format(
            Format::Openai,
            &tool("a", json!({"type": "object", "anyOf": [object.clone()]}))
        )
        .is_err());
        let mcp = |name: &str, output: Value| json!({"tools": [{"name": name, "description": "d", "inputSchema": object, "outputSchema": output}]});
        assert_eq!(
            check_format(Format::Mcp, &mcp("workspace.read_file", object.clone())),
            Ok(())
        );
        assert!(check_format(Format::Mcp, &mcp("a", json!({"anyOf": []}))).is_err());
        assert!(check_format(Format::Mcp, &mcp("a b", object.clone())).is_err());
        let twice = json!([
            {"name": "a", "description": "d", "input_schema": object},
            {"name": "a", "description": "d", "input_schema": object},
        ]);
        assert!(check_format(Format::Anthropic, &twice).is_err());
    }

    #[test]
    fn schemas_are_written_and_stale_ones_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gone.params.json"), "{}").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "kept").unwrap();
        let tools = select(&["apply_patch".into()]).unwrap();
        let names = write_schemas(dir.path(), &tools).unwrap();
        assert_eq!(
            names,
            ["apply_patch.params.json", "apply_patch.result.json"]
        );
        assert!(!dir.path().join("gone.params.json").exists());
        assert!(dir.path().join("notes.txt").exists());
        let text = std::fs::read_to_string(dir.path().join("apply_patch.params.json")).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(schema["required"], json!(["patch"]));
    }
}
