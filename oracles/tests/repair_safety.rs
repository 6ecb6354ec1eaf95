//! Fuzzed safety of repairs (docs/diagnostics.md, "Repairs"): generated
//! files and correct edits, one or two random mechanical mistakes made on
//! the envelope; whenever a refusal offers a repair, the repair applies and
//! gives exactly the post-state the correct edit gives. A refusal changes
//! nothing. In-memory workspaces (the fuzzers' `MemFs`: the test lives in
//! the oracles crate for it; the mistakes are the engine's
//! `repair::mistakes`, shared with `engine/tests/repairs.rs`).
//!
//! `cargo test` runs 256 inputs; `PATCHSPEC_REPAIR_FUZZ_CASES=100000
//! cargo test --release -p patchspec-oracles --test repair_safety --
//! --nocapture` runs the measured count and prints its tally.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use patchspec_engine::repair_of;
use patchspec_engine::tools::tul::apply_patch::{apply, ApplyOptions};

use patchspec_engine::tools::tul::apply_patch::repair::mistakes::{
    mistake, render, second_mistake, Edit, MISTAKES, SECOND,
};
use patchspec_oracles::memfs::{self, MemFs};

const WORDS: &[&str] = &[
    "count", "total", "items", "buffer", "reader", "config", "index", "result", "value", "cursor",
    "limit", "offset", "name", "queue", "cache",
];

/// One line of generated code at `depth`, from a few statement shapes
/// (some with quotes, some blank, closing braces repeat as in real code).
fn code_line(tabs: bool, depth: usize, shape: usize, a: usize, b: usize, n: usize) -> String {
    let indent = if tabs {
        "\t".repeat(depth)
    } else {
        "    ".repeat(depth)
    };
    let (x, y) = (WORDS[a % WORDS.len()], WORDS[b % WORDS.len()]);
    match shape % 9 {
        0 => String::new(),
        1 => format!("{indent}let {x} = {y}({n});"),
        2 => format!("{indent}if {x} == {n} {{"),
        3 => format!("{indent}}}"),
        4 => format!("{indent}// {x} then {y}"),
        5 => format!("{indent}log(\"{x}: {n}\");"),
        6 => format!("{indent}return {x} + {y};"),
        7 => format!("{indent}{x}.push('{y}');"),
        _ => format!("{indent}for {x} in 0..{n} {{"),
    }
}

/// A generated input: the file's lines, the edit and the mistakes.
#[derive(Clone, Debug)]
struct Input {
    lines: Vec<String>,
    crlf_file: bool,
    crlf_envelope: bool,
    at: usize,
    kind: usize,
    context: usize,
    first: usize,
    second: Option<usize>,
    variant: usize,
}

fn input() -> impl Strategy<Value = Input> {
    (
        any::<bool>(),
        prop::collection::vec(
            (0usize..4, 0usize..9, 0usize..64, 0usize..64, 0usize..100),
            8..120,
        ),
        (any::<bool>(), any::<bool>()),
        (0usize..1000, 0usize..3, 0usize..4),
        (
            0usize..MISTAKES.len(),
            prop::option::of(0usize..SECOND.len()),
            0usize..6,
        ),
    )
        .prop_map(
            |(
                tabs,
                raw,
                (crlf_file, crlf_envelope),
                (at, kind, context),
                (first, second, variant),
            )| {
                let lines = raw
                    .iter()
                    .map(|&(d, s, a, b, n)| code_line(tabs, d, s, a, b, n))
                    .collect::<Vec<_>>();
                Input {
                    at: at % lines.len(),
                    lines,
                    crlf_file,
                    crlf_envelope,
                    kind,
                    context,
                    first,
                    second,
                    variant,
                }
            },
        )
}

