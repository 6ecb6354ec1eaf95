//! The after-call defects of the four TUL tools, one function per tool.

use super::*;

/// The `apply_patch` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn apply_patch(
    defect: &str,
    call: &Call,
    original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    let root = call.root;
    match defect {
        "ap-missing-file-as-not-a-file" => {
            set_reason(doc, "not_found", "missing_file", "not_a_file")
        }
        "ap-not-a-file-as-missing-file" => {
            set_reason(doc, "command_failed", "not_a_file", "missing_file")
        }
        "ap-missing-parent-as-missing-file" => {
            set_reason(doc, "not_found", "missing_parent", "missing_file")
        }
        "ap-changed-files-on-refusal" => {
            let atomic = call.params.get("atomic").and_then(Value::as_bool) != Some(false);
            let patch = call
                .params
                .get("patch")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !*success && atomic {
                if let (Some((path, op)), Some(data)) = (first_section(patch), doc.get_mut("data"))
                {
                    data["changedFiles"] = json!([{"path": path, "operation": op}]);
                }
            }
        }
        "ap-changed-files-dropped" => {
            if *success {
                if let Some(data) = doc.get_mut("data").and_then(Value::as_object_mut) {
                    data.remove("changedFiles");
                }
            }
        }
        "ap-hunk-line-off-by-one" => shift_member(doc, "hunkLine", 1),
        "ap-stale-hashes-swapped" => {
            if error_kind(doc) == Some("stale_file") {
                if let Some(d) = details(doc) {
                    let expected = d.remove("expectedSha256").unwrap_or(Value::Null);
                    let actual = d.remove("actualSha256").unwrap_or(Value::Null);
                    d.insert("expectedSha256".into(), actual);
                    d.insert("actualSha256".into(), expected);
                }
            }
        }
        "ap-refusal-not-atomic" => {
            // Answer as the atomic call would: the flag echoed as asked, nothing claimed.
            let asked = original.params.get("atomic").and_then(Value::as_bool);
            if asked != Some(false) {
                if let Some(data) = doc.get_mut("data").and_then(Value::as_object_mut) {
                    data.insert("atomic".into(), json!(true));
                    if !*success {
                        data.insert("changedFiles".into(), json!([]));
                    }
                }
            }
        }
        "ap-partial-success" => {
            if *success {
                let after = snapshot(root);
                let changed = written(call.before, &after);
                if changed.len() >= 2 {
                    let last = changed.last().expect("two or more");
                    let target = rel_path::under(root, last);
                    match call.before.get(last) {
                        Some(old) => drop(std::fs::write(&target, old)),
                        None => drop(std::fs::remove_file(&target)),
                    }
                }
            }
        }
        "ap-final-newline-added" | "wp-final-newline-dropped" => {
            if *success {
                let add = defect == "ap-final-newline-added";
                rewrite_written(root, call.before, |bytes| {
                    let mut out = bytes.to_vec();
                    if add && !bytes.is_empty() && !bytes.ends_with(b"\n") {
                        out.push(b'\n');
                    } else if !add && bytes.ends_with(b"\n") {
                        out.pop();
                        if out.ends_with(b"\r") {
                            out.pop();
                        }
                    }
                    out
                });
            }
        }
        "ap-crlf-normalised" | "wp-crlf-normalised" => {
            if *success {
                rewrite_written(root, call.before, crlf_to_lf);
            }
        }
        "ap-bom-dropped" => {
            if *success {
                rewrite_written(root, call.before, |b| {
                    b.strip_prefix(BOM).unwrap_or(b).to_vec()
                });
            }
        }
        "ap-atomic-echo-true" => {
            if let Some(data) = doc.get_mut("data").and_then(Value::as_object_mut) {
                if data.contains_key("atomic") {
                    data.insert("atomic".into(), json!(true));
                }
            }
        }
        "ap-section-line-off-by-one" => shift_member(doc, "sectionLine", 1),
        "ap-match-lines-zero-based" => {
            if let Some(lines) = details(doc)
                .and_then(|d| d.get_mut("matchLines"))
                .and_then(Value::as_array_mut)
            {
                for line in lines {
                    if let Some(n) = line.as_i64() {
                        *line = json!(n - 1);
                    }
                }
            }
        }
        "ap-overlaps-hunk-off-by-one" => shift_member(doc, "overlapsHunk", 1),
        "ap-parse-line-zero-based" => {
            if error_kind(doc) == Some("patch_parse_error") {
                if let Some(d) = details(doc) {
                    if let Some(n) = d.get("line").and_then(Value::as_i64) {
                        d.insert("line".into(), json!(n - 1));
                    }
                }
            }
        }
        "ap-move-from-dropped" => {
            if let Some(files) = doc
                .pointer_mut("/data/changedFiles")
                .and_then(Value::as_array_mut)
            {
                for entry in files.iter_mut().filter_map(Value::as_object_mut) {
                    entry.remove("from");
                }
            }
        }
        "ap-move-path-is-source" => {
            if let Some(files) = doc
                .pointer_mut("/data/changedFiles")
                .and_then(Value::as_array_mut)
            {
                for entry in files.iter_mut().filter_map(Value::as_object_mut) {
                    if let Some(from) = entry.get("from").cloned() {
                        entry.insert("path".into(), from);
                    }
                }
            }
        }
        "ap-first-of-two-matches" => first_of_matches(original, success, doc),
        "ap-symlink-dropped" => {
            if let Some(d) = details(doc) {
                d.remove("symlink");
            }
        }
        _ => {}
    }
}

