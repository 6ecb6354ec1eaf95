//! The repairs measured against a labelled set of realistic mistakes
//! (docs/diagnostics.md, "Repairs"), generated here, deterministically,
//! from committed files: the realistic files of `tests/diagnostics/base/`
//! of 50 lines or more (Java, TypeScript, Python, C, Go, Rust; and the
//! real JavaScript, C, Python, Rust and Markdown files of `base/large/`,
//! 642 to 2,472 lines) and `tests/repairs/server.go` (tab-indented Go),
//! each as it is (LF) and with CRLF line endings.
//!
//! On each file, edits a model makes (a value or condition changed, an
//! identifier renamed, a line added or removed; three lines of context,
//! checked to apply exactly) are turned wrong by one mechanical mistake or
//! two at once. The intended post-state is the correct envelope applied.
//! The must-not set: the same mistakes on hunks whose lines occur twice
//! in the file (two regions fit) or hold a line that is nowhere (content
//! wrong). Targets: a repair that gives the intended post-state on at
//! least 95% of the repairable items, no wrong repair, no repair on the
//! must-not set, a hint on every refusal. The per-cause table prints with
//! `--nocapture`.

use std::collections::BTreeMap;
use std::path::Path;

use patchspec_engine::fs::RealFs;
use patchspec_engine::repair_of;
use patchspec_engine::tools::tul::apply_patch::{apply, ApplyOptions};

use patchspec_engine::tools::tul::apply_patch::repair::mistakes::{
    mistake, render, second_mistake, Edit, MISTAKES, SECOND,
};

/// One file of the set: its name in the workspace and its content.
struct Seed {
    name: String,
    content: String,
}

fn seeds() -> Vec<Seed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut paths = vec![root.join("repairs/server.go")];
    for dir in ["diagnostics/base", "diagnostics/base/large"] {
        let mut found: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.is_file()
                    && p.file_name()
                        .is_some_and(|n| n != "NOTICE.md" && n != "README.md")
            })
            .collect();
        found.sort();
        paths.extend(found);
    }
    let mut out = Vec::new();
    for p in paths {
        let content = std::fs::read_to_string(&p).unwrap();
        let lines = content.lines().count();
        if !(50..=5000).contains(&lines) {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        out.push(Seed {
            content: content.replace("\r\n", "\n"),
            name: name.clone(),
        });
        out.push(Seed {
            content: content.replace("\r\n", "\n").replace('\n', "\r\n"),
            name: format!("crlf_{name}"),
        });
    }
    out
}

fn comment_for(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or("") {
        "py" | "rb" | "yaml" => "#",
        "md" => "<!--",
        _ => "//",
    }
}

/// The edit of kind `kind` at line `i` (0-based) of `lines`.
fn make_edit(lines: &[&str], i: usize, kind: usize, name: &str) -> Option<Edit> {
    let line = lines[i];
    let indent: String = line
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let mut new: Vec<String> = Vec::new();
    let removed = vec![line.to_string()];
    match kind % 3 {
        0 => {
            // A value or condition changed, or an identifier renamed.
            let changed = if line.contains("==") {
                line.replacen("==", "!=", 1)
            } else if line.contains(" < ") {
                line.replacen(" < ", " <= ", 1)
            } else if let Some(d) = line.find(|c: char| c.is_ascii_digit()) {
                let digit = line.as_bytes()[d] - b'0';
                format!("{}{}{}", &line[..d], (digit + 1) % 10, &line[d + 1..])
            } else {
                let word = line
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .find(|w| w.len() >= 4 && w.chars().next().is_some_and(char::is_alphabetic))?;
                line.replacen(word, &format!("{word}Next"), 1)
            };
            if changed == line {
                return None;
            }
            new.push(changed);
        }
        1 => {
            // A line added after it.
            new.push(line.to_string());
            let c = comment_for(name);
            let close = if c == "<!--" { " -->" } else { "" };
            new.push(format!(
                "{indent}{c} checked: keep in step with the caller{close}"
            ));
        }
        _ => {
            // The line removed (kept only as context around it).
        }
    }
    let from = i.saturating_sub(3);
    let to = (i + 4).min(lines.len());
    let mut body = Vec::new();
    for l in &lines[from..i] {
        body.push(format!(" {l}"));
    }
    if kind % 3 == 1 {
        body.push(format!(" {line}"));
        body.push(format!("+{}", new[1]));
    } else {
        for r in &removed {
            body.push(format!("-{r}"));
        }
        for n in &new {
            body.push(format!("+{n}"));
        }
    }
    for l in &lines[i + 1..to] {
        body.push(format!(" {l}"));
    }
    Some(Edit {
        body,
        at_end: to == lines.len(),
    })
}

