//! Every mistake of docs/diagnostics.md ("Repairs") through the public
//! apply path on a real temporary workspace: the hint, the repair offered
//! (or not), and the repair applied gives the intended file.

use std::path::Path;

use serde_json::Value;

use super::*;
use crate::fs::RealFs;
use super::super::apply;

const PY: &str = "import os\n\n\ndef main():\n\tprint('hi')\n\treturn 0\n\n\ndef other():\n    x = \"a\"\n    return x\n";

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        std::fs::write(dir.path().join(path), content).unwrap();
    }
    dir
}

/// Apply `patch` to one file `a.py` holding `file`: the refusal (the file
/// unchanged), its hint and its repair.
fn refuse(file: &str, patch: &str) -> (ToolError, Option<Repair>, tempfile::TempDir) {
    let dir = workspace(&[("a.py", file)]);
    let fs = RealFs::open(dir.path()).unwrap();
    let error = apply(&fs, patch, &ApplyOptions::default())
        .expect_err("refused")
        .error;
    assert_eq!(read(dir.path()), file, "a refusal changes nothing");
    assert!(error.hint().is_some(), "a hint on every refusal: {error:?}");
    let repair = repair_of(&error.details);
    (*error, repair, dir)
}

fn read(root: &Path) -> String {
    std::fs::read_to_string(root.join("a.py")).unwrap()
}

/// The repair exists, names `cause`, and applied gives `after`.
fn repaired(file: &str, patch: &str, cause: &str, after: &str) -> ToolError {
    let (error, repair, dir) = refuse(file, patch);
    let repair = repair.unwrap_or_else(|| panic!("a repair for {cause}: {:?}", error.details));
    assert!(
        repair.fixes.iter().any(|f| f.cause == cause),
        "{cause} in {:?}",
        repair.fixes
    );
    let fs = RealFs::open(dir.path()).unwrap();
    let applied = apply(&fs, &repair.patch, &ApplyOptions::default());
    assert!(applied.is_ok(), "{applied:?}");
    assert_eq!(read(dir.path()), after);
    assert!(error.hint().unwrap().contains("details.repair"));
    error
}

fn env(body: &str) -> String {
    format!("*** Begin Patch\n*** Update File: a.py\n{body}*** End Patch\n")
}

const RETURN_1: &str = "import os\n\n\ndef main():\n\tprint('hi')\n\treturn 1\n\n\ndef other():\n    x = \"a\"\n    return x\n";

#[test]
fn a_blank_line_between_hunks_is_removed_and_the_hint_says_so() {
    let patch = env("@@\n def main():\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n\n@@\n def other():\n-    x = \"a\"\n+    x = \"b\"\n");
    let after = RETURN_1.replace("x = \"a\"", "x = \"b\"");
    let e = repaired(PY, &patch, "blank_separator_line", &after);
    assert!(e.message.contains("remove it"), "{}", e.message);
    assert!(
        !e.message.contains("needs its leading space"),
        "{}",
        e.message
    );
}

#[test]
fn a_blank_line_before_end_patch_is_removed() {
    let patch = env("@@\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n\n");
    let e = repaired(PY, &patch, "blank_separator_line", RETURN_1);
    assert!(e.message.contains("remove it"), "{}", e.message);
}

#[test]
fn a_blank_context_line_without_its_space_gets_it() {
    let patch = env("@@\n import os\n\n\n def main():\n-\tprint('hi')\n+\tprint('ho')\n");
    let e = repaired(
        PY,
        &patch,
        "missing_context_prefix",
        &PY.replace("'hi'", "'ho'"),
    );
    assert!(
        e.message.contains("needs its leading space"),
        "{}",
        e.message
    );
}

#[test]
fn literal_tab_escapes_are_replaced_in_added_lines_too() {
    let patch = env("@@\n def main():\n-\\tprint('hi')\n+\\tprint('ho')\n");
    let e = repaired(
        PY,
        &patch,
        "literal_tab_escape",
        &PY.replace("'hi'", "'ho'"),
    );
    let hint = e.hint().unwrap();
    assert!(hint.contains("literal \\t"), "{hint}");
    assert!(!hint.contains("check the path"), "{hint}");
}

#[test]
fn literal_newline_and_tab_escapes_together() {
    let patch = env("@@\n def main():\\n\\tprint('hi')\n-\\treturn 0\n+\\treturn 1\n");
    let e = repaired(PY, &patch, "literal_newline_escape", RETURN_1);
    assert!(e
        .details
        .get("diagnosis")
        .and_then(|d| d.get("causes"))
        .and_then(Value::as_array)
        .unwrap()
        .contains(&Value::from("literal_newline_escape")));
}

#[test]
fn escaped_quotes_are_unescaped() {
    let patch = env("@@\n def other():\n-    x = \\\"a\\\"\n+    x = \\\"b\\\"\n");
    let e = repaired(
        PY,
        &patch,
        "escaped_quotes",
        &PY.replace("x = \"a\"", "x = \"b\""),
    );
    assert!(e.hint().unwrap().contains("\\\""));
}

#[test]
fn a_missing_begin_patch_is_added() {
    let patch =
        "*** Update File: a.py\n@@\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n*** End Patch\n";
    repaired(PY, patch, "missing_begin_patch", RETURN_1);
}

#[test]
fn a_missing_end_patch_is_added() {
    let patch =
        "*** Begin Patch\n*** Update File: a.py\n@@\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n";
    repaired(PY, patch, "missing_end_patch", RETURN_1);
}