/// The `workspace_write_patch` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn write_patch(
    defect: &str,
    call: &Call,
    original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    match defect {
        "wp-error-path-dropped" => each_error(doc, &mut |e| {
            e.remove("path");
        }),
        "wp-error-change-id-foreign" => each_error(doc, &mut |e| {
            if let Some(id) = e.get("changeId").and_then(Value::as_str) {
                let foreign = format!("chg-{}", &sha256_hex(id.as_bytes())[..32]);
                e.insert("changeId".into(), json!(foreign));
            }
        }),
        "wp-change-ids-shared" => {
            let mut first: Option<Value> = None;
            each_object(doc, &mut |map| {
                if let Some(id) = map.get("changeId") {
                    if id.is_string() {
                        let shared = first.get_or_insert_with(|| id.clone()).clone();
                        map.insert("changeId".into(), shared);
                    }
                }
            });
        }
        "wp-ids-not-fresh" => {
            // The same old ID always maps to the same new one, so an error's
            // changeId still names its change.
            let mut renamed: BTreeMap<String, String> = BTreeMap::new();
            each_object(doc, &mut |map| {
                for (key, prefix) in [
                    ("batchId", "batch-"),
                    ("filePatchId", "fp-"),
                    ("changeId", "chg-"),
                ] {
                    if let Some(id) = map.get(key).and_then(Value::as_str) {
                        let next = renamed.len();
                        let new = renamed
                            .entry(id.to_owned())
                            .or_insert_with(|| {
                                format!(
                                    "{prefix}{}",
                                    &sha256_hex(format!("{key}{next}").as_bytes())[..32]
                                )
                            })
                            .clone();
                        map.insert(key.into(), json!(new));
                    }
                }
            });
        }
        "wp-skipped-because-dropped" => {
            if let Some(files) = doc
                .pointer_mut("/result/files")
                .and_then(Value::as_array_mut)
            {
                for file in files.iter_mut().filter_map(Value::as_object_mut) {
                    file.remove("skippedBecause");
                }
            }
        }
        "wp-path-is-doc-path" => {
            if let Some(files) = doc
                .pointer_mut("/result/files")
                .and_then(Value::as_array_mut)
            {
                for file in files.iter_mut().filter_map(Value::as_object_mut) {
                    if let (Some(_), Some(doc_path)) =
                        (file.get("path"), file.get("docPath").cloned())
                    {
                        file.insert("path".into(), doc_path);
                    }
                }
            }
        }
        "wp-errors-reversed" => {
            if let Some(errors) = doc.get_mut("errors").and_then(Value::as_array_mut) {
                errors.reverse();
            }
        }
        "wp-result-object-on-validation-failure" => {
            if doc.get("result") == Some(&Value::Null) && !*success {
                doc["result"] = json!({});
            }
        }
        "wp-expected-actual-swapped" => each_error(doc, &mut |e| {
            if let (Some(expected), Some(actual)) = (e.remove("expected"), e.remove("actual")) {
                e.insert("expected".into(), actual);
                e.insert("actual".into(), expected);
            }
        }),
        "wp-new-sha-is-original" => {
            if let Some(files) = doc
                .pointer_mut("/result/files")
                .and_then(Value::as_array_mut)
            {
                for file in files.iter_mut().filter_map(Value::as_object_mut) {
                    if file.contains_key("newSha256") {
                        let old = file.get("originalSha256").cloned().unwrap_or(Value::Null);
                        file.insert("newSha256".into(), old);
                    }
                }
            }
        }
        "wp-skipped-file-written" => {
            if !*success {
                let skipped: Vec<usize> = doc
                    .pointer("/result/files")
                    .and_then(Value::as_array)
                    .map(|files| {
                        files
                            .iter()
                            .enumerate()
                            .filter(|(_, f)| {
                                f.get("skippedBecause").is_some() && f.get("error").is_none()
                            })
                            .map(|(i, _)| i)
                            .collect()
                    })
                    .unwrap_or_default();
                if !skipped.is_empty() {
                    let mut params = call.params.clone();
                    if let Some(files) = params.get_mut("files").and_then(Value::as_array_mut) {
                        let kept: Vec<Value> = skipped
                            .iter()
                            .filter_map(|i| files.get(*i).cloned())
                            .collect();
                        *files = kept;
                    }
                    let mut again = original.clone();
                    again.params = params;
                    let _ = answer(&again);
                }
            }
        }
        "wp-mismatch-line-off-by-one" => each_error(doc, &mut |e| {
            if e.get("code").and_then(Value::as_str) == Some("line_mismatch") {
                if let Some(n) = e.get("line").and_then(Value::as_i64) {
                    e.insert("line".into(), json!(n + 1));
                }
            }
        }),
        "wp-line-count-off-by-one" => each_error(doc, &mut |e| {
            if let Some(n) = e.get("lineCount").and_then(Value::as_i64) {
                e.insert("lineCount".into(), json!(n + 1));
            }
        }),
        "wp-overlap-as-out-of-order" => each_error(doc, &mut |e| {
            if e.get("code").and_then(Value::as_str) == Some("changes_overlap") {
                e.insert("code".into(), json!("changes_out_of_order"));
            }
        }),
        "wp-file-index-off-by-one" => each_error(doc, &mut |e| {
            if let Some(n) = e.get("fileIndex").and_then(Value::as_i64) {
                e.insert("fileIndex".into(), json!(n + 1));
            }
        }),
        "wp-applied-on-refusal" => {
            if !*success {
                if let Some(files) = doc
                    .pointer_mut("/result/files")
                    .and_then(Value::as_array_mut)
                {
                    for file in files.iter_mut().filter_map(Value::as_object_mut) {
                        file.insert("applied".into(), json!(true));
                    }
                }
            }
        }
        _ => {}
    }
}