/// The correct edit at `at` with `context` lines each side.
fn edit_of(input: &Input) -> Edit {
    let (lines, i, c) = (&input.lines, input.at, input.context);
    let from = i.saturating_sub(c);
    let to = (i + 1 + c).min(lines.len());
    let mut body: Vec<String> = lines[from..i].iter().map(|l| format!(" {l}")).collect();
    match input.kind {
        0 => {
            body.push(format!("-{}", lines[i]));
            body.push(format!("+{} // changed", lines[i]));
        }
        1 => {
            body.push(format!(" {}", lines[i]));
            body.push(format!("+{}", code_line(false, 1, 5, input.at, 3, 7)));
        }
        _ => body.push(format!("-{}", lines[i])),
    }
    body.extend(lines[i + 1..to].iter().map(|l| format!(" {l}")));
    Edit {
        body,
        at_end: to == lines.len(),
    }
}

fn workspace(input: &Input) -> (MemFs, Vec<u8>) {
    let eol = if input.crlf_file { "\r\n" } else { "\n" };
    let content = input.lines.join(eol) + eol;
    let fs = MemFs::with(
        &[(
            "f.rs".into(),
            content.clone().into_bytes(),
            memfs::DEFAULT_FILE_MODE,
        )],
        &[],
    )
    .expect("one file");
    (fs, content.into_bytes())
}

fn file(fs: &MemFs) -> Vec<u8> {
    match fs.snapshot().get("f.rs") {
        Some(memfs::Node::File(bytes, _)) => bytes.clone(),
        other => panic!("f.rs is not a file: {other:?}"),
    }
}

#[derive(Default)]
struct Tally {
    inputs: AtomicUsize,
    invisible: AtomicUsize,
    refused: AtomicUsize,
    offered: AtomicUsize,
    hinted: AtomicUsize,
}

#[test]
fn every_repair_offered_gives_the_intended_post_state() {
    let cases: u32 = std::env::var("PATCHSPEC_REPAIR_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let tally = Tally::default();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&input(), |input| {
        tally.inputs.fetch_add(1, Ordering::Relaxed);
        let edit = edit_of(&input);
        let correct = render("f.rs", &edit.body);
        let (fs, before) = workspace(&input);
        let options = ApplyOptions::default();
        if apply(&fs, &correct, &options).is_err() {
            // The correct edit is ambiguous here: nothing to repair to.
            return Ok(());
        }
        let intended = file(&fs);
        let Some(mut wrong) = mistake(&correct, &edit, MISTAKES[input.first], input.variant) else {
            return Ok(());
        };
        if let Some(s) = input.second {
            if let Some(both) = second_mistake(&wrong, SECOND[s]) {
                // A first mistake that leaves a valid edit (a dedented
                // line that exists elsewhere) is no mistake the engine
                // can see: alone it applies, as the success path would.
                let (alone, _) = workspace(&input);
                if apply(&alone, &wrong, &options).is_ok() {
                    tally.invisible.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                wrong = both;
            }
        }
        if input.crlf_envelope {
            wrong = wrong.replace('\n', "\r\n");
        }
        let (fs, _) = workspace(&input);
        let Err(refusal) = apply(&fs, &wrong, &options) else {
            // Some mistakes leave a valid envelope (a dropped prefix on
            // lines that start with a space, an escape nothing holds).
            return Ok(());
        };
        let error = refusal.error;
        tally.refused.fetch_add(1, Ordering::Relaxed);
        prop_assert_eq!(file(&fs), before.clone(), "a refusal changes nothing");
        if error.hint().is_some() {
            tally.hinted.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(repair) = repair_of(&error.details) {
            tally.offered.fetch_add(1, Ordering::Relaxed);
            let (fs, _) = workspace(&input);
            let again = apply(&fs, &repair.patch, &options);
            prop_assert!(again.is_ok(), "the repair applies: {:?}", again);
            let got = file(&fs);
            prop_assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&intended),
                "a wrong repair {:?} for {:?}",
                repair.fixes,
                wrong
            );
        }
        Ok(())
    });
    let get = |a: &AtomicUsize| a.load(Ordering::Relaxed);
    println!(
        "inputs {}, first mistake invisible (a valid edit on its own) {}, refused {}, repair offered {} (each applied and equal to the intended post-state), hint {}",
        get(&tally.inputs),
        get(&tally.invisible),
        get(&tally.refused),
        get(&tally.offered),
        get(&tally.hinted)
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
