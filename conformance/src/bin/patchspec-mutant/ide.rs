//! The after-call defects of the four IDE tools, one function per tool.

use super::*;

/// The IDE `read_file` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn read_file(
    defect: &str,
    call: &Call,
    _original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    match defect {
        "ide-read-total-lines-counts-final-newline" => {
            if *success {
                let ends = doc
                    .get("path")
                    .and_then(Value::as_str)
                    .and_then(|p| call.before.get(p))
                    .is_some_and(|b| b.ends_with(b"\n"));
                if ends {
                    shift_member(doc, "totalLines", 1);
                }
            }
        }
        "ide-read-end-line-off-by-one" => {
            if *success && doc.get("totalLines").and_then(Value::as_i64).unwrap_or(0) > 0 {
                shift_member(doc, "endLine", 1);
            }
        }
        "ide-read-encoding-dropped" => {
            if let Some(map) = doc.as_object_mut() {
                map.remove("encoding");
            }
        }
        "ide-read-path-as-given" => {
            if let (true, Some(given)) = (*success, call.params.get("relativePath").cloned()) {
                doc["path"] = given;
            }
        }
        "ide-read-bom-kept" => {
            let starts_bom = doc
                .get("path")
                .and_then(Value::as_str)
                .and_then(|p| call.before.get(p))
                .is_some_and(|b| b.starts_with(BOM));
            if *success && starts_bom && doc.get("startLine") == Some(&json!(1)) {
                if let Some(content) = doc.get("content").and_then(Value::as_str) {
                    doc["content"] = json!(format!("\u{FEFF}{content}"));
                }
            }
        }
        "ide-read-range-error-total-lines-off-by-one" => {
            if error_kind(doc) == Some("line_out_of_range") {
                if let Some(d) = details(doc) {
                    if let Some(n) = d.get("totalLines").and_then(Value::as_i64) {
                        d.insert("totalLines".into(), json!(n + 1));
                    }
                }
            }
        }
        "ide-not-a-file-as-not-found" => {
            if error_kind(doc) == Some("not_a_file") {
                doc["error"]["kind"] = json!("not_found");
            }
        }
        _ => {}
    }
}

/// The `grep_file` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn grep_file(
    defect: &str,
    call: &Call,
    _original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    match defect {
        "grep-truncated-at-limit" => {
            let total = doc.get("totalMatches").and_then(Value::as_u64);
            if *success && total.is_some() && total == doc.get("limit").and_then(Value::as_u64) {
                doc["truncated"] = json!(true);
            }
        }
        "grep-line-zero-based" => {
            if let Some(matches) = doc.get_mut("matches") {
                shift_member(matches, "line", -1);
            }
        }
        "grep-files-with-matches-counts-lines" => {
            if let Some(total) = doc.get("totalMatches").cloned() {
                if doc.get("filesWithMatches").is_some() {
                    doc["filesWithMatches"] = total;
                }
            }
        }
        "grep-text-keeps-cr" => {
            if let Some(matches) = doc.get_mut("matches").and_then(Value::as_array_mut) {
                for m in matches.iter_mut() {
                    let path = m.get("path").and_then(Value::as_str).unwrap_or("");
                    let line = m.get("line").and_then(Value::as_u64).unwrap_or(0) as usize;
                    let crlf = call
                        .before
                        .get(path)
                        .and_then(|b| line_with_ending(b, line))
                        .is_some_and(|l| l.ends_with(b"\r\n"));
                    if crlf {
                        if let Some(text) = m.get("text").and_then(Value::as_str) {
                            m["text"] = json!(format!("{text}\r"));
                        }
                    }
                }
            }
        }
        "grep-text-keeps-bom" => {
            if let Some(matches) = doc.get_mut("matches").and_then(Value::as_array_mut) {
                for m in matches.iter_mut() {
                    let path = m.get("path").and_then(Value::as_str).unwrap_or("");
                    let bom = call.before.get(path).is_some_and(|b| b.starts_with(BOM));
                    if bom && m.get("line") == Some(&json!(1)) {
                        if let Some(text) = m.get("text").and_then(Value::as_str) {
                            m["text"] = json!(format!("\u{FEFF}{text}"));
                        }
                    }
                }
            }
        }
        "grep-relative-path-as-given" => {
            if *success {
                if let Some(given) = call.params.get("relativePath").cloned() {
                    doc["relativePath"] = given;
                }
            }
        }
        "grep-case-sensitive-echo-true" => {
            if doc.get("caseSensitive").is_some() {
                doc["caseSensitive"] = json!(true);
            }
        }
        "grep-invalid-regex-error-dropped" => {
            if error_kind(doc) == Some("invalid_regex") {
                if let Some(d) = details(doc) {
                    d.remove("error");
                }
            }
        }
        "grep-context-dropped" => {
            if let Some(matches) = doc.get_mut("matches").and_then(Value::as_array_mut) {
                for m in matches.iter_mut().filter_map(Value::as_object_mut) {
                    m.remove("before");
                    m.remove("after");
                }
            }
        }
        _ => {}
    }
}