#[test]
fn context_lines_without_their_space_get_it() {
    let patch = env("@@\ndef main():\n\tprint('hi')\n-\treturn 0\n+\treturn 1\n");
    repaired(PY, &patch, "missing_context_prefix", RETURN_1);
    // Every prefix dropped, a context line itself starting with a space:
    // the second variant adds the space to it too.
    let patch = env("@@\ndef other():\n    x = \"a\"\n-    return x\n+    return x + x\n");
    repaired(
        PY,
        &patch,
        "missing_context_prefix",
        &PY.replace("return x\n", "return x + x\n"),
    );
}

#[test]
fn a_json_escaped_envelope_is_decoded() {
    let inner = env("@@\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n");
    let patch = serde_json::to_string(&inner).unwrap();
    repaired(PY, &patch, "json_escaped_envelope", RETURN_1);
    // Unquoted, too.
    repaired(
        PY,
        &patch[1..patch.len() - 1],
        "json_escaped_envelope",
        RETURN_1,
    );
}

#[test]
fn a_first_hunk_without_its_header_gets_one() {
    let patch = env(" \tprint('hi')\n-\treturn 0\n+\treturn 1\n");
    repaired(PY, &patch, "missing_hunk_header", RETURN_1);
}

#[test]
fn a_fenced_envelope_is_unwrapped() {
    let patch = format!(
        "```diff\n{}```\n",
        env("@@\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n")
    );
    repaired(PY, &patch, "wrapper", RETURN_1);
}

#[test]
fn a_blank_line_past_the_end_of_the_file_is_located_and_removed() {
    let patch = env("@@\n def other():\n     x = \"a\"\n-    return x\n+    return x + x\n \n");
    let e = repaired(
        PY,
        &patch,
        "blank_line_past_end_of_file",
        &PY.replace("return x\n", "return x + x\n"),
    );
    let diagnosis_hint = e.details["diagnosis"]["hint"].as_str().unwrap();
    assert!(
        diagnosis_hint.contains("past the end of the file (after line 11"),
        "{diagnosis_hint}"
    );
}

#[test]
fn a_reindented_hunk_is_shifted() {
    let patch = env("@@\n x = \"a\"\n-return x\n+return x + x\n");
    repaired(
        PY,
        &patch,
        "indentation",
        &PY.replace("return x\n", "return x + x\n"),
    );
}

#[test]
fn two_regions_that_fit_get_no_repair() {
    let file = "def a():\n    return 0\n\ndef b():\n    return 0\n";
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-    return 0\n+    return 1\n\n*** End Patch\n";
    let (e, repair, _dir) = refuse(file, patch);
    assert_eq!(repair, None, "{:?}", e.details);
}

#[test]
fn content_that_is_nowhere_gets_no_repair() {
    let patch = env("@@\n def main():\n-\\tprint('bye')\n+\\tprint('ho')\n");
    let (e, repair, _dir) = refuse(PY, &patch);
    assert_eq!(repair, None);
    assert!(e.hint().unwrap().contains("literal \\t"), "{:?}", e.hint());
}

#[test]
fn an_edit_applied_already_gets_no_repair() {
    let patch = env("@@\n \tprint('hi')\n-\treturn 9\n+\treturn 0\n");
    let (e, repair, _dir) = refuse(PY, &patch);
    assert_eq!(e.details["diagnosis"]["cause"], "already_applied");
    assert_eq!(repair, None);
}

#[test]
fn a_multi_file_envelope_is_repaired_only_when_every_section_is() {
    let dir = workspace(&[("a.py", PY), ("b.py", "one\ntwo\n")]);
    let fs = RealFs::open(dir.path()).unwrap();
    let both = "*** Begin Patch\n*** Update File: a.py\n@@\n-\\treturn 0\n+\\treturn 1\n\n*** Update File: b.py\n@@\n one\n-two\n+three\n*** End Patch\n";
    let e = apply(&fs, both, &ApplyOptions::default()).unwrap_err().error;
    let repair = repair_of(&e.details).expect("both sections repaired");
    assert_eq!(repair.fixes.len(), 2, "{:?}", repair.fixes);
    // The second section's content is nowhere: no repair at all.
    let broken = both.replace(" one\n", " nowhere\n");
    let e = apply(&fs, &broken, &ApplyOptions::default()).unwrap_err().error;
    assert_eq!(repair_of(&e.details), None);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        PY
    );
}

#[test]
fn the_search_stops_at_its_dry_run_bound() {
    // Every escape evidenced and every prefix missing: many candidates,
    // none fits; the count of dry runs stays within the bound.
    let patch = env("@@\ndef nowhere():\\n\\tx = \\\"q\\\"\n-\\ty\n+\\tz\n");
    let dir = workspace(&[("a.py", PY)]);
    let fs = RealFs::open(dir.path()).unwrap();
    let quiet = ApplyOptions {
        diagnose: false,
        ..ApplyOptions::default()
    };
    let e = apply(&fs, &patch, &quiet).unwrap_err().error;
    let found = search(&fs, &patch, &ApplyOptions::default(), &e);
    assert!(
        found.dry_runs > 1 && found.dry_runs <= MAX_DRY_RUNS,
        "{}",
        found.dry_runs
    );
    assert_eq!(found.repair, None);
}

#[test]
fn crlf_envelopes_stay_crlf() {
    let patch = env("@@\n \tprint('hi')\n-\treturn 0\n+\treturn 1\n\n").replace('\n', "\r\n");
    let (_, repair, _dir) = refuse(PY, &patch);
    let repair = repair.expect("repaired");
    assert!(repair.patch.ends_with("*** End Patch\r\n"));
    assert!(!repair.patch.replace("\r\n", "").contains('\n'));
}

#[test]
fn the_schema_lists_every_cause() {
    let schema = serde_json::to_value(schemars::schema_for!(Fix)).unwrap();
    let listed: Vec<&str> = schema["properties"]["cause"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let all: Vec<&str> = RepairCause::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(listed, all);
}