/// The `workspace_create_file` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn create_file(
    defect: &str,
    call: &Call,
    _original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    let root = call.root;
    match defect {
        "cf-hash-of-raw-content" => {
            if *success {
                if let Some(content) = call.params.get("content").and_then(Value::as_str) {
                    doc["hash"] = json!(sha256_hex(content.as_bytes()));
                }
            }
        }
        "cf-crlf-kept" => {
            if *success {
                let content = call
                    .params
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(path) = written(call.before, &snapshot(root)).first() {
                    let _ = std::fs::write(rel_path::under(root, path), content);
                    doc["sizeBytes"] = json!(content.len());
                    doc["hash"] = json!(sha256_hex(content.as_bytes()));
                }
            }
        }
        "cf-created-on-overwrite" => {
            if doc.get("overwritten") == Some(&json!(true)) {
                doc["created"] = json!(true);
            }
        }
        "cf-path-as-given" => {
            if let Some(path) = call.params.get("path").and_then(Value::as_str) {
                if doc.get("path").is_some() {
                    doc["path"] = json!(path);
                }
            }
        }
        "cf-overwritten-always-false" => {
            if doc.get("overwritten") == Some(&json!(true)) {
                doc["overwritten"] = json!(false);
            }
        }
        "cf-directory-as-file-exists" => {
            let is_dir = call
                .params
                .get("path")
                .and_then(Value::as_str)
                .is_some_and(|p| {
                    !p.is_empty()
                        && std::fs::symlink_metadata(rel_path::under(root, p))
                            .is_ok_and(|m| m.is_dir())
                });
            if is_dir && doc.get("errorCode") == Some(&json!("InvalidPath")) {
                doc["errorCode"] = json!("FileExists");
            }
        }
        "cf-write-failed-as-unhandled-exception" => {
            if doc.get("errorCode") == Some(&json!("WriteFailed")) {
                doc["errorCode"] = json!("UnhandledException");
            }
        }
        _ => {}
    }
}

