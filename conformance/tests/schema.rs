//! The case schema and the case loader cannot drift: every case file of the
//! shipped corpus is valid against `corpus/schema/case.schema.json` (checked
//! by a real JSON Schema 2020-12 validator, not by our code), and a set of
//! structural mutations is rejected by both the schema and the loader's
//! hand-written rules (`case::validate`), while valid variations are accepted
//! by both — by the rules and by the whole loader (`case::parse_case`, which
//! also builds the case model). `patchspec lint` runs the loader; this test
//! keeps the schema that editors use honest.

use std::path::{Path, PathBuf};

use patchspec_conformance::case::{parse_case, validate};
use serde_json::{json, Value};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(corpus().join("schema/case.schema.json")).expect("schema");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read corpus") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "schema") {
                case_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

#[test]
fn every_corpus_case_is_valid_against_the_schema() {
    let validator = schema();
    let mut files = Vec::new();
    case_files(&corpus(), &mut files);
    assert!(files.len() > 100, "the corpus is there: {}", files.len());
    let mut problems = Vec::new();
    for file in &files {
        let value: Value =
            serde_json::from_slice(&std::fs::read(file).expect("read")).expect("JSON");
        for e in validator.iter_errors(&value) {
            problems.push(format!("{}: {}: {e}", file.display(), e.instance_path()));
        }
        let loader = validate(&value);
        if !loader.is_empty() {
            problems.push(format!(
                "{}: the loader rejects it: {loader:?}",
                file.display()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A valid case, and `(name, path, value)` replacements.
fn base() -> Value {
    json!({
        "id": "t/a", "summary": "s", "spec": ["patch-envelope#add-file"], "tool": "apply_patch",
        "tags": ["x"],
        "given": {"files": {"a.txt": "x", "b.bin": {"base64": "/wA="}}, "dirs": ["d"], "symlinks": {"l": "../outside"},
                  "session": {"activeFiles": {"a.txt": "x"}}},
        "call": {"patch": "…"},
        "expect": {"result": {"success": {"$type": "boolean"}, "n": {"$len": 1}, "s": {"$regex": "^a"}}, "files": "unchanged"}
    })
}

fn with(path: &[&str], v: Option<Value>) -> Value {
    let mut case = base();
    let mut at = &mut case;
    for p in &path[..path.len() - 1] {
        at = &mut at[*p];
    }
    let last = path[path.len() - 1];
    match v {
        Some(v) => at[last] = v,
        None => {
            at.as_object_mut().expect("an object").remove(last);
        }
    }
    case
}

#[test]
fn the_schema_and_the_loader_agree_on_what_is_a_case() {
    let validator = schema();
    let accepted = [
        ("the base case", base()),
        ("no tags", with(&["tags"], None)),
        (
            "$schema member",
            with(&["$schema"], Some(json!("../schema/case.schema.json"))),
        ),
        (
            "a full tree",
            with(
                &["expect"],
                Some(
                    json!({"result": {}, "files": {"a.txt": "y"}, "dirs": ["e"], "symlinks": {"m": "a.txt"}}),
                ),
            ),
        ),
        (
            "nested pattern",
            with(
                &["expect", "result"],
                Some(json!({"a": [{"$each": {"$any": true}}, {"$all": [{"$contains": "x"}]}]})),
            ),
        ),
        (
            "tied values and an open place",
            with(
                &["expect", "result"],
                Some(
                    json!({"a": {"$equals": "/b/0"}, "h": {"$sha256Of": "a.txt"}, "o": {"$open": {"k": 1}}, "r": {"$equals": ""}}),
                ),
            ),
        ),
    ];
    for (name, case) in accepted {
        let schema_errors: Vec<String> = validator
            .iter_errors(&case)
            .map(|e| e.to_string())
            .collect();
        assert!(
            schema_errors.is_empty(),
            "{name}: the schema rejects it: {schema_errors:?}"
        );
        assert_eq!(
            validate(&case),
            Vec::<(String, String)>::new(),
            "{name}: the loader's rules reject it"
        );
        let bytes = serde_json::to_vec(&case).expect("json");
        if let Err(problems) = parse_case(&bytes, None) {
            panic!("{name}: the loader rejects it: {problems:?}");
        }
    }
    let rejected = [
        ("unknown member", with(&["x"], Some(json!(1)))),
        ("$schema not a string", with(&["$schema"], Some(json!(1)))),
        ("missing id", with(&["id"], None)),
        ("missing expect", with(&["expect"], None)),
        ("id with ..", with(&["id"], Some(json!("t/../a")))),
        ("id with a space", with(&["id"], Some(json!("t/a b")))),
        ("blank summary", with(&["summary"], Some(json!("  ")))),
        ("empty spec", with(&["spec"], Some(json!([])))),
        (
            "spec without #",
            with(&["spec"], Some(json!(["patch-envelope"]))),
        ),
        ("empty tag", with(&["tags"], Some(json!([""])))),
        (
            "unknown given member",
            with(&["given", "x"], Some(json!({}))),
        ),
        (
            "absolute path",
            with(&["given", "files"], Some(json!({"/a": "x"}))),
        ),
        (
            "dotdot path",
            with(&["given", "files"], Some(json!({"a/../b": "x"}))),
        ),
        (
            "trailing slash",
            with(&["given", "dirs"], Some(json!(["d/"]))),
        ),
        (
            "bad base64",
            with(&["given", "files"], Some(json!({"a": {"base64": "Zg"}}))),
        ),
        (
            "content object with extra",
            with(
                &["given", "files"],
                Some(json!({"a": {"base64": "", "x": 1}})),
            ),
        ),
        (
            "content number",
            with(&["given", "files"], Some(json!({"a": 1}))),
        ),
        (
            "duplicate dir",
            with(&["given", "dirs"], Some(json!(["d", "d"]))),
        ),
        (
            "empty symlink target",
            with(&["given", "symlinks"], Some(json!({"l": ""}))),
        ),
        (
            "unknown session member",
            with(&["given", "session", "x"], Some(json!(1))),
        ),
        (
            "active file not text",
            with(&["given", "session", "activeFiles"], Some(json!({"a": 1}))),
        ),
        ("call not an object", with(&["call"], Some(json!([])))),
        (
            "a relative $equals pointer",
            with(
                &["expect", "result"],
                Some(json!({"a": {"$equals": "b/0"}})),
            ),
        ),
        (
            "an empty $sha256Of path",
            with(&["expect", "result"], Some(json!({"a": {"$sha256Of": ""}}))),
        ),
        (
            "$open of a malformed pattern",
            with(
                &["expect", "result"],
                Some(json!({"a": {"$open": {"$nope": 1}}})),
            ),
        ),
        (
            "files neither",
            with(&["expect", "files"], Some(json!("same"))),
        ),
        (
            "dirs with unchanged",
            with(&["expect", "dirs"], Some(json!(["a"]))),
        ),
        (
            "symlinks with unchanged",
            with(&["expect", "symlinks"], Some(json!({"a": "b"}))),
        ),
        (
            "unknown expect member",
            with(&["expect", "x"], Some(json!(1))),
        ),
        (
            "unknown matcher",
            with(&["expect", "result"], Some(json!({"a": {"$nope": 1}}))),
        ),
        (
            "matcher mixed with keys",
            with(
                &["expect", "result"],
                Some(json!({"a": {"$len": 1, "x": 2}})),
            ),
        ),
        (
            "$len negative",
            with(&["expect", "result"], Some(json!({"a": {"$len": -1}}))),
        ),
        (
            "$type unknown",
            with(
                &["expect", "result"],
                Some(json!({"a": {"$type": "float"}})),
            ),
        ),
        (
            "$any false",
            with(&["expect", "result"], Some(json!({"a": {"$any": false}}))),
        ),
    ];
    let mut disagreements = Vec::new();
    for (name, case) in rejected {
        let by_schema = !validator.is_valid(&case);
        let by_loader = !validate(&case).is_empty();
        if !(by_schema && by_loader) {
            disagreements.push(format!(
                "{name}: schema rejects: {by_schema}, loader rejects: {by_loader}"
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
