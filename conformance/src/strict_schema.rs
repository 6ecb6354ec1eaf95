//! Params schemas in the shape the model APIs' strict modes accept:
//! `patchspec catalog --strict` (OpenAI Chat Completions and Responses
//! `strict: true`, Anthropic `strict: true` tool use).
//!
//! Main functions: [`strict`] turns a catalog params schema into its strict
//! shape; [`violations`] lists where a schema breaks [`the rules`](violations),
//! the ones docs/catalog.md writes down (the intersection of both
//! providers' documented strict subsets, so one shape serves both).
//!
//! The shape, member by member: every object closed
//! (`additionalProperties: false`) with every property `required`; a
//! member a call may leave out is nullable instead (`["integer", "null"]`),
//! and the engine reads `null` as absent, so the wire stays the same.
//! `oneOf` becomes `anyOf` (the branches exclude each other by a `const`
//! discriminant already), `const` a one-value `enum`, an `anyOf` of
//! constants one `enum`. Keywords outside the subset (numeric and length
//! bounds, `maxItems`, `minItems` above 1) are dropped and said in the
//! member's description, so the model still reads them; the engine still
//! enforces them. An optional free-form map (`apply_patch`'s
//! `expectedSha256ByPath`) has no strict form and is left out: a harness
//! that wants the stale-file guard adds it to the call itself.
//!
//! What it leaves out: result schemas (no provider constrains them).

use serde_json::{json, Map, Value};

/// The keywords a strict schema may use.
pub const ALLOWED_KEYWORDS: [&str; 10] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "description",
    "pattern",
    "minItems",
];

/// The types a strict schema may name.
const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// The deepest nesting of objects OpenAI's strict mode accepts.
pub const MAX_OBJECT_DEPTH: usize = 10;

/// The most properties (over all objects of one schema) OpenAI accepts.
pub const MAX_PROPERTIES: usize = 5000;

/// The strict shape of a params schema (`$schema` and `title` already
/// removed, as the model formats render it).
pub fn strict(schema: &Value) -> Value {
    let mut schema = schema.clone();
    strictify(&mut schema);
    schema
}

/// Bounds dropped from a member, said in its description.
const SAID_BOUNDS: [(&str, &str); 8] = [
    ("minimum", "at least"),
    ("exclusiveMinimum", "more than"),
    ("maximum", "at most"),
    ("exclusiveMaximum", "less than"),
    ("multipleOf", "a multiple of"),
    ("minLength", "characters: at least"),
    ("maxLength", "characters: at most"),
    ("maxItems", "items: at most"),
];

fn strictify(value: &mut Value) {
    let Some(map) = value.as_object_mut() else {
        if let Value::Array(items) = value {
            items.iter_mut().for_each(strictify);
        }
        return;
    };
    if let Some(one_of) = map.remove("oneOf") {
        map.insert("anyOf".into(), one_of);
    }
    if let Some(constant) = map.remove("const") {
        map.insert("enum".into(), json!([constant]));
    }
    let mut said = Vec::new();
    for (key, words) in SAID_BOUNDS {
        if let Some(bound) = map.remove(key) {
            said.push(format!("{words} {bound}"));
        }
    }
    if let Some(min) = map.get("minItems").and_then(Value::as_u64) {
        if min > 1 {
            map.remove("minItems");
            said.push(format!("items: at least {min}"));
        }
    }
    if !said.is_empty() {
        let text = format!("({})", said.join(", "));
        let description = match map.get("description").and_then(Value::as_str) {
            Some(d) => format!("{d} {text}"),
            None => text,
        };
        map.insert("description".into(), description.into());
    }
    for key in [
        "format",
        "default",
        "title",
        "$schema",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
    ] {
        map.remove(key);
    }
    if let Some(Value::Object(members)) = map.get_mut("properties") {
        members.values_mut().for_each(strictify);
    }
    for child in ["items", "anyOf"] {
        if let Some(v) = map.get_mut(child) {
            strictify(v);
        }
    }
    flatten_any_of(map);
    if map.contains_key("properties") {
        close_object(map);
    }
}

