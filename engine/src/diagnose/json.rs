//! The wire form of a [`Diagnosis`] (`diagnosis` in both edit tools'
//! errors, docs/diagnostics.md), written in one place so `apply_patch` and
//! `workspace_write_patch` cannot drift apart.

use serde_json::{json, Map, Value};

use super::{Diagnosis, Row, RowStatus};

/// The wire form of a [`Diagnosis`] (`details.diagnosis`, docs/diagnostics.md):
/// optional members are absent, never null.
pub(crate) fn diagnosis_json(d: &Diagnosis) -> Value {
    let mut m = Map::new();
    m.insert("cause".into(), d.cause().as_str().into());
    m.insert(
        "causes".into(),
        d.causes
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .into(),
    );
    m.insert("hint".into(), d.hint.clone().into());
    let mut put = |key: &str, v: Option<usize>| {
        if let Some(v) = v {
            m.insert(key.into(), v.into());
        }
    };
    put("hunkIndex", d.hunk_index);
    put("line", d.line);
    put("endLine", d.end_line);
    put("foundAtLine", d.found_at_line);
    put("earlierHunk", d.earlier_hunk);
    if d.line.is_some() && d.matches.is_empty() {
        m.insert("matched".into(), d.matched.into());
    }
    if d.expected_lines > 0 {
        m.insert("expectedLines".into(), d.expected_lines.into());
    }
    if !d.rows.is_empty() {
        m.insert(
            "compare".into(),
            d.rows.iter().map(row_json).collect::<Vec<_>>().into(),
        );
    }
    if d.omitted_rows > 0 {
        m.insert("omittedRows".into(), d.omitted_rows.into());
    }
    if !d.other_candidates.is_empty() {
        m.insert("otherCandidates".into(), d.other_candidates.clone().into());
    }
    if !d.matches.is_empty() {
        let side = |s: &Option<(usize, String)>| match s {
            Some((line, text)) => json!({"line": line, "text": text}),
            None => Value::Null,
        };
        m.insert(
            "matches".into(),
            d.matches
                .iter()
                .map(|s| json!({"line": s.line, "above": side(&s.above), "below": side(&s.below)}))
                .collect::<Vec<_>>()
                .into(),
        );
    }
    if let Some(n) = d.match_count {
        m.insert("matchCount".into(), n.into());
    }
    if let Some(h) = &d.header_found {
        m.insert(
            "headerFound".into(),
            json!({"line": h.line, "text": h.text, "match": h.match_line}),
        );
    }
    if let Some(v) = d.hash_verified {
        m.insert("hashVerified".into(), v.into());
    }
    if d.truncated {
        m.insert("truncated".into(), true.into());
    }
    Value::Object(m)
}

fn row_json(r: &Row) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), r.status.as_str().into());
    if let Some(l) = r.line {
        m.insert("line".into(), l.into());
    }
    if r.status == RowStatus::Skipped {
        m.insert("count".into(), r.count.into());
        return Value::Object(m);
    }
    if let Some(e) = r.expected.as_ref().filter(|_| r.status != RowStatus::Same) {
        m.insert("expected".into(), e.clone().into());
    }
    if let Some(a) = &r.actual {
        m.insert("actual".into(), a.clone().into());
    }
    if !r.causes.is_empty() {
        m.insert(
            "causes".into(),
            r.causes
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .into(),
        );
    }
    if let Some(n) = &r.note {
        m.insert("note".into(), n.clone().into());
    }
    if let Some(h) = r.written_by {
        m.insert("writtenByHunk".into(), h.into());
    }
    Value::Object(m)
}
