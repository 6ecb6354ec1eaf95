//! `matrix.html`: the matrix as one self-contained page.
//!
//! No external assets (inline CSS and script, no fonts, no network), so it
//! works from `file://` and as a CI artifact. The table is rendered here, in
//! full, so it reads without JavaScript; the script only adds the filters
//! ("only where implementations disagree", "only failures", a case-id
//! search) and the detail dialog that a failing cell opens: the call, the
//! expected result pattern beside the result received with its mismatches,
//! the unified diffs of the files (expected → actual), changes outside the
//! workspace, errors and stderr. Those details travel in one
//! `<script type="application/json">` block and are put into the page with
//! `textContent` only, never as markup.
//!
//! Element ids and classes the browser test relies on (`scripts/matrix-browser-test.py`):
//! `#matrix` (the table), `tr.case` rows with `data-id`, `data-disagree`,
//! `data-fail`; `#only-disagree`, `#only-failures`, `#search`; `#shown`
//! (the "showing N of M cases" text); failing cells `td[data-d]`; the dialog
//! `#detail` with `#detail-body`. **Unstable** otherwise.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::model::{CellOutcome, Matrix, Tally, ALL_DEPARTURES};

/// Escape text for HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON for a `<script type="application/json">` block: no `<` can end it early.
fn script_json(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

fn rate_class(t: &Tally) -> &'static str {
    match t.pass_rate() {
        None => "rate-none",
        Some(r) if r >= 1.0 => "rate-full",
        Some(r) if r >= 0.9 => "rate-high",
        Some(r) if r >= 0.5 => "rate-mid",
        Some(_) => "rate-low",
    }
}

fn rate_cell(t: &Tally) -> String {
    let skipped = if t.skip + t.not_run > 0 {
        format!("<br><small>{} skipped</small>", t.skip + t.not_run)
    } else {
        String::new()
    };
    format!(
        "<td class=\"rate {}\">{}<br><small>{}/{}</small>{skipped}</td>",
        rate_class(t),
        t.percent(),
        t.pass,
        t.judged()
    )
}

