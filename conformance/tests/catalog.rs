//! The tool catalog's JSON Schemas against the corpus, with a real JSON
//! Schema 2020-12 validator (the `jsonschema` crate):
//!
//! - params: every case's params are judged by the tool's own parser
//!   (accepted, or rejected as invalid params) and by the tool's params
//!   schema; the two must agree. The parser rejections a JSON Schema cannot
//!   express (the ordering of a batch's changes, `endLine ≥ startLine`, …:
//!   [`OUT_OF_REACH`]) are counted apart, never asserted;
//! - results: every result document the reference engine produces over the
//!   corpus (run in-process, as `patchspec lint` does) is valid against the
//!   tool's result schema;
//! - the schemas in docs/schemas/ are the ones the engine generates now.
//!
//! The figures (cases validated, rejections, out of reach) are printed with
//! `--nocapture` and written in docs/catalog.md.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use patchspec_conformance::case::Case;
use patchspec_conformance::catalog::schema_files;
use patchspec_conformance::corpus_source;
use patchspec_conformance::event::{Event, Reporter};
use patchspec_conformance::run::{run, RunConfig, Runner};
use patchspec_conformance::transport::inprocess::InProcess;
use patchspec_conformance::transport::Executor;
use patchspec_engine::catalog::{catalog, definition};
use patchspec_engine::dispatch::Session;
use patchspec_engine::tools::ide;
use patchspec_engine::tools::tul::{create_file, read_file, write_patch};
use serde_json::Value;

/// Parser rejections that no JSON Schema states, as `tool: code` (for the
/// IDE tools `tool: field/reason`): they depend on two fields together, on
/// the order of array items, or on more than a regex can portably say.
/// docs/catalog.md lists them with the reason.
const OUT_OF_REACH: &[&str] = &[
    // apply_patch: two keys of expectedSha256ByPath naming one file.
    "apply_patch: conflicting_expected_sha256",
    // workspace_write_patch: across fields or items; a capital outside
    // ASCII (the pattern refuses `A-Z`; Unicode classes such as `\p{Lu}`
    // are not portable across validators: Python's `re` lacks them).
    "workspace_write_patch: duplicate_doc_path",
    "workspace_write_patch: doc_path_not_lowercase",
    "workspace_write_patch: end_line_before_start",
    "workspace_write_patch: expected_lines_length_mismatch",
    "workspace_write_patch: changes_out_of_order",
    "workspace_write_patch: changes_overlap",
    // read_file: `line` with `start_line`/`end_line`; `end_line` before `start_line`.
    "read_file: line/conflict",
    "read_file: end_line/out_of_range",
    // call_chain: each dotted part a Java identifier (Unicode classes).
    "call_chain: method/invalid_value",
    // grep_file: a file_type that is no ripgrep type name nor `.ext`.
    "grep_file: file_type/invalid_value",
    // get_patch_change: filePatchId and changeId together (the tool
    // formats allow no top-level `not`).
    "get_patch_change: both_ids",
];

/// What a tool's own parser says about some params.
#[derive(Debug)]
enum Verdict {
    Accepted,
    /// Rejected for a reason the schema states (the codes).
    Rejected(Vec<String>),
    /// Rejected only for reasons out of a schema's reach.
    OutOfReach,
}

