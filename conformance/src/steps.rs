//! Multi-step cases: the calls a case makes in its workspace before its own
//! `call` (`steps`), each with its own expected result, and the templates
//! through which a later call uses an earlier result
//! (`{{steps.0.result.batchId}}`).
//!
//! A template is `{{steps.N.result}}` followed by `.member` or `.index`
//! parts, naming a value of step N's result document. A string that is one
//! template becomes that value (of any JSON type); a template inside a
//! longer string becomes its text (a string as is, anything else as JSON).
//! Step N may only be named by a later step or by the case's own call, in
//! its params or in its expected result (a step's own pattern may name the
//! steps before it): `"batchId": "{{steps.0.result.result.batchId}}"` in
//! a pattern asks for exactly the value step 0 returned.
//!
//! One more template needs no step: `{{workspaceRoot}}`, the workspace's
//! absolute path exactly as the `TOOL_CALL` gives it (`workspaceRoot`), for
//! the behaviours that depend on where the workspace is (an absolute path
//! inside it, say). docs/case-format.md, "Multi-step cases".

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One call before the case's own.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The tool's wire name.
    pub tool: String,
    /// The tool's params (may hold templates naming earlier steps).
    pub call: Map<String, Value>,
    /// What the step must produce.
    pub expect: StepExpect,
}

/// A step's expectation: its result document only (the tree is checked
/// after the case's own call).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StepExpect {
    /// A pattern for the step's result document ([`crate::pattern`]).
    pub result: Value,
}

const OPEN: &str = "{{steps.";
const CLOSE: &str = "}}";
/// The template of the workspace's absolute path.
pub const WORKSPACE_ROOT: &str = "{{workspaceRoot}}";

/// A parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Template {
    /// A value of step `step`'s result document, at `path`.
    Step { step: usize, path: Vec<String> },
    /// The workspace's absolute path.
    WorkspaceRoot,
}

/// What templates are resolved against: the result documents of the steps
/// so far, in order, and the workspace's absolute path as the `TOOL_CALL`
/// gives it.
#[derive(Clone, Copy, Debug)]
pub struct Resolved<'a> {
    /// The steps' result documents so far.
    pub results: &'a [Value],
    /// The `TOOL_CALL`'s `workspaceRoot`.
    pub workspace_root: &'a str,
}

/// The template starting at `text` (just after `{{steps.`, up to `}}`).
fn parse_template(inner: &str) -> Result<Template, String> {
    let mut parts = inner.split('.');
    let step = parts
        .next()
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or_else(|| format!("{{{{steps.{inner}}}}}: the step must be a number"))?;
    if parts.next() != Some("result") {
        return Err(format!(
            "{{{{steps.{inner}}}}}: a template names `steps.N.result` and a path in it"
        ));
    }
    let path: Vec<String> = parts.map(str::to_string).collect();
    if path.iter().any(String::is_empty) {
        return Err(format!("{{{{steps.{inner}}}}}: an empty path part"));
    }
    Ok(Template::Step { step, path })
}

/// Every template in a string, in order, with its byte span.
fn templates(text: &str) -> Vec<(std::ops::Range<usize>, Result<Template, String>)> {
    let mut out = Vec::new();
    let mut from = 0;
    loop {
        let step_at = text[from..].find(OPEN).map(|i| from + i);
        let root_at = text[from..].find(WORKSPACE_ROOT).map(|i| from + i);
        let start = match (step_at, root_at) {
            (_, Some(r)) if step_at.is_none_or(|s| r < s) => {
                out.push((r..r + WORKSPACE_ROOT.len(), Ok(Template::WorkspaceRoot)));
                from = r + WORKSPACE_ROOT.len();
                continue;
            }
            (Some(s), _) => s,
            (None, _) => break,
        };
        let inner_start = start + OPEN.len();
        match text[inner_start..].find(CLOSE) {
            Some(len) => {
                let end = inner_start + len + CLOSE.len();
                out.push((
                    start..end,
                    parse_template(&text[inner_start..inner_start + len]),
                ));
                from = end;
            }
            None => {
                out.push((
                    start..text.len(),
                    Err(format!(
                        "{:?}: a template without its closing }}}}",
                        &text[start..]
                    )),
                ));
                break;
            }
        }
    }
    out
}

/// Every string of a JSON value with its JSON path.
fn strings<'v>(at: &str, value: &'v Value, out: &mut Vec<(String, &'v str)>) {
    match value {
        Value::String(s) => out.push((at.to_string(), s)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(&format!("{at}[{i}]"), item, out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                strings(&format!("{at}.{k}"), v, out);
            }
        }
        _ => {}
    }
}