/// `anyOf` of `anyOf`s spliced into one; an `anyOf` whose branches are all
/// constants (`enum`, with at most `type` and `description` beside) one
/// `enum`.
fn flatten_any_of(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.remove("anyOf") else {
        return;
    };
    let mut flat = Vec::new();
    for branch in branches {
        match branch {
            Value::Object(mut b) if b.contains_key("anyOf") && b.len() <= 2 => {
                if let Some(Value::Array(inner)) = b.remove("anyOf") {
                    flat.extend(inner);
                }
            }
            other => flat.push(other),
        }
    }
    let constants = flat.iter().all(|b| {
        b.as_object().is_some_and(|o| {
            o.contains_key("enum")
                && o.keys()
                    .all(|k| matches!(k.as_str(), "enum" | "type" | "description"))
        })
    });
    if constants && !flat.is_empty() {
        let mut types: Vec<Value> = Vec::new();
        let mut values: Vec<Value> = Vec::new();
        for b in &flat {
            for t in type_list(b) {
                if !types.contains(&t) {
                    types.push(t);
                }
            }
            values.extend(b["enum"].as_array().into_iter().flatten().cloned());
        }
        map.insert(
            "type".into(),
            if types.len() == 1 {
                types.remove(0)
            } else {
                Value::Array(types)
            },
        );
        map.insert("enum".into(), Value::Array(values));
    } else {
        map.insert("anyOf".into(), Value::Array(flat));
    }
}

fn type_list(schema: &Value) -> Vec<Value> {
    match schema.get("type") {
        Some(Value::Array(t)) => t.clone(),
        Some(t) => vec![t.clone()],
        None => Vec::new(),
    }
}

/// Every property required, the optional ones nullable; no other
/// property allowed. An optional free-form map is left out.
fn close_object(map: &mut Map<String, Value>) {
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
    let Some(Value::Object(properties)) = map.get_mut("properties") else {
        return;
    };
    properties.retain(|name, member| required.contains(name) || !is_free_map(member));
    for (name, member) in properties.iter_mut() {
        if !required.contains(name) {
            make_nullable(member);
        }
    }
    let all: Vec<Value> = properties.keys().cloned().map(Value::from).collect();
    map.insert("required".into(), Value::Array(all));
    map.insert("additionalProperties".into(), false.into());
}

/// An object whose members are not named (`additionalProperties` a schema).
fn is_free_map(member: &Value) -> bool {
    member
        .get("additionalProperties")
        .is_some_and(|a| a.is_object())
        && member.get("properties").is_none()
}

fn make_nullable(member: &mut Value) {
    let Some(map) = member.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type") == Some(&json!("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&json!("null")) => types.push("null".into()),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
}

/// Where `schema` (a params schema at the top) breaks the strict rules, as
/// `path: rule` lines; empty when it keeps them all.
///
/// The rules: the top is an object schema (no `anyOf` there); only
/// [`ALLOWED_KEYWORDS`]; every schema names its `type` (from the JSON
/// types) or is an `anyOf`; every object has `properties`, lists each of
/// them in `required` and has `additionalProperties: false`; an `enum` only
/// holds values of its `type`; `minItems` is 0 or 1; a `pattern` has no
/// lookaround and no backreference; at most [`MAX_OBJECT_DEPTH`] nested
/// objects and [`MAX_PROPERTIES`] properties.
pub fn violations(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if schema.get("type") != Some(&json!("object")) || schema.get("anyOf").is_some() {
        found.push("/: the top must be an object schema without anyOf".to_string());
    }
    let mut properties = 0;
    check(schema, "", 0, &mut properties, &mut found);
    if properties > MAX_PROPERTIES {
        found.push(format!("/: {properties} properties, over {MAX_PROPERTIES}"));
    }
    found
}

