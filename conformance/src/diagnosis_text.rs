//! A diagnosis (`details.diagnosis` of a refused edit, docs/diagnostics.md)
//! as indented text for people: what `patchspec apply` prints under a
//! refusal. It reads the documented wire JSON, not the engine's types, and
//! lives here, beside the command that prints it, not in the engine.

use serde_json::Value;

/// A `details.diagnosis` object as indented text for people (the format is
/// not stable; parse the JSON instead). `None` when `d` is not a diagnosis.
pub fn human_diagnosis(d: &Value) -> Option<String> {
    let cause = d.get("cause")?.as_str()?;
    let mut out = String::new();
    let also: Vec<&str> = d
        .get("causes")
        .and_then(Value::as_array)
        .map(|a| a.iter().skip(1).filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str(&format!("  cause: {cause}"));
    if !also.is_empty() {
        out.push_str(&format!(" (also: {})", also.join(", ")));
    }
    out.push('\n');
    let num = |k: &str| d.get(k).and_then(Value::as_u64);
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if let Some(h) = num("hunkIndex") {
        out.push_str(&format!("  about hunk {h}\n"));
    }
    if d.get("hashVerified").and_then(Value::as_bool) == Some(true) {
        out.push_str("  hash: verified (the file is the one the patch was written against)\n");
    }
    if let Some(line) = num("line").filter(|_| d.get("matches").is_none()) {
        let label = match cause {
            "already_applied" => "already applied at",
            "changed_by_earlier_hunk" => "in the original file at",
            _ => "nearest:",
        };
        out.push_str(&format!("  {label} line {line}"));
        if let Some(end) = num("endLine").filter(|&e| e > line) {
            out.push_str(&format!("–{end}"));
        }
        if let Some(at) = num("foundAtLine") {
            out.push_str(&format!(" (found exactly at line {at})"));
        } else if cause == "already_applied" {
            out.push_str(" (the edit's result is there)");
        } else if let (Some(m), Some(n)) = (num("matched"), num("expectedLines")) {
            out.push_str(&format!(" ({m} of {n} expected lines found)"));
        }
        out.push('\n');
    }
    if let Some(h) = num("earlierHunk") {
        out.push_str(&format!("  changed by hunk {h}\n"));
    }
    for row in d
        .get("compare")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let status = row.get("status").and_then(Value::as_str).unwrap_or("");
        let line = row
            .get("line")
            .and_then(Value::as_u64)
            .map_or(String::new(), |l| l.to_string());
        let text = |k: &str| row.get(k).and_then(Value::as_str);
        match status {
            "skipped" => out.push_str(&format!(
                "    {line:>6}      … {}\n",
                plural(num_of(row, "count"), "equal line", "equal lines")
            )),
            "same" => out.push_str(&format!(
                "    {line:>6}      | {}\n",
                text("actual").unwrap_or("")
            )),
            _ => {
                if let Some(e) = text("expected") {
                    out.push_str(&format!("    {:>6} edit | {e}\n", ""));
                }
                if let Some(a) = text("actual") {
                    out.push_str(&format!("    {line:>6} file | {a}\n"));
                }
                if let Some(n) = text("note") {
                    out.push_str(&format!("    {:>6}      ^ {n}\n", ""));
                }
            }
        }
    }
    if let Some(n) = num("omittedRows") {
        out.push_str(&format!(
            "    {:>6}      … {n} more {}\n",
            "",
            if n == 1 { "row" } else { "rows" }
        ));
    }
    if d.get("truncated").and_then(Value::as_bool) == Some(true) {
        out.push_str("  truncated: only the edit's first 2,000 expected lines were compared\n");
    }
    let others: Vec<String> = d
        .get("otherCandidates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .map(|l| l.to_string())
        .collect();
    if !others.is_empty() {
        out.push_str(&format!("  other candidates: line {}\n", others.join(", ")));
    }
    let matches = d.get("matches").and_then(Value::as_array);
    if let (Some(list), Some(count)) = (matches, num("matchCount")) {
        out.push_str(&format!("  {count} matches"));
        if count > list.len() as u64 {
            out.push_str(&format!(" (the first {} listed)", list.len()));
        }
        out.push('\n');
    }
    for m in matches.into_iter().flatten() {
        out.push_str(&format!("  match at line {}", num_of(m, "line")));
        for side in ["above", "below"] {
            if let Some(s) = m.get(side).filter(|s| !s.is_null()) {
                let t = s.get("text").and_then(Value::as_str).unwrap_or("");
                let line = num_of(s, "line");
                match t {
                    "" => out.push_str(&format!("; {side}: line {line} (blank)")),
                    t => out.push_str(&format!("; {side}: line {line} | {t}")),
                }
            }
        }
        out.push('\n');
    }
    if let (Some(list), Some(count)) = (matches, num("matchCount")) {
        if count > list.len() as u64 {
            out.push_str(&format!("  … and {} more\n", count - list.len() as u64));
        }
    }
    if let Some(h) = d.get("headerFound") {
        out.push_str(&format!(
            "  the @@ header names line {} | {} (above the match at line {})\n",
            num_of(h, "line"),
            h.get("text").and_then(Value::as_str).unwrap_or(""),
            num_of(h, "match")
        ));
    }
    if let Some(h) = d.get("hint").and_then(Value::as_str) {
        out.push_str(&format!("  hint: {h}\n"));
    }
    Some(out)
}

fn num_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}
