//! `matrix --markdown FILE`: the matrix as Markdown, for docs/compliance.md.
//!
//! Sections: what was run (judge mode, corpus, implementations with their
//! versions and declarations); pass rates by tool; for each tool, a table of
//! its clauses (passes over judged cases per implementation); and, for each
//! implementation other than the reference, its failing cases grouped by
//! departure, most serious first, with their one-line reasons. Stable in
//! content, not in layout.

use std::fmt::Write as _;

use super::model::{Matrix, Row, ALL_DEPARTURES};

fn esc(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn who(m: &Matrix, col: usize) -> String {
    let c = &m.columns[col];
    match &c.implementation {
        Some(i) => format!("{} {}", i.name, i.version),
        None => "(undeclared)".into(),
    }
}

/// The Markdown document.
pub fn render(m: &Matrix) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Judge: **{}** — {}. Corpus {}(`sha256:{}`), {} of {} case(s) selected ({}); timeout {:.1}s; patchspec {}.\n",
        m.judge.as_str(),
        m.judge.describe().split_once(": ").map(|(_, d)| d).unwrap_or(""),
        m.corpus_version
            .as_deref()
            .map(|v| format!("v{v} "))
            .unwrap_or_default(),
        &m.corpus_hash[..16.min(m.corpus_hash.len())],
        m.rows.len(),
        m.corpus_cases,
        m.filters,
        m.timeout.as_secs_f64(),
        m.runner_version
    );
    let _ = writeln!(
        out,
        "| column | implementation | declared by | unsupported tags | run time |\n|---|---|---|---|---:|"
    );
    for (i, c) in m.columns.iter().enumerate() {
        let tags = if c.unsupported_tags.is_empty() {
            "—".to_owned()
        } else {
            c.unsupported_tags
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let unusable = c
            .unusable
            .as_deref()
            .map(|u| format!(" **unusable:** {}", esc(u)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| **{}** | {}{unusable} | {} | {tags} | {:.1}s |",
            esc(&c.name),
            esc(&who(m, i)),
            esc(&c.declared_by),
            c.duration.as_secs_f64()
        );
    }

    let tools = m.tools();
    let names: Vec<String> = m.columns.iter().map(|c| esc(&c.name)).collect();
    let _ = writeln!(
        out,
        "\n### Pass rates by tool\n\nPasses over cases judged (skipped cases left out).\n\n| tool | cases | {} |\n|---|---:|{}",
        names.join(" | "),
        "---|".repeat(names.len())
    );
    let rate_cell = |t: super::model::Tally| -> String {
        if t.judged() == 0 {
            "— (skipped)".into()
        } else {
            format!("{} ({}/{})", t.percent(), t.pass, t.judged())
        }
    };
    for tool in &tools {
        let n = m.rows.iter().filter(|r| r.tool == *tool).count();
        let cells: Vec<String> = (0..m.columns.len())
            .map(|i| rate_cell(m.tally(i, |r| r.tool == *tool)))
            .collect();
        let _ = writeln!(out, "| `{tool}` | {n} | {} |", cells.join(" | "));
    }
    if tools.len() > 1 {
        let cells: Vec<String> = (0..m.columns.len())
            .map(|i| rate_cell(m.tally(i, |_| true)))
            .collect();
        let _ = writeln!(
            out,
            "| **all** | {} | {} |",
            m.rows.len(),
            cells.join(" | ")
        );
    }

    for (tool, clauses) in m.grouped() {
        let _ = writeln!(
            out,
            "\n### `{tool}` by clause\n\nEach case is counted under its first spec reference. A cell is passes/judged; `—` when every case was skipped.\n\n| clause | cases | {} |\n|---|---:|{}",
            names.join(" | "),
            "---|".repeat(names.len())
        );
        for (clause, rows) in clauses {
            let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            let cells: Vec<String> = (0..m.columns.len())
                .map(|i| {
                    let t = m.tally(i, |r: &Row| ids.contains(&r.id.as_str()));
                    match t.judged() {
                        0 => "—".into(),
                        j if t.pass == j => format!("{}/{j}", t.pass),
                        j => format!("**{}/{j}**", t.pass),
                    }
                })
                .collect();
            let _ = writeln!(
                out,
                "| `{clause}` | {} | {} |",
                rows.len(),
                cells.join(" | ")
            );
        }
    }

    for (i, c) in m.columns.iter().enumerate() {
        if c.transport == "inprocess" {
            continue;
        }
        let deps = m.departures(i);
        let _ = writeln!(
            out,
            "\n### Departures: {} ({})\n",
            esc(&c.name),
            esc(&who(m, i))
        );
        if deps.is_empty() {
            let _ = writeln!(out, "None: every case it ran passed.");
            continue;
        }
        for d in ALL_DEPARTURES {
            let Some(rows) = deps.get(&d) else { continue };
            let _ = writeln!(
                out,
                "<details><summary><b>{}</b> ({}): {} case(s)</summary>\n",
                d.describe(),
                d.as_str(),
                rows.len()
            );
            for row in rows {
                let reason = row.cells.get(i).map(|c| esc(&c.reason)).unwrap_or_default();
                let _ = writeln!(out, "- `{}` — {reason}", row.id);
            }
            let _ = writeln!(out, "\n</details>\n");
        }
    }
    out
}
