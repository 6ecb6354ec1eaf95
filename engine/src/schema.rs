//! The JSON Schema of a Rust type as the tool catalog publishes it
//! ([`schema_of`]): below the tools, whose registry holds one schema
//! function per params and result type, and the catalog, which reads them.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The `format` values JSON Schema 2020-12 defines (the format vocabulary);
/// schemars adds its own (`uint`, `uint64`, `int32`, `double`...), which
/// validators report as unknown on every schema they compile.
pub(crate) const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Remove every `format` that is not one of [`STANDARD_FORMATS`]. An
/// unsigned one (`uint…`) says "not negative": it becomes `minimum: 0`
/// unless the schema has a minimum already.
fn standard_formats_only(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let format = map.get("format").and_then(Value::as_str).map(str::to_owned);
            if let Some(format) = format.filter(|f| !STANDARD_FORMATS.contains(&f.as_str())) {
                map.remove("format");
                if format.starts_with("uint") && !map.contains_key("minimum") {
                    map.insert("minimum".into(), 0.into());
                }
            }
            map.values_mut().for_each(standard_formats_only);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats_only),
        _ => {}
    }
}

/// The schema of `T` as the catalog publishes it: draft 2020-12, every
/// subschema inlined (no `$ref`/`$defs`: model APIs and MCP clients differ
/// in how they resolve references, and none of these types is recursive).
/// The registry holds `schema_of::<TheType>` for each tool; the catalog
/// publishes what it returns.
///
/// The root's description is dropped (the type's doc comment is written for
/// Rust readers; the tool's catalog description is the text for a model);
/// descriptions deeper down are the fields' doc comments, unwrapped.
///
/// Only JSON Schema's standard formats ([`STANDARD_FORMATS`]): schemars'
/// own (`uint`, `uint64`) are removed, an unsigned one leaving
/// `minimum: 0`.
///
/// A document that is one of several shapes (success or failure) is an
/// `anyOf` of object schemas; it also gets `"type": "object"` at the top,
/// which MCP's `outputSchema` and the model APIs' parameter schemas require
/// and which every branch already implies.
pub(crate) fn schema_of<T: JsonSchema>() -> Schema {
    let mut schema = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    if schema.get("type").is_none() {
        schema.insert("type".into(), "object".into());
    }
    // The root type's doc comment speaks to Rust readers (which parser,
    // which module); the model reads the tool's catalog description instead.
    schema.remove("description");
    if let Some(root) = schema.as_object_mut() {
        unwrap_members(root);
        root.values_mut().for_each(standard_formats_only);
    }
    schema
}

/// Doc comments are wrapped at 80 columns; a description is one paragraph
/// per blank-line-separated block, so single line breaks become spaces.
fn unwrap_members(map: &mut serde_json::Map<String, Value>) {
    for (key, v) in map.iter_mut() {
        match v {
            Value::String(text) if key == "description" => *text = unwrap_lines(text),
            _ => unwrap_descriptions(v),
        }
    }
}

fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => unwrap_members(map),
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_formats_become_a_minimum() {
        let mut unsigned = serde_json::json!({"type": "integer", "format": "uint64"});
        standard_formats_only(&mut unsigned);
        assert_eq!(
            unsigned,
            serde_json::json!({"type": "integer", "minimum": 0})
        );
    }

    #[test]
    fn descriptions_are_unwrapped_paragraphs() {
        assert_eq!(unwrap_lines("a\nb\n\nc\n d"), "a b\n\nc d");
    }
}