struct Item {
    label: String,
    file: String,
    content: String,
    patch: String,
    /// The intended post-state; `None` for the must-not set.
    after: Option<String>,
}

fn workspace(name: &str, content: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), content).unwrap();
    dir
}

/// The file after `patch`, or `None` when it does not apply.
fn applied(name: &str, content: &str, patch: &str) -> Option<String> {
    let dir = workspace(name, content);
    let fs = RealFs::open(dir.path()).unwrap();
    apply(&fs, patch, &ApplyOptions::default())
        .is_ok()
        .then(|| std::fs::read_to_string(dir.path().join(name)).unwrap())
}

fn items() -> Vec<Item> {
    let mut items = Vec::new();
    let mut counter = 0usize;
    for seed in seeds() {
        let text = seed.content.replace("\r\n", "\n");
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len();
        // Sites spread over the file, the last one at its end.
        let mut sites: Vec<usize> = (1..=5).map(|k| k * n / 6).collect();
        sites.push(n.saturating_sub(2));
        let mut made = 0;
        for (s, &start) in sites.iter().enumerate() {
            let Some(i) = (start..n.saturating_sub(1)).find(|&i| lines[i].trim().len() >= 8) else {
                continue;
            };
            let Some(edit) = make_edit(&lines, i, s, &seed.name) else {
                continue;
            };
            let correct = render(&seed.name, &edit.body);
            let Some(after) = applied(&seed.name, &seed.content, &correct) else {
                continue;
            };
            // The mistakes this site gets: rotating through the list, every
            // applicable one on the sites of small files.
            for (m, which) in MISTAKES.iter().enumerate() {
                if (m + s + made) % 3 != 0 && !(which.contains("tab") || which.contains("past_end"))
                {
                    continue;
                }
                counter += 1;
                let Some(wrong) = mistake(&correct, &edit, which, counter) else {
                    continue;
                };
                items.push(Item {
                    label: which.to_string(),
                    file: seed.name.clone(),
                    content: seed.content.clone(),
                    patch: wrong.clone(),
                    after: Some(after.clone()),
                });
                // Two at once.
                if counter.is_multiple_of(4) {
                    let second = SECOND[counter % SECOND.len()];
                    if second != *which {
                        if let Some(both) = second_mistake(&wrong, second) {
                            items.push(Item {
                                label: format!("{which}+{second}"),
                                file: seed.name.clone(),
                                content: seed.content.clone(),
                                patch: both,
                                after: Some(after.clone()),
                            });
                        }
                    }
                }
            }
            made += 1;
            // The must-not set: two regions fit; a line that is nowhere.
            let old: Vec<&str> = edit
                .body
                .iter()
                .filter(|l| l.starts_with(' ') || l.starts_with('-'))
                .map(|l| &l[1..])
                .collect();
            let eol = if seed.content.contains("\r\n") {
                "\r\n"
            } else {
                "\n"
            };
            let twice = format!(
                "{}{eol}{eol}{}",
                seed.content.trim_end_matches(['\r', '\n']),
                old.join(eol)
            ) + eol;
            let wrong_line = old.iter().position(|l| l.trim().len() >= 4);
            for which in [
                "blank_separator_line",
                "missing_end_patch",
                "missing_context_prefix",
                "wrapper",
                "literal_tab_escape",
                "escaped_quotes",
            ] {
                counter += 1;
                if let Some(wrong) = mistake(&correct, &edit, which, counter) {
                    items.push(Item {
                        label: format!("must_not/two_regions/{which}"),
                        file: seed.name.clone(),
                        content: twice.clone(),
                        patch: wrong,
                        after: None,
                    });
                }
                if let Some(w) = wrong_line {
                    let mut body = edit.body.clone();
                    let idx = body
                        .iter()
                        .position(|l| {
                            (l.starts_with(' ') || l.starts_with('-')) && &l[1..] == old[w]
                        })
                        .unwrap();
                    body[idx] = format!("{} // was different", body[idx]);
                    let nowhere = render(&seed.name, &body);
                    let nowhere_edit = Edit {
                        body,
                        at_end: edit.at_end,
                    };
                    if let Some(wrong) = mistake(&nowhere, &nowhere_edit, which, counter) {
                        items.push(Item {
                            label: format!("must_not/content_nowhere/{which}"),
                            file: seed.name.clone(),
                            content: seed.content.clone(),
                            patch: wrong,
                            after: None,
                        });
                    }
                }
            }
        }
    }
    items
}