/// The templates of a call (`at` its JSON path) that are malformed or name
/// a step that does not come before it (`earlier` steps do).
pub fn template_problems(at: &str, call: &Value, earlier: usize) -> Vec<(String, String)> {
    let mut found = Vec::new();
    strings(at, call, &mut found);
    let mut problems = Vec::new();
    for (path, text) in found {
        for (_, template) in templates(text) {
            match template {
                Err(e) => problems.push((path.clone(), e)),
                Ok(Template::Step { step, .. }) if step >= earlier => problems.push((
                    path.clone(),
                    format!("names step {step} but only {earlier} step(s) come before this call"),
                )),
                Ok(_) => {}
            }
        }
    }
    problems
}

/// The structural problems of a case's `steps` (`$.steps`): each an object
/// with `tool`, `call` and `expect.result`, each result a valid pattern,
/// each template naming an earlier step.
pub fn problems(steps: &Value) -> Vec<(String, String)> {
    let Some(items) = steps.as_array() else {
        return vec![(
            "$.steps".into(),
            "must be an array of steps ({tool, call, expect})".into(),
        )];
    };
    let mut out = Vec::new();
    if items.is_empty() {
        out.push(("$.steps".into(), "must not be empty when present".into()));
    }
    for (i, item) in items.iter().enumerate() {
        let at = format!("$.steps[{i}]");
        let Some(map) = item.as_object() else {
            out.push((at, "must be an object ({tool, call, expect})".into()));
            continue;
        };
        for key in map.keys() {
            if !matches!(key.as_str(), "tool" | "call" | "expect") {
                out.push((format!("{at}.{key}"), "unknown member".into()));
            }
        }
        match map.get("tool").and_then(Value::as_str) {
            Some(t) if !t.trim().is_empty() => {}
            _ => out.push((format!("{at}.tool"), "must be a non-empty string".into())),
        }
        match map.get("call") {
            Some(call @ Value::Object(_)) => {
                out.extend(template_problems(&format!("{at}.call"), call, i))
            }
            _ => out.push((
                format!("{at}.call"),
                "must be an object (the tool's params)".into(),
            )),
        }
        let result = map
            .get("expect")
            .and_then(Value::as_object)
            .filter(|e| e.keys().all(|k| k == "result"))
            .and_then(|e| e.get("result"));
        match result {
            Some(result) => {
                out.extend(template_problems(&format!("{at}.expect.result"), result, i));
                for (path, message) in crate::pattern::check_pattern(result) {
                    out.push((
                        format!("{at}.expect.result{}", path.trim_start_matches('$')),
                        message,
                    ));
                }
            }
            None => out.push((
                format!("{at}.expect"),
                "must be an object with `result` only (a step's tree is not checked)".into(),
            )),
        }
    }
    out
}