fn verdict(tool: &str, params: &Value, result: &Value) -> Verdict {
    let codes: Vec<String> = match tool {
        "apply_patch" => match result["error"]["details"]["reason"].as_str() {
            Some(r @ ("invalid_params" | "malformed_sha256" | "conflicting_expected_sha256")) => {
                vec![r.to_string()]
            }
            _ => vec![],
        },
        "workspace_write_patch" => match write_patch::validate(params) {
            Ok(_) => vec![],
            Err(errors) => errors.iter().map(|e| e.code.as_str().to_string()).collect(),
        },
        "workspace_create_file" => match create_file::parse_params(params) {
            Ok(_) => vec![],
            Err(r) => vec![r.error_code.map(|c| c.as_str()).unwrap_or("?").to_string()],
        },
        "workspace.read_file" => match read_file::check_args(params, &Session::default()) {
            Ok(_) => vec![],
            Err(e) => vec![e.code.as_str().to_string()],
        },
        "read_file" => ide_codes(ide::read_file::parse(params).err()),
        "grep_file" => ide_codes(ide::grep_file::parse(params).err()),
        "apply_change" => ide_codes(ide::apply_change::parse(params).err()),
        "call_chain" => ide_codes(ide::call_chain::parse(params).err()),
        // Its parser's only refusal is `invalid_params`, and it speaks first.
        "get_patch_change" => match result["error"]["kind"].as_str() {
            Some("invalid_params")
                if params["filePatchId"].is_string() && params["changeId"].is_string() =>
            {
                vec!["both_ids".to_string()]
            }
            Some("invalid_params") => vec!["invalid_params".to_string()],
            _ => vec![],
        },
        other => panic!("no parser verdict for {other}: add the tool here"),
    };
    if codes.is_empty() {
        Verdict::Accepted
    } else if codes
        .iter()
        .all(|c| OUT_OF_REACH.contains(&format!("{tool}: {c}").as_str()))
    {
        Verdict::OutOfReach
    } else {
        Verdict::Rejected(codes)
    }
}

/// `v` without its `null` members, at every depth (what the parsers read
/// an explicit `null` of an optional member as).
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// True when a number in `v` is written as a float with no fractional
/// part (`3.0`, `1e2`).
fn has_integral_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0),
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(map) => map.values().any(has_integral_float),
        _ => false,
    }
}

fn ide_codes(e: Option<ide::IdeError>) -> Vec<String> {
    e.map(|e| {
        let s = |k: &str| {
            e.details
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        format!("{}/{}", s("field"), s("reason"))
    })
    .into_iter()
    .collect()
}

/// Every case's tool, params and the engine's result document.
struct Collect(Vec<(String, String, Value, Value)>);

impl Reporter for Collect {
    fn event(&mut self, event: &Event<'_>) -> std::io::Result<()> {
        if let Event::CaseFinished(r) = event {
            self.0.push((
                r.id.clone(),
                r.tool.clone(),
                r.params.clone(),
                r.result.clone().unwrap_or(Value::Null),
            ));
        }
        Ok(())
    }
}

/// Every case's tool, params and result document, from one in-process run
/// of the corpus shared by the tests of this file.
fn corpus_results() -> &'static [(String, String, Value, Value)] {
    static RESULTS: OnceLock<Vec<(String, String, Value, Value)>> = OnceLock::new();
    RESULTS.get_or_init(run_the_corpus)
}

fn run_the_corpus() -> Vec<(String, String, Value, Value)> {
    let corpus = corpus_source::embedded().expect("the embedded corpus loads");
    let cfg = RunConfig {
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        timeout: Duration::from_secs(30),
        ..RunConfig::default()
    };
    let engine = InProcess::default();
    let runner = Runner::new(&engine, &cfg).expect("runner");
    let selected: Vec<&Case> = corpus.cases.iter().collect();
    let header = cfg.header(
        &corpus,
        engine.info(),
        selected.len(),
        "catalog".into(),
        None,
    );
    let mut collect = Collect(Vec::new());
    let output = run(&runner, &header, &selected, Vec::new(), &mut [&mut collect]);
    assert!(
        !output.summary.is_unexpected(),
        "the corpus passes against the reference"
    );
    assert_eq!(collect.0.len(), corpus.cases.len());
    collect.0
}

fn validators() -> BTreeMap<&'static str, (jsonschema::Validator, jsonschema::Validator)> {
    catalog()
        .into_iter()
        .map(|t| {
            let params = jsonschema::draft202012::new(&t.params_schema)
                .unwrap_or_else(|e| panic!("{}: params schema: {e}", t.name));
            let result = jsonschema::draft202012::new(&t.result_schema)
                .unwrap_or_else(|e| panic!("{}: result schema: {e}", t.name));
            (t.name, (params, result))
        })
        .collect()
}