#[derive(Default)]
struct Tally {
    items: usize,
    offered: usize,
    correct: usize,
    wrong: usize,
    hint: usize,
}

#[test]
fn repairs_on_the_labelled_set() {
    let items = items();
    let mut table: BTreeMap<String, Tally> = BTreeMap::new();
    let mut problems = Vec::new();
    for item in &items {
        let dir = workspace(&item.file, &item.content);
        let fs = RealFs::open(dir.path()).unwrap();
        let result = apply(&fs, &item.patch, &ApplyOptions::default());
        let t = table.entry(item.label.clone()).or_default();
        t.items += 1;
        let Err(refusal) = result else {
            problems.push(format!(
                "{} on {}: the mistaken envelope applied",
                item.label, item.file
            ));
            continue;
        };
        let error = refusal.error;
        assert_eq!(
            std::fs::read_to_string(dir.path().join(&item.file)).unwrap(),
            item.content,
            "a refusal changes nothing"
        );
        if error.hint().is_some_and(|h| !h.is_empty()) {
            t.hint += 1;
        } else {
            problems.push(format!(
                "{} on {}: no hint ({})",
                item.label, item.file, error.message
            ));
        }
        let Some(repair) = repair_of(&error.details) else {
            if item.after.is_some() {
                problems.push(format!(
                    "{} on {}: no repair ({})",
                    item.label,
                    item.file,
                    error.message_with_hint()
                ));
            }
            continue;
        };
        t.offered += 1;
        match (
            &item.after,
            applied(&item.file, &item.content, &repair.patch),
        ) {
            (Some(want), Some(got)) if *want == got => t.correct += 1,
            _ => {
                t.wrong += 1;
                problems.push(format!(
                    "{} on {}: WRONG repair {:?}",
                    item.label, item.file, repair.fixes
                ));
            }
        }
    }
    println!(
        "{:<52} {:>5} {:>7} {:>7} {:>5} {:>5}",
        "cause", "items", "offered", "correct", "wrong", "hint"
    );
    let (mut repairable, mut correct, mut wrong, mut must_not_offered, mut hints, mut all) =
        (0, 0, 0, 0, 0, 0);
    let mut must_not = 0;
    for (label, t) in &table {
        println!(
            "{label:<52} {:>5} {:>7} {:>7} {:>5} {:>5}",
            t.items, t.offered, t.correct, t.wrong, t.hint
        );
        all += t.items;
        hints += t.hint;
        wrong += t.wrong;
        if label.starts_with("must_not/") {
            must_not += t.items;
            must_not_offered += t.offered;
        } else {
            repairable += t.items;
            correct += t.correct;
        }
    }
    println!(
        "repairable {repairable}: correct {correct} ({:.1}%), wrong {wrong}; must-not {must_not}: offered {must_not_offered}; hint {hints}/{all}",
        100.0 * correct as f64 / repairable.max(1) as f64
    );
    for p in problems.iter().take(40) {
        println!("  {p}");
    }
    let files: std::collections::BTreeSet<&str> = items.iter().map(|i| i.file.as_str()).collect();
    let languages: std::collections::BTreeSet<&str> =
        files.iter().filter_map(|f| f.rsplit('.').next()).collect();
    assert!(languages.len() >= 4, "{languages:?}");
    assert!(repairable >= 150, "{repairable} repairable items");
    assert!(must_not >= 50, "{must_not} must-not items");
    assert_eq!(wrong, 0, "wrong repairs");
    assert_eq!(must_not_offered, 0, "repairs on the must-not set");
    assert_eq!(hints, all, "a hint on every refusal");
    assert!(
        correct * 100 >= repairable * 95,
        "{correct}/{repairable} correct"
    );
}