/// The `workspace.read_file` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn read_file(
    defect: &str,
    call: &Call,
    _original: &ToolCallMsg,
    _success: &mut bool,
    doc: &mut Value,
) {
    match defect {
        "rf-sha-of-returned-bytes" | "rf-size-of-returned-bytes" => {
            if let Some(file) = doc.get_mut("file").and_then(Value::as_object_mut) {
                if file.get("isTruncated") == Some(&json!(true)) {
                    let content = file
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    if defect == "rf-sha-of-returned-bytes" {
                        file.insert("sha256".into(), json!(sha256_hex(content.as_bytes())));
                    } else {
                        file.insert("sizeBytes".into(), json!(content.len()));
                    }
                }
            }
        }
        "rf-path-folded" => {
            if let Some(path) = doc.pointer("/file/path").and_then(Value::as_str) {
                let folded: Vec<&str> = path
                    .split('/')
                    .filter(|c| !c.is_empty() && *c != ".")
                    .collect();
                doc["file"]["path"] = json!(folded.join("/"));
            }
        }
        "rf-encoding-dropped" => {
            if let Some(file) = doc.get_mut("file").and_then(Value::as_object_mut) {
                file.remove("encoding");
            }
        }
        "rf-content-crlf-normalised" => {
            if let Some(content) = doc.pointer("/file/content").and_then(Value::as_str) {
                let lf = content.replace("\r\n", "\n");
                doc["file"]["content"] = json!(lf);
            }
        }
        "rf-truncated-at-exact-size" => {
            let max = call.params.get("maxBytes").and_then(Value::as_u64);
            if let Some(file) = doc.get_mut("file").and_then(Value::as_object_mut) {
                if max.is_some() && file.get("sizeBytes").and_then(Value::as_u64) == max {
                    file.insert("isTruncated".into(), json!(true));
                }
            }
        }
        "rf-not-found-as-invalid-argument" => {
            if doc.get("errorCode") == Some(&json!("NOT_FOUND")) {
                doc["errorCode"] = json!("INVALID_ARGUMENT");
            }
        }
        _ => {}
    }
}

/// Every error object of a workspace_write_patch result (`errors[]` and `files[].error`).
fn each_error(doc: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    if let Some(errors) = doc.get_mut("errors").and_then(Value::as_array_mut) {
        errors
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(&mut *f);
    }
    if let Some(files) = doc
        .pointer_mut("/result/files")
        .and_then(Value::as_array_mut)
    {
        for file in files {
            if let Some(error) = file.get_mut("error").and_then(Value::as_object_mut) {
                f(error);
            }
        }
    }
}
