//! The cost of the failure-path diagnosis on 10 MB files, benign and
//! hostile. Prints timings; asserts nothing (durations depend on the
//! machine). Run in release mode:
//!
//! ```sh
//! cargo run --release -p patchspec-engine --example diagnose_cost
//! ```
//!
//! Each line times the diagnosis alone (the matcher's own failure is timed
//! separately as `match`), as the median of five runs.

use std::time::{Duration, Instant};

use patchspec_engine::diagnose;
use patchspec_engine::envelope;
use patchspec_engine::matching::apply_hunks;

const SIZE: usize = 10 * 1024 * 1024;

fn median(mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..5)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[2]
}

/// `DIAGNOSE_COST_ONLY=text` runs only the cases whose name contains `text`.
fn selected(name: &str) -> bool {
    std::env::var("DIAGNOSE_COST_ONLY").map_or(true, |f| name.contains(&f))
}

/// A file of `SIZE` bytes made of `line(i)` lines.
fn file(line: impl Fn(usize) -> String) -> Vec<u8> {
    let mut out = Vec::with_capacity(SIZE + 256);
    let mut i = 0;
    while out.len() < SIZE {
        out.extend_from_slice(line(i).as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out
}

fn envelope_of(old: &[String], add: &str) -> String {
    let mut p = String::from("*** Begin Patch\n*** Update File: f\n@@\n");
    for l in old {
        p.push(' ');
        p.push_str(l);
        p.push('\n');
    }
    p.push('+');
    p.push_str(add);
    p.push_str("\n*** End Patch\n");
    p
}

fn case(name: &str, bytes: &[u8], patch: &str) {
    if !selected(name) {
        return;
    }
    let parsed = envelope::parse(patch).expect("the generated envelope parses");
    let envelope::SectionKind::Update { hunks, .. } = &parsed.sections[0].kind else {
        unreachable!("the generated envelope is one Update section")
    };
    let mut failure = None;
    let t_match = median(|| failure = apply_hunks(bytes, hunks).err());
    let Some(err) = failure else {
        println!("{name:<58} (applied: not a failure case)");
        return;
    };
    let mut d = None;
    let t_diag = median(|| {
        d = Some(match err.failure {
            patchspec_engine::matching::HunkFailure::MultipleMatches { .. } => {
                diagnose::multiple_matches(bytes, hunks, err.hunk_index)
            }
            _ => diagnose::hunk_not_found(bytes, hunks, err.hunk_index, false),
        })
    });
    let d = d.expect("ran at least once");
    println!(
        "{name:<58} match {:>8.2} ms   diagnose {:>8.2} ms   -> {} at {:?}",
        t_match.as_secs_f64() * 1e3,
        t_diag.as_secs_f64() * 1e3,
        d.cause().as_str(),
        d.line
    );
}

fn main() {
    // Realistic code, every line distinct; a hunk near the end with a
    // trailing-whitespace mistake.
    let code =
        file(|i| format!("    let value_{i} = compute(input_{i}, {i}) + offset; // step {i}"));
    let n = code.split(|&b| b == b'\n').count() - 1;
    let at = n - 100;
    let old: Vec<String> = (at..at + 5)
        .map(|i| format!("    let value_{i} = compute(input_{i}, {i}) + offset; // step {i}"))
        .collect();
    let mut mistaken = old.clone();
    mistaken[2].push(' ');
    case(
        "code, 5-line hunk, trailing space",
        &code,
        &envelope_of(&mistaken, "x"),
    );
    let unrelated: Vec<String> = (0..5).map(|i| format!("fn unrelated_{i}() {{}}")).collect();
    case(
        "code, 5-line hunk, nothing similar",
        &code,
        &envelope_of(&unrelated, "x"),
    );
    let long: Vec<String> = (0..10_000)
        .map(|i| format!("    let value_{i} = compute(input_{i}, {i}) + offset;  // step {i}"))
        .collect();
    case(
        "code, 10,000-line hunk, every line off",
        &code,
        &envelope_of(&long, "x"),
    );

    // Hostile: a file of identical lines.
    let same = file(|_| "x = 1".to_string());
    let off: Vec<String> = (0..10_000).map(|_| "x = 1 ".to_string()).collect();
    case(
        "identical lines, 10,000-line hunk, trailing space",
        &same,
        &envelope_of(&off, "y"),
    );
    let absent: Vec<String> = (0..10_000).map(|_| "y = 2".to_string()).collect();
    case(
        "identical lines, 10,000-line hunk, absent",
        &same,
        &envelope_of(&absent, "y"),
    );
    let mut almost: Vec<String> = (0..10_000).map(|_| "x = 1".to_string()).collect();
    almost[9_999] = "x = 2".into();
    case(
        "identical lines, 10,000-line hunk, last line differs",
        &same,
        &envelope_of(&almost, "y"),
    );
    let three: Vec<String> = (0..3).map(|_| "x = 1".to_string()).collect();
    case(
        "identical lines, 3-line hunk, multiple matches",
        &same,
        &envelope_of(&three, "y"),
    );

    // Hostile: 1-byte lines, and one 10 MB line.
    let tiny = file(|_| "x".to_string());
    let tiny_off: Vec<String> = (0..10_000).map(|_| "x ".to_string()).collect();
    case(
        "1-byte lines, 10,000-line hunk, trailing space",
        &tiny,
        &envelope_of(&tiny_off, "y"),
    );
    let one = vec![b'a'; SIZE];
    let mut one_line = String::from_utf8(one.clone()).expect("ASCII");
    one_line.push(' ');
    case(
        "one 10 MB line, hunk = that line + a space",
        &one,
        &envelope_of(&[one_line], "y"),
    );

    // Non-ASCII text: accented Latin and CJK.
    let accents = file(|i| format!("    // café résumé naïve coöperate {i} “quoted” — dash"));
    let na = accents.split(|&b| b == b'\n').count() - 1;
    let old: Vec<String> = (na - 50..na - 46)
        .map(|i| format!("    // café résumé naïve coöperate {i} \"quoted\" - dash"))
        .collect();
    case(
        "accented lines, 4-line hunk, straight quotes",
        &accents,
        &envelope_of(&old, "x"),
    );
    let cjk = file(|i| format!("    // 設定ファイルを読み込む処理 {i} 「引用」（全角）"));
    let nc = cjk.split(|&b| b == b'\n').count() - 1;
    let old: Vec<String> = (nc - 50..nc - 46)
        .map(|i| format!("    // 設定ファイルを読み込む処理 {i} 「引用」(全角)"))
        .collect();
    case(
        "CJK lines, 4-line hunk, full-width parentheses",
        &cjk,
        &envelope_of(&old, "x"),
    );

    // workspace_write_patch: a replace whose expected lines shifted.
    let expected: Vec<String> = (at..at + 5)
        .map(|i| format!("    let value_{i} = compute(input_{i}, {i}) + offset; // step {i}"))
        .collect();
    if !selected("write_patch") {
        return;
    }
    let mut d = None;
    let t = median(|| {
        d = Some(diagnose::line_mismatch(
            &code,
            at - 3,
            &expected,
            &["x".into()],
        ))
    });
    let d = d.expect("ran");
    println!(
        "{:<58} {:>23} {:>8.2} ms   -> {} at {:?}",
        "write_patch, code, 5 expected lines shifted by 4",
        "diagnose",
        t.as_secs_f64() * 1e3,
        d.cause().as_str(),
        d.line
    );
}