#[test]
fn params_and_results_of_every_corpus_case_agree_with_the_schemas() {
    let validators = validators();
    let results = corpus_results();
    let mut findings = Vec::new();
    let (mut accepted, mut rejected, mut out_of_reach, mut out_of_reach_rejected) = (0, 0, 0, 0);
    let mut integral_floats = 0;
    let mut null_as_absent = 0;
    let mut per_tool: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (id, tool, params, result) in results {
        let Some((params_schema, result_schema)) = validators.get(tool.as_str()) else {
            findings.push(format!("{id}: tool {tool} has no catalog entry"));
            continue;
        };
        let valid = params_schema.is_valid(params);
        let entry = per_tool.entry(tool.clone()).or_default();
        entry.0 += 1;
        match verdict(tool, params, result) {
            Verdict::Accepted => {
                accepted += 1;
                if !valid && params_schema.is_valid(&without_nulls(params)) {
                    // The schemas leave `null` out of optional members (a
                    // generic client then types the field); the parsers
                    // also read an explicit `null` as absent.
                    null_as_absent += 1;
                } else if !valid {
                    let why: Vec<String> = params_schema
                        .iter_errors(params)
                        .map(|e| format!("{}: {e}", e.instance_path()))
                        .collect();
                    findings.push(format!(
                        "{id}: the parser accepts the params, the schema does not: {}",
                        why.join("; ")
                    ));
                }
            }
            Verdict::Rejected(_) if valid && has_integral_float(params) => {
                // `3.0` is an integer to JSON Schema (2020-12 §6.1.1: a
                // number with a zero fractional part) and a wrong type to
                // the parsers, which want JSON integers: out of reach.
                out_of_reach += 1;
                integral_floats += 1;
            }
            Verdict::Rejected(codes) => {
                rejected += 1;
                entry.1 += 1;
                if valid {
                    findings.push(format!(
                        "{id}: the parser rejects the params ({}), the schema accepts them",
                        codes.join(", ")
                    ));
                }
            }
            Verdict::OutOfReach => {
                out_of_reach += 1;
                if !valid {
                    out_of_reach_rejected += 1;
                }
            }
        }
        for e in result_schema.iter_errors(result) {
            findings.push(format!(
                "{id}: result document at {}: {e}",
                e.instance_path()
            ));
        }
    }
    println!(
        "catalog schemas over the corpus: {} cases; params: {accepted} accepted by the parser \
         ({null_as_absent} of them valid once their explicit nulls are left out), \
         {rejected} invalid params rejected by both, {out_of_reach} rejected by the parser for a \
         reason out of a schema's reach ({integral_floats} integers written as floats; \
         {out_of_reach_rejected} rejected by the schema too); {} result documents valid",
        results.len(),
        results.len()
    );
    for (tool, (n, r)) in &per_tool {
        println!("  {tool}: {n} cases, {r} invalid params rejected by the schema");
    }
    assert!(
        findings.is_empty(),
        "{} findings:\n{}",
        findings.len(),
        findings.join("\n")
    );
    assert!(
        rejected > 30,
        "the corpus has invalid-params cases: {rejected}"
    );
}

#[test]
fn the_committed_schemas_are_the_generated_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schemas");
    let expected = schema_files(&catalog());
    let mut stale = Vec::new();
    for (name, text) in &expected {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(committed) if committed == *text => {}
            Ok(_) => stale.push(format!("{name} differs")),
            Err(e) => stale.push(format!("{name}: {e}")),
        }
    }
    for entry in std::fs::read_dir(&dir).expect("docs/schemas exists") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let schema_file = name.ends_with(".params.json") || name.ends_with(".result.json");
        if schema_file && !expected.iter().any(|(n, _)| *n == name) {
            stale.push(format!("{name} belongs to no tool"));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/schemas is stale ({}); regenerate with: \
         cargo run --bin patchspec -- catalog --write-schemas docs/schemas",
        stale.join("; ")
    );
}

#[test]
fn every_tool_is_in_the_catalog_with_schemas_that_compile() {
    let validators = validators();
    for name in patchspec_engine::dispatch::SUPPORTED_TOOLS {
        assert!(validators.contains_key(name), "{name}");
        assert!(definition(name).is_some(), "{name}");
    }
}

