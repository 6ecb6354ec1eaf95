//! The cost of a repair (docs/diagnostics.md, "Repairs"): a refusal with
//! its repair search next to the same refusal with only its diagnosis, on
//! a 1 MB file of tab-indented code. Group `repair/<case>`:
//! - `refused_with_repair`: `apply_patch::apply` as a call runs it: the
//!   refused apply, its diagnosis, the repair search and its dry runs;
//! - `refused_with_diagnosis`: the refused apply without the search (the
//!   diagnosis off) plus the diagnosis alone: what the refusal cost before
//!   repairs existed;
//! - `apply_ok`: the repaired envelope applied (a dry run), for scale.
//!
//! Target: `refused_with_repair` ≤ 2 × `refused_with_diagnosis`. The
//! success path is untouched (the search runs only on a refusal). Under
//! `cargo test` the file is small, each case runs once and checks that the
//! repair is offered; nothing asserts a duration.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use patchspec_benches::support::RunMode;
use patchspec_engine::diagnose;
use patchspec_engine::envelope::{self, SectionKind};
use patchspec_engine::fs::RealFs;
use patchspec_engine::repair_of;
use patchspec_engine::tools::tul::apply_patch::{self, ApplyOptions};

/// A line of tab-indented code, unique by its number.
fn code_line(i: usize) -> String {
    match i % 4 {
        0 => format!("func handler{i}(w Writer, r *Request) error {{"),
        1 => format!("\tif err := check{i}(r); err != nil {{"),
        2 => format!("\t\treturn fmt.Errorf(\"step {i}: %w\", err)"),
        _ => "\t}".to_string(),
    }
}

fn benches(c: &mut Criterion) {
    let mode = RunMode::from_args();
    let bytes = match mode {
        RunMode::Measure => 1024 * 1024,
        RunMode::Test => 32 * 1024,
    };
    let mut file = String::new();
    let mut n = 0;
    while file.len() < bytes {
        file.push_str(&code_line(n));
        file.push('\n');
        n += 1;
    }
    let dir = tempfile::tempdir().expect("a scratch workspace");
    std::fs::write(dir.path().join("h.go"), &file).expect("write the file");
    let fs = RealFs::open(dir.path()).expect("open the workspace");
    let at = (n / 2) / 4 * 4;
    let correct = format!(
        "*** Begin Patch\n*** Update File: h.go\n@@\n {}\n-{}\n+{}\n {}\n*** End Patch\n",
        code_line(at),
        code_line(at + 1),
        code_line(at + 1).replace("err != nil", "err != nil && !quiet"),
        code_line(at + 2),
    );
    // Every line indented: a hunk dedented by one tab is a uniform shift.
    let indented = format!(
        "*** Begin Patch\n*** Update File: h.go\n@@\n {}\n-{}\n+{}\n {}\n*** End Patch\n",
        code_line(at + 1),
        code_line(at + 2),
        code_line(at + 2).replace("step", "stage"),
        code_line(at + 3),
    );
    let cases = [
        ("literal_tab_escape", correct.replace('\t', "\\t")),
        (
            "indentation",
            indented
                .lines()
                .map(|l| match l.as_bytes().first() {
                    Some(b' ' | b'-' | b'+') => {
                        format!("{}{}", &l[..1], l[1..].replacen('\t', "", 1))
                    }
                    _ => l.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n",
        ),
        (
            "blank_separator_line",
            correct.replace("\n*** End Patch", "\n\n*** End Patch"),
        ),
    ];
    let quiet = ApplyOptions {
        diagnose: false,
        ..ApplyOptions::default()
    };
    let dry = ApplyOptions {
        dry_run: true,
        ..ApplyOptions::default()
    };
    let mut group = c.benchmark_group("repair");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for (name, patch) in &cases {
        let refused = apply_patch::apply(&fs, patch, &ApplyOptions::default());
        let error = refused.expect_err("the mistaken envelope is refused").error;
        let repair = repair_of(&error.details).expect("a repair is offered");
        assert!(
            repair.fixes.iter().any(|f| f.cause == *name),
            "{:?}",
            repair.fixes
        );
        group.bench_function(BenchmarkId::new("refused_with_repair", name), |b| {
            b.iter(|| apply_patch::apply(&fs, black_box(patch), &ApplyOptions::default()))
        });
        group.bench_function(BenchmarkId::new("refused_with_diagnosis", name), |b| {
            b.iter(|| {
                let refused = apply_patch::apply(&fs, black_box(patch), &quiet);
                // The diagnosis, as apply_patch computed it before repairs
                // (a grammar error has none: its refusal is the parse).
                if let Ok(parsed) = envelope::parse(patch) {
                    if let SectionKind::Update { hunks, .. } = &parsed.sections[0].kind {
                        let current = std::fs::read(dir.path().join("h.go")).expect("read");
                        black_box(diagnose::hunk_not_found(&current, hunks, 0, false));
                    }
                }
                refused
            })
        });
        group.bench_function(BenchmarkId::new("apply_ok", name), |b| {
            b.iter(|| apply_patch::apply(&fs, black_box(&repair.patch), &dry))
        });
    }
    group.finish();
}

criterion_group!(repair_benches, benches);
criterion_main!(repair_benches);