/// The value a template names.
fn resolve(template: &Template, with: Resolved<'_>) -> Result<Value, String> {
    let (step, path) = match template {
        Template::WorkspaceRoot => return Ok(Value::String(with.workspace_root.to_string())),
        Template::Step { step, path } => (*step, path),
    };
    let mut at = with
        .results
        .get(step)
        .ok_or_else(|| format!("{{{{steps.{step}.result…}}}}: step {step} has no result"))?;
    for part in path {
        let next = match at {
            Value::Object(map) => map.get(part),
            Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        at = next.ok_or_else(|| {
            format!(
                "{{{{steps.{step}.result.{}}}}}: step {step}'s result has no {part:?} there",
                path.join("."),
            )
        })?;
    }
    Ok(at.clone())
}

fn substitute_value(value: &Value, with: Resolved<'_>) -> Result<Value, String> {
    Ok(match value {
        Value::String(text) => {
            let found = templates(text);
            if found.is_empty() {
                return Ok(value.clone());
            }
            if found.len() == 1 && found[0].0 == (0..text.len()) {
                let template = found[0].1.as_ref().map_err(Clone::clone)?;
                return resolve(template, with);
            }
            let mut out = String::new();
            let mut from = 0;
            for (span, template) in &found {
                out.push_str(&text[from..span.start]);
                match resolve(template.as_ref().map_err(Clone::clone)?, with)? {
                    Value::String(s) => out.push_str(&s),
                    other => out.push_str(&other.to_string()),
                }
                from = span.end;
            }
            out.push_str(&text[from..]);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute_value(v, with))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(substitute(map, with)?),
        other => other.clone(),
    })
}

/// A pattern (or any JSON value) with every template replaced by what it
/// names.
pub fn substitute_any(value: &Value, with: Resolved<'_>) -> Result<Value, String> {
    substitute_value(value, with)
}

/// A call's params with every template replaced by what it names.
pub fn substitute(
    call: &Map<String, Value>,
    with: Resolved<'_>,
) -> Result<Map<String, Value>, String> {
    call.iter()
        .map(|(k, v)| Ok((k.clone(), substitute_value(v, with)?)))
        .collect()
}

/// `value` with every `{{workspaceRoot}}` replaced by `root` and the step
/// templates left as written (for `patchspec repro`, whose requests are
/// sent by hand).
pub fn fill_workspace_root(value: &mut Value, root: &str) {
    match value {
        Value::String(text) if text.contains(WORKSPACE_ROOT) => {
            *text = text.replace(WORKSPACE_ROOT, root);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| fill_workspace_root(v, root)),
        Value::Object(map) => map.values_mut().for_each(|v| fill_workspace_root(v, root)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn at(results: &[Value]) -> Resolved<'_> {
        Resolved {
            results,
            workspace_root: "/tmp/ws",
        }
    }

    #[test]
    fn the_workspace_root_template_needs_no_step_and_mixes_with_step_templates() {
        let results = vec![json!({"id": "b-1"})];
        let call = map(json!({
            "root": "{{workspaceRoot}}",
            "patch": "*** Delete File: {{workspaceRoot}}/a.txt {{steps.0.result.id}} {{workspaceRoot}}",
            "plain": "{{workspace}}"
        }));
        assert_eq!(
            Value::Object(substitute(&call, at(&results)).unwrap()),
            json!({
                "root": "/tmp/ws",
                "patch": "*** Delete File: /tmp/ws/a.txt b-1 /tmp/ws",
                "plain": "{{workspace}}"
            })
        );
        assert!(template_problems("$.call", &call.clone().into(), 1).is_empty());
        let mut by_hand = Value::Object(call);
        fill_workspace_root(&mut by_hand, "/r");
        assert_eq!(
            by_hand["patch"],
            "*** Delete File: /r/a.txt {{steps.0.result.id}} /r"
        );
        assert_eq!(
            template_problems("$.steps[0].call", &json!({"p": "{{workspaceRoot}}"}), 0),
            Vec::<(String, String)>::new()
        );
    }

    #[test]
    fn a_whole_string_template_keeps_the_type_and_an_inner_one_becomes_text() {
        let results = vec![json!({"batchId": "batch-1", "files": [{"n": 3}]})];
        let call = map(json!({
            "batchId": "{{steps.0.result.batchId}}",
            "n": "{{steps.0.result.files.0.n}}",
            "note": "id {{steps.0.result.batchId}} n={{steps.0.result.files.0.n}}!",
            "nested": [{"x": "{{steps.0.result.files}}"}],
            "plain": "{{not a template}}"
        }));
        assert_eq!(
            Value::Object(substitute(&call, at(&results)).unwrap()),
            json!({
                "batchId": "batch-1",
                "n": 3,
                "note": "id batch-1 n=3!",
                "nested": [{"x": [{"n": 3}]}],
                "plain": "{{not a template}}"
            })
        );
    }

    #[test]
    fn a_missing_member_or_step_is_an_error_naming_it() {
        let results = vec![json!({"a": [1]})];
        for (text, says) in [
            ("{{steps.0.result.b}}", "has no \"b\""),
            ("{{steps.0.result.a.5}}", "has no \"5\""),
            ("{{steps.1.result}}", "step 1 has no result"),
            ("{{steps.x.result}}", "must be a number"),
            ("{{steps.0.other}}", "names `steps.N.result`"),
            ("{{steps.0.result", "without its closing"),
        ] {
            let err = substitute(&map(json!({"v": text})), at(&results)).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn steps_are_checked_for_shape_and_for_naming_only_earlier_steps() {
        let ok = json!([
            {"tool": "t", "call": {}, "expect": {"result": {"success": true}}},
            {"tool": "t", "call": {"id": "{{steps.0.result.id}}"}, "expect": {"result": {}}}
        ]);
        assert_eq!(problems(&ok), Vec::<(String, String)>::new());
        let bad = json!([
            {"tool": "", "call": {"id": "{{steps.0.result.id}}"}, "expect": {"result": {}, "files": {}}, "x": 1}
        ]);
        let paths: Vec<String> = problems(&bad).into_iter().map(|p| p.0).collect();
        assert_eq!(
            paths,
            [
                "$.steps[0].x",
                "$.steps[0].tool",
                "$.steps[0].call.id",
                "$.steps[0].expect"
            ]
        );
        assert_eq!(problems(&json!([])).len(), 1);
        assert_eq!(
            template_problems("$.call", &json!({"a": "{{steps.2.result}}"}), 2).len(),
            1
        );
    }
}