/// `params` in the strict shape of `schema`: every member the schema names
/// and the call left out, `null` (what a strict-mode model sends for an
/// optional member), and only those, at every depth; an `anyOf` item filled by the branch
/// its members fit (the one whose `enum` discriminants it matches).
fn strict_call(params: &Value, schema: &Value) -> Value {
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let fits = |b: &Value| {
            let (Some(members), Some(given)) = (
                b.get("properties").and_then(Value::as_object),
                params.as_object(),
            ) else {
                return false;
            };
            given.iter().all(|(k, v)| {
                members.get(k).is_some_and(|m| {
                    m.get("enum")
                        .and_then(Value::as_array)
                        .is_none_or(|values| values.contains(v))
                })
            })
        };
        return match branches.iter().find(|b| fits(b)) {
            Some(branch) => strict_call(params, branch),
            None => params.clone(),
        };
    }
    match (params, schema.get("properties").and_then(Value::as_object)) {
        (Value::Object(given), Some(members)) => {
            let mut out = serde_json::Map::new();
            for (name, member) in members {
                let value = given
                    .get(name)
                    .map_or(Value::Null, |v| strict_call(v, member));
                out.insert(name.clone(), value);
            }
            // Members the schema does not name (the protocol keys a
            // harness adds, `projectKey`…) are not the model's to send.
            Value::Object(out)
        }
        (Value::Array(items), _) => match schema.get("items") {
            Some(item) => Value::Array(items.iter().map(|v| strict_call(v, item)).collect()),
            None => params.clone(),
        },
        _ => params.clone(),
    }
}

/// The strict-mode shape keeps the wire: each corpus call the parser
/// accepts, sent as a strict-mode model sends it (every optional member
/// present as `null`), is valid against the strict schema and still
/// accepted by the tool's parser. Calls carrying `expectedSha256ByPath`
/// (left out of the strict shape) are counted apart.
#[test]
fn strict_calls_are_valid_and_accepted_by_the_parsers() {
    use patchspec_conformance::catalog::{model_name, render_strict, Format};
    use patchspec_engine::tools::tul::apply_patch;
    let tools = catalog();
    let rendered = render_strict(Format::Anthropic, &tools).expect("strict anthropic");
    let strict: BTreeMap<&str, (Value, jsonschema::Validator)> = tools
        .iter()
        .zip(rendered.as_array().expect("tools"))
        .map(|(t, r)| {
            assert_eq!(r["name"], model_name(t.name));
            let schema = r["input_schema"].clone();
            let validator = jsonschema::draft202012::new(&schema)
                .unwrap_or_else(|e| panic!("{}: strict schema: {e}", t.name));
            (t.name, (schema, validator))
        })
        .collect();
    let validators = validators();
    let (mut checked, mut guarded) = (0, 0);
    let mut findings = Vec::new();
    for (id, tool, params, result) in corpus_results() {
        let plain_valid = validators[tool.as_str()].0.is_valid(&without_nulls(params));
        if !plain_valid || !matches!(verdict(tool, params, result), Verdict::Accepted) {
            continue;
        }
        if params
            .get("expectedSha256ByPath")
            .is_some_and(|v| !v.is_null())
        {
            guarded += 1;
            continue;
        }
        let (schema, validator) = &strict[tool.as_str()];
        let call = strict_call(params, schema);
        checked += 1;
        for e in validator.iter_errors(&call) {
            findings.push(format!("{id}: strict schema at {}: {e}", e.instance_path()));
        }
        let accepted = match tool.as_str() {
            "apply_patch" => apply_patch::parse_params(&call).is_ok(),
            // Its parser answers through the engine; the strict shape
            // adds nothing but nulls to ids the parser reads as absent.
            "get_patch_change" => continue,
            _ => matches!(verdict(tool, &call, result), Verdict::Accepted),
        };
        if !accepted {
            findings.push(format!("{id}: the parser refuses the strict call {call}"));
        }
    }
    println!(
        "strict shape over the corpus: {checked} accepted calls valid against the strict \
         schema and accepted by their parser; {guarded} carry expectedSha256ByPath (not in the \
         strict shape)"
    );
    assert!(checked > 500, "{checked}");
    assert!(
        findings.is_empty(),
        "{} findings:\n{}",
        findings.len(),
        findings.join("\n")
    );
}