/// The `apply_change` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn apply_change(
    defect: &str,
    call: &Call,
    _original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    let root = call.root;
    match defect {
        "ac-line-off-by-one" => {
            if *success && doc.get("operation") == Some(&json!("modify")) {
                shift_member(doc, "line", 1);
            }
        }
        "ac-sha-of-old-file" => {
            let old = doc
                .get("path")
                .and_then(Value::as_str)
                .and_then(|p| call.before.get(p));
            if let (true, Some(old)) = (*success, old) {
                doc["sha256"] = json!(sha256_hex(old));
            }
        }
        "ac-crlf-normalised" => {
            if *success {
                let path = doc
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if rewrite_written(root, call.before, crlf_to_lf).contains(&path) {
                    if let Ok(bytes) = std::fs::read(rel_path::under(root, &path)) {
                        doc["sha256"] = json!(sha256_hex(&bytes));
                    }
                }
            }
        }
        "ac-changed-always-true" => {
            if doc.get("changed") == Some(&json!(false)) {
                doc["changed"] = json!(true);
            }
        }
        "ac-rolled-back-false" => {
            if error_kind(doc) == Some("io_error") {
                if let Some(d) = details(doc) {
                    if d.get("rolledBack") == Some(&json!(true)) {
                        d.insert("rolledBack".into(), json!(false));
                    }
                }
            }
        }
        "ac-operation-always-modify" => {
            if doc.get("operation") == Some(&json!("create")) {
                doc["operation"] = json!("modify");
            }
        }
        "ac-candidate-lines-dropped" => {
            if error_kind(doc) == Some("no_match") {
                if let Some(d) = details(doc) {
                    d.remove("candidateLines");
                }
            }
        }
        "ac-match-lines-zero-based" => {
            if error_kind(doc) == Some("multiple_matches") {
                if let Some(lines) = details(doc)
                    .and_then(|d| d.get_mut("lines"))
                    .and_then(Value::as_array_mut)
                {
                    for line in lines {
                        if let Some(n) = line.as_i64() {
                            *line = json!(n - 1);
                        }
                    }
                }
            }
        }
        "ac-description-dropped" => {
            if let Some(map) = doc.as_object_mut() {
                if *success {
                    map.remove("description");
                }
            }
        }
        _ => {}
    }
}

/// The `call_chain` defects after the call (see [`after_call`](super::after_call)).
#[allow(clippy::collapsible_match)] // as in `before_call`
pub(super) fn call_chain(
    defect: &str,
    _call: &Call,
    _original: &ToolCallMsg,
    success: &mut bool,
    doc: &mut Value,
) {
    match defect {
        "cc-end-line-off-by-one" => shift_member(doc, "endLine", 1),
        "cc-call-site-line-off-by-one" => each_object(doc, &mut |map| {
            if let Some(sites) = map.get_mut("callSites") {
                shift_member(sites, "line", 1);
            }
        }),
        "cc-resolution-always-type" => each_object(doc, &mut |map| {
            if map.contains_key("resolution") {
                map.insert("resolution".into(), json!("type"));
            }
        }),
        "cc-external-callees-dropped" => each_object(doc, &mut |map| {
            if let Some(callees) = map.get_mut("callees").and_then(Value::as_array_mut) {
                callees.retain(|c| c.get("external") != Some(&json!(true)));
            }
        }),
        "cc-recursive-flag-dropped" => each_object(doc, &mut |map| {
            map.remove("recursive");
        }),
        "cc-truncated-never-set" => {
            if let Some(map) = doc.as_object_mut() {
                if map.contains_key("truncated") {
                    map.insert("truncated".into(), json!(false));
                }
            }
        }
        "cc-signature-without-names" => each_object(doc, &mut |map| {
            if let Some(sig) = map.get("signature").and_then(Value::as_str) {
                if let (Some(open), Some(close)) = (sig.find('('), sig.rfind(')')) {
                    let types: Vec<&str> = sig[open + 1..close]
                        .split(',')
                        .map(|p| p.trim().rsplit_once(' ').map_or(p.trim(), |(t, _)| t))
                        .collect();
                    let stripped = format!("{}({})", &sig[..open], types.join(", "));
                    map.insert("signature".into(), json!(stripped));
                }
            }
        }),
        "cc-external-flag-dropped" => each_object(doc, &mut |map| {
            if map.get("external") == Some(&json!(false)) {
                map.remove("external");
            }
        }),
        "cc-callers-reversed" => each_object(doc, &mut |map| {
            if let Some(callers) = map.get_mut("callers").and_then(Value::as_array_mut) {
                callers.reverse();
            }
        }),
        "cc-available-dropped" => {
            if let Some(d) = details(doc) {
                d.remove("available");
            }
        }
        "cc-candidates-dropped" => {
            if let Some(d) = details(doc) {
                d.remove("candidates");
            }
        }
        "cc-files-parsed-off-by-one" => {
            if *success {
                shift_member(doc, "filesParsed", 1);
            }
        }
        "wp-file-error-not-the-listed-one" => {
            if let Some(files) = doc
                .pointer_mut("/result/files")
                .and_then(Value::as_array_mut)
            {
                for file in files {
                    if let Some(error) = file.get_mut("error").and_then(Value::as_object_mut) {
                        error.remove("changeId");
                        error.remove("diagnosis");
                    }
                }
            }
        }
        _ => {}
    }
}