const STYLE: &str = r##"
:root { --pass:#d8f3dc; --fail:#ffd6d6; --error:#ffe1b3; --skip:#eeeeee; --ink:#1b1b1b; --muted:#666; --line:#d0d0d0; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0; background: #fafafa; }
header { padding: 16px 20px 8px; background: #fff; border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0 0 6px; }
.meta { color: var(--muted); margin: 4px 0 10px; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
table { border-collapse: collapse; }
table.impls td, table.impls th { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; background: #fff; }
.controls { position: sticky; top: 0; z-index: 3; background: #fffdf5; border-bottom: 1px solid var(--line); padding: 8px 20px; display: flex; gap: 18px; align-items: center; flex-wrap: wrap; }
.controls label { cursor: pointer; user-select: none; }
#search { padding: 3px 6px; min-width: 240px; }
#shown { color: var(--muted); }
main { padding: 12px 20px 40px; }
#matrix { width: 100%; background: #fff; }
#matrix th, #matrix td { border: 1px solid var(--line); padding: 4px 6px; vertical-align: top; }
#matrix thead th { position: sticky; top: 41px; z-index: 2; background: #f0f0f0; }
#matrix tr.tool th { background: #2d3a4a; color: #fff; text-align: left; font-size: 15px; }
#matrix tr.summary th { text-align: left; background: #f6f6f6; }
#matrix tr.clause th { background: #eef2f7; text-align: left; font-weight: 600; }
#matrix tr.case th { font-weight: normal; text-align: left; max-width: 560px; }
#matrix tr.case th .sum { color: var(--muted); font-size: 12px; }
td.cell { text-align: center; white-space: nowrap; min-width: 64px; }
td.cell small { display: block; font-size: 11px; color: #444; white-space: normal; }
td.pass { background: var(--pass); }
td.fail { background: var(--fail); }
td.error { background: var(--error); }
td.skip, td.not-run { background: var(--skip); color: var(--muted); }
td[data-d] { cursor: pointer; text-decoration: underline dotted; }
td[data-d]:hover, td[data-d]:focus { outline: 2px solid #3367d6; outline-offset: -2px; }
td.rate { text-align: center; font-weight: 600; }
td.rate small { font-weight: normal; color: var(--muted); }
.rate-full { background: #b7e4c7; } .rate-high { background: #d8f3dc; } .rate-mid { background: #fff3bf; } .rate-low { background: #ffd6d6; } .rate-none { background: #eee; }
.legend { color: var(--muted); font-size: 12.5px; margin: 6px 0 0; }
.legend b { color: var(--ink); }
dialog#detail { width: min(1100px, 96vw); max-height: 92vh; border: 1px solid #999; border-radius: 6px; padding: 0; }
dialog#detail::backdrop { background: rgba(0,0,0,.35); }
#detail .bar { position: sticky; top: 0; background: #2d3a4a; color: #fff; padding: 8px 14px; display: flex; justify-content: space-between; align-items: center; }
#detail .bar button { font-size: 14px; }
#detail-body { padding: 6px 16px 16px; }
#detail-body h3 { margin: 14px 0 4px; font-size: 14px; }
#detail-body pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 8px; overflow: auto; max-height: 420px; margin: 0; white-space: pre; }
#detail-body .cols { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
#detail-body .add { background: #e6ffed; display: block; }
#detail-body .del { background: #ffeef0; display: block; }
#detail-body .hunk { color: #6f42c1; display: block; }
#detail-body .hdr { color: var(--muted); display: block; }
#detail-body ul { margin: 4px 0; padding-left: 20px; }
"##;

const SCRIPT: &str = r##"
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("patchspec-details").textContent);
  var onlyDisagree = document.getElementById("only-disagree");
  var onlyFailures = document.getElementById("only-failures");
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");

  function applyFilters() {
    var d = onlyDisagree.checked, f = onlyFailures.checked;
    var t = search.value.trim().toLowerCase();
    var visible = 0, total = 0;
    var bodies = document.querySelectorAll("#matrix tbody");
    for (var b = 0; b < bodies.length; b++) {
      var any = false, clause = null, clauseAny = false;
      var rows = bodies[b].rows;
      for (var i = 0; i < rows.length; i++) {
        var tr = rows[i];
        if (tr.classList.contains("clause")) {
          if (clause) { clause.hidden = !clauseAny; }
          clause = tr; clauseAny = false; continue;
        }
        if (!tr.classList.contains("case")) { continue; }
        total++;
        var ok = (!d || tr.dataset.disagree === "1") && (!f || tr.dataset.fail === "1") &&
                 (!t || tr.dataset.id.toLowerCase().indexOf(t) >= 0);
        tr.hidden = !ok;
        if (ok) { visible++; any = true; clauseAny = true; }
      }
      if (clause) { clause.hidden = !clauseAny; }
      bodies[b].hidden = !any;
    }
    shown.textContent = "showing " + visible + " of " + total + " cases";
  }
  onlyDisagree.addEventListener("change", applyFilters);
  onlyFailures.addEventListener("change", applyFilters);
  search.addEventListener("input", applyFilters);

  var dialog = document.getElementById("detail");
  var body = document.getElementById("detail-body");
  var title = document.getElementById("detail-title");

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }
  function section(name) { body.appendChild(el("h3", name)); }
  function pre(text) { var p = el("pre", text); body.appendChild(p); return p; }
  function diff(text) {
    var p = el("pre");
    text.split("\n").forEach(function (line) {
      var s = line.replace(/^  /, ""), cls = "";
      if (s.indexOf("+++") === 0 || s.indexOf("---") === 0) { cls = "hdr"; }
      else if (s.indexOf("@@") === 0) { cls = "hunk"; }
      else if (s.charAt(0) === "+") { cls = "add"; }
      else if (s.charAt(0) === "-") { cls = "del"; }
      var span = el("span", line + "\n", cls);
      p.appendChild(span);
    });
    body.appendChild(p);
  }
  function show(index) {
    var c = data.cells[index], r = data.rows[c.row];
    title.textContent = r.id + " \u2014 " + data.columns[c.col];
    body.replaceChildren();
    body.appendChild(el("p", r.summary));
    body.appendChild(el("p", "spec: " + r.spec.join(", ")));
    var verdict = el("p");
    verdict.appendChild(el("b", c.outcome + (c.departureText ? " \u2014 " + c.departureText : "")));
    var why = c.reason;
    if (c.departureText && why.indexOf(c.departureText) === 0) { why = why.slice(c.departureText.length).replace(/^: /, ""); }
    if (why) { verdict.appendChild(document.createTextNode(": " + why)); }
    body.appendChild(verdict);
    body.appendChild(el("p", "judge: " + data.judge));
    if (c.error) { section("Error"); pre(c.error); }
    section("Result: expected (pattern) and received");
    var cols = el("div", null, "cols");
    var left = el("div"), right = el("div");
    left.appendChild(el("div", "expected (success " + r.expectSuccess + ")"));
    left.appendChild(el("pre", r.expect));
    right.appendChild(el("div", "received (data.success " + c.success + ")"));
    right.appendChild(el("pre", c.received === null ? "(no valid answer)" : c.received));
    cols.appendChild(left); cols.appendChild(right);
    body.appendChild(cols);
    if (c.mismatches.length) {
      var ul = el("ul");
      c.mismatches.forEach(function (m) { ul.appendChild(el("li", m)); });
      body.appendChild(ul);
    }
    section("Files: expected \u2192 actual");
    if (c.files) { diff(c.files); } else { pre("the tree after the call is as expected"); }
    if (c.outside) { section("Written outside the workspace"); diff(c.outside); }
    section("Call");
    pre(r.call);
    if (c.stderr) { section("stderr"); pre(c.stderr); }
    dialog.showModal();
  }
  var table = document.getElementById("matrix");
  table.addEventListener("click", function (e) {
    var td = e.target.closest("td[data-d]");
    if (td) { show(Number(td.dataset.d)); }
  });
  table.addEventListener("keydown", function (e) {
    var td = e.target.closest("td[data-d]");
    if (td && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); show(Number(td.dataset.d)); }
  });
  document.getElementById("detail-close").addEventListener("click", function () { dialog.close(); });
  applyFilters();
})();
"##;

/// The page.
pub fn render(m: &Matrix) -> String {
    let mut cells_data: Vec<Value> = Vec::new();
    let mut rows_data: Vec<Value> = Vec::new();
    let mut out = String::new();
    let cols = m.columns.len();

    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>patchspec compliance matrix</title><style>{STYLE}</style></head><body>\n<header>\
         <h1>patchspec compliance matrix</h1>"
    );
    let _ = write!(
        out,
        "<p class=\"meta\">Judge: <b id=\"judge\">{}</b> — {}. Corpus {}<code>sha256:{}</code>, {} of {} cases selected ({}); timeout {:.1}s; patchspec {}.</p>",
        esc(m.judge.as_str()),
        esc(m.judge.describe().split_once(": ").map(|(_, d)| d).unwrap_or("")),
        esc(&m.corpus_version.as_deref().map(|v| format!("v{v} ")).unwrap_or_default()),
        esc(&m.corpus_hash[..16.min(m.corpus_hash.len())]),
        m.rows.len(),
        m.corpus_cases,
        esc(&m.filters),
        m.timeout.as_secs_f64(),
        esc(&m.runner_version)
    );
    out.push_str("<table class=\"impls\"><tr><th>column</th><th>implementation</th><th>command</th><th>declared by</th><th>unsupported tags</th><th>pass rate</th><th>run time</th></tr>");
    for (i, c) in m.columns.iter().enumerate() {
        let who = c
            .implementation
            .as_ref()
            .map(|im| format!("{} {}", im.name, im.version))
            .unwrap_or_else(|| "(undeclared)".into());
        let unusable = c
            .unusable
            .as_deref()
            .map(|u| format!("<br><b>unusable:</b> {}", esc(u)))
            .unwrap_or_default();
        let command = if c.command.is_empty() {
            "(built in, in-process)".to_owned()
        } else {
            c.command.join(" ")
        };
        let t = m.tally(i, |_| true);
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}{unusable}</td><td><code>{}</code></td><td>{}</td><td>{}</td>{}<td>{:.1}s</td></tr>",
            esc(&c.name),
            esc(&who),
            esc(&command),
            esc(&c.declared_by),
            esc(&c.unsupported_tags.join(", ")),
            rate_cell(&t),
            c.duration.as_secs_f64()
        );
    }
    out.push_str("</table><p class=\"legend\">Departures, most serious first: ");
    let legend: Vec<String> = ALL_DEPARTURES
        .iter()
        .map(|d| format!("<b>{}</b> {}", esc(d.as_str()), esc(d.describe())))
        .collect();
    out.push_str(&legend.join(" · "));
    out.push_str(". A row <i>disagrees</i> when the implementations under test (the reference left out) did different things: success, or the files after. Click a failing cell for its diff.</p></header>\n");
    out.push_str(
        "<div class=\"controls\"><label><input type=\"checkbox\" id=\"only-disagree\"> only where implementations disagree</label>\
         <label><input type=\"checkbox\" id=\"only-failures\"> only failures</label>\
         <input type=\"search\" id=\"search\" placeholder=\"filter case ids\" aria-label=\"filter case ids\">\
         <span id=\"shown\"></span></div>\n<main><table id=\"matrix\"><thead><tr><th>case</th>",
    );
    for c in &m.columns {
        let _ = write!(out, "<th>{}</th>", esc(&c.name));
    }
    out.push_str("</tr></thead>\n");

    for (tool, clauses) in m.grouped() {
        let n: usize = clauses.values().map(Vec::len).sum();
        let _ = write!(
            out,
            "<tbody data-tool=\"{}\"><tr class=\"tool\"><th colspan=\"{}\">{} — {n} case(s)</th></tr><tr class=\"summary\"><th>pass rate</th>",
            esc(tool),
            cols + 1,
            esc(tool)
        );
        for i in 0..cols {
            out.push_str(&rate_cell(&m.tally(i, |r| r.tool == tool)));
        }
        out.push_str("</tr>\n");
        for (clause, rows) in clauses {
            let _ = writeln!(
                out,
                "<tr class=\"clause\"><th colspan=\"{}\">{} <small>({} case(s))</small></th></tr>",
                cols + 1,
                esc(clause),
                rows.len()
            );
            for row in rows {
                let row_index = rows_data.len();
                rows_data.push(json!({
                    "id": row.id,
                    "summary": row.summary,
                    "spec": row.spec,
                    "expectSuccess": row.expect_success,
                    "expect": serde_json::to_string_pretty(&row.expect_result).unwrap_or_default(),
                    "call": row.call,
                }));
                let _ = write!(
                    out,
                    "<tr class=\"case\" data-id=\"{}\" data-disagree=\"{}\" data-fail=\"{}\"><th><code>{}</code><div class=\"sum\">{}</div></th>",
                    esc(&row.id),
                    u8::from(m.disagree(row)),
                    u8::from(Matrix::any_failure(row)),
                    esc(&row.id),
                    esc(&row.summary)
                );
                for (col, cell) in row.cells.iter().enumerate() {
                    let small = match (cell.departure, cell.outcome) {
                        (Some(d), _) => format!("<small>{}</small>", esc(d.as_str())),
                        (None, CellOutcome::Skip | CellOutcome::NotRun) => String::new(),
                        (None, CellOutcome::Pass | CellOutcome::Fail | CellOutcome::Error) => {
                            String::new()
                        }
                    };
                    match &cell.detail {
                        Some(d) => {
                            let index = cells_data.len();
                            cells_data.push(json!({
                                "row": row_index,
                                "col": col,
                                "outcome": cell.outcome.as_str(),
                                "departure": cell.departure.map(|d| d.as_str()),
                                "departureText": cell.departure.map(|d| d.describe()),
                                "reason": cell.reason,
                                "success": cell.success,
                                "mismatches": d.mismatches,
                                "received": d.received.as_ref().map(|v| serde_json::to_string_pretty(v).unwrap_or_default()),
                                "files": d.files,
                                "outside": d.outside,
                                "error": d.error,
                                "stderr": d.stderr,
                            }));
                            let _ = write!(
                                out,
                                "<td class=\"cell {}\" data-d=\"{index}\" tabindex=\"0\" role=\"button\" title=\"{}\">{}{small}</td>",
                                cell.outcome.as_str(),
                                esc(&cell.reason),
                                cell.outcome.as_str()
                            );
                        }
                        None => {
                            let _ = write!(
                                out,
                                "<td class=\"cell {}\" title=\"{}\">{}{small}</td>",
                                cell.outcome.as_str(),
                                esc(&cell.reason),
                                cell.outcome.as_str()
                            );
                        }
                    }
                }
                out.push_str("</tr>\n");
            }
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></main>\n<dialog id=\"detail\"><div class=\"bar\"><b id=\"detail-title\"></b><button type=\"button\" id=\"detail-close\">close</button></div><div id=\"detail-body\"></div></dialog>\n");
    let details = json!({
        "judge": m.judge.as_str(),
        "columns": m.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        "rows": rows_data,
        "cells": cells_data,
    });
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"patchspec-details\">{}</script>\n<script>{SCRIPT}</script>\n</body></html>\n",
        script_json(&details)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_script_ends() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let v = json!({"t": "</script><script>alert(1)</script>"});
        let s = script_json(&v);
        assert!(!s.contains("</script"), "{s}");
        let back: Value = serde_json::from_str(&s).expect("still JSON");
        assert_eq!(back, v);
    }
}