fn check(
    schema: &Value,
    path: &str,
    depth: usize,
    properties: &mut usize,
    found: &mut Vec<String>,
) {
    let Some(map) = schema.as_object() else {
        found.push(format!("{path}/: not a schema object"));
        return;
    };
    for key in map.keys() {
        if !ALLOWED_KEYWORDS.contains(&key.as_str()) {
            found.push(format!("{path}/{key}: keyword not in the strict subset"));
        }
    }
    let types = type_list(schema);
    if types.is_empty() && !map.contains_key("anyOf") {
        found.push(format!("{path}/: no type"));
    }
    for t in &types {
        if !t.as_str().is_some_and(|t| TYPES.contains(&t)) {
            found.push(format!("{path}/type: {t} is not a JSON type"));
        }
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        for v in values {
            let kind = match v {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) | Value::Object(_) => "composite",
            };
            let fits = types
                .iter()
                .any(|t| t == kind || (kind == "integer" && t == "number"));
            if !fits {
                found.push(format!("{path}/enum: {v} is not of its type"));
            }
        }
    }
    if let Some(min) = map.get("minItems") {
        if !matches!(min.as_u64(), Some(0 | 1)) {
            found.push(format!("{path}/minItems: {min} (only 0 or 1)"));
        }
    }
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        let lookaround = ["(?=", "(?!", "(?<=", "(?<!"]
            .iter()
            .any(|l| pattern.contains(l));
        let backreference = pattern
            .as_bytes()
            .windows(2)
            .any(|w| w[0] == b'\\' && w[1].is_ascii_digit() && w[1] != b'0');
        if lookaround || backreference {
            found.push(format!("{path}/pattern: lookaround or backreference"));
        }
    }
    let is_object = types.iter().any(|t| t == "object");
    let depth = depth + usize::from(is_object);
    if depth > MAX_OBJECT_DEPTH {
        found.push(format!(
            "{path}/: objects nested deeper than {MAX_OBJECT_DEPTH}"
        ));
    }
    if is_object {
        match map.get("properties").and_then(Value::as_object) {
            None => found.push(format!("{path}/: an object without properties")),
            Some(members) => {
                *properties += members.len();
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for name in members.keys() {
                    if !required.contains(&name.as_str()) {
                        found.push(format!("{path}/required: {name:?} is not required"));
                    }
                }
                for (name, member) in members {
                    check(
                        member,
                        &format!("{path}/properties/{name}"),
                        depth,
                        properties,
                        found,
                    );
                }
            }
        }
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            found.push(format!("{path}/additionalProperties: not false"));
        }
    }
    if let Some(items) = map.get("items") {
        check(items, &format!("{path}/items"), depth, properties, found);
    }
    if let Some(branches) = map.get("anyOf").and_then(Value::as_array) {
        for (i, b) in branches.iter().enumerate() {
            check(b, &format!("{path}/anyOf/{i}"), depth, properties, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_catch_what_strict_modes_refuse() {
        let ok = json!({"type": "object", "properties": {"a": {"type": ["integer", "null"]}},
                        "required": ["a"], "additionalProperties": false});
        assert_eq!(violations(&ok), Vec::<String>::new());
        let cases = [
            json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {}, "required": []}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1}}, "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}, "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "uint"}}, "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x", 1]}}, "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(a)\\1"}}, "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"description": "untyped"}}, "required": ["a"], "additionalProperties": false}),
            json!({"anyOf": [{"type": "object"}]}),
        ];
        for schema in cases {
            assert!(!violations(&schema).is_empty(), "{schema}");
        }
    }

    #[test]
    fn the_strict_shape_closes_objects_and_makes_optional_members_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "pattern": "\\S"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many."},
                "map": {"type": "object", "additionalProperties": {"type": "string"}},
                "mode": {"oneOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]},
                "changes": {"type": "array", "minItems": 2, "items": {"oneOf": [
                    {"type": "object", "properties": {"op": {"type": "string", "const": "x"}, "n": {"type": "null"}},
                     "required": ["op"], "additionalProperties": false}
                ]}}
            },
            "required": ["path"]
        });
        let s = strict(&schema);
        assert_eq!(violations(&s), Vec::<String>::new(), "{s:#}");
        assert_eq!(s["required"], json!(["path", "limit", "mode", "changes"]));
        assert!(s["properties"].get("map").is_none());
        assert_eq!(s["properties"]["limit"]["type"], json!(["integer", "null"]));
        assert_eq!(
            s["properties"]["limit"]["description"],
            "How many. (at least 1, at most 10)"
        );
        assert_eq!(s["properties"]["mode"]["enum"], json!(["a", "b", null]));
        let change = &s["properties"]["changes"]["items"]["anyOf"][0];
        assert_eq!(change["required"], json!(["op", "n"]));
        assert_eq!(change["properties"]["op"]["enum"], json!(["x"]));
    }
}
