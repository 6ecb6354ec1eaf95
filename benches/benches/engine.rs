//! The engine on large files, next to the I/O floor measured in the same run.
//!
//! Groups (ids are read back by `patchspec_benches::report`):
//! - `floor`: a plain in-memory copy, and read + SHA-256 + write temp +
//!   fsync + rename on disk;
//! - `envelope_in_memory` (parse + plan + apply, bytes in → bytes out),
//!   `envelope_plan_only` (the same without the parse) and
//!   `envelope_on_disk` (the whole `apply_patch` on a workspace, with the
//!   `expectedSha256ByPath` stale check): every size × hunk count;
//! - `line_patch_in_memory` (SHA check + `apply_changes`) and
//!   `line_patch_on_disk` (`apply_batch`): every size, 10,000 changes of
//!   the three operations;
//! - `parse` (a 50 MB multi-section envelope, and each envelope case's
//!   envelope alone: `case/<size>x<hunks>`) and `validate` (a
//!   100,000-change `workspace_write_patch` batch).
//!
//! On disk, each iteration applies the edit and the next one its inverse
//! ([`Flip`]), so the file never needs restoring and every iteration does the
//! same work. Under `cargo test` (criterion's test mode) the inputs are small
//! and each bench runs once; nothing asserts a duration.

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    black_box, criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion,
    SamplingMode, Throughput,
};
use patchspec_benches::case::Case;
use patchspec_benches::support::{floor_in_memory, floor_on_disk, scratch_dir, Flip, RunMode};
use patchspec_benches::{
    big_envelope, line_edits_after, reverse_line_edits, size_label, spread_line_edits,
    write_patch_params, SourceFile, FILE_PATH, SEED,
};
use patchspec_engine::envelope::{self, Hunk, SectionKind};
use patchspec_engine::fs::RealFs;
use patchspec_engine::hash::{matches_sha256, sha256_hex};
use patchspec_engine::matching::apply_hunks;
use patchspec_engine::tools::tul::apply_patch::{self, ApplyOptions};
use patchspec_engine::tools::tul::write_patch::{self, ValidatedBatch};

/// The hunks of the one Update section of a generated envelope.
fn update_hunks<'a>(patch: &'a envelope::Patch<'a>) -> &'a [Hunk<'a>] {
    match &patch.sections[0].kind {
        SectionKind::Update { hunks, .. } => hunks,
        other => panic!("a generated envelope is one Update section, not {other:?}"),
    }
}

/// Parse and apply in memory: what the in-memory bench times.
fn envelope_in_memory(original: &[u8], text: &str) -> Vec<u8> {
    let patch = envelope::parse(text).expect("the generated envelope parses");
    apply_hunks(original, update_hunks(&patch)).expect("the generated envelope applies")
}

/// The check made once before a case is timed. A generated input is valid
/// by construction, so a failure is an engine bug: under `cargo test` it
/// fails the run; when measuring, the case is skipped with a loud note so
/// the other figures are still measured.
fn engine_ok(mode: RunMode, case: &str, result: Result<(), String>) -> bool {
    match (result, mode) {
        (Ok(()), _) => true,
        (Err(e), RunMode::Test) => panic!("engine error on {case}: {e}"),
        (Err(e), RunMode::Measure) => {
            eprintln!("ENGINE ERROR, case skipped: {case}: {e}");
            false
        }
    }
}

/// Parse and apply once, and compare with the expected bytes.
fn check_in_memory(original: &[u8], text: &str, expected: &[u8]) -> Result<(), String> {
    let patch = envelope::parse(text).map_err(|e| format!("parse: {e}"))?;
    let out =
        apply_hunks(original, update_hunks(&patch)).map_err(|e| format!("apply_hunks: {e:?}"))?;
    match out == expected {
        true => Ok(()),
        false => Err("apply_hunks returned different bytes than expected".into()),
    }
}

/// Check that the workspace file holds `want`.
fn file_is(ws: &std::path::Path, want: &[u8]) -> Result<(), String> {
    let now = std::fs::read(ws.join(FILE_PATH)).map_err(|e| e.to_string())?;
    match now == want {
        true => Ok(()),
        false => Err("the file on disk differs from the expected bytes".into()),
    }
}

/// Large inputs take whole seconds per iteration: sample flat, not linearly.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, size: usize) {
    if size >= 10_000_000 {
        group.sampling_mode(SamplingMode::Flat);
    }
}

/// Time `iters` calls of `step`, which gets the edit to apply next.
fn time_flips<T>(flip: &mut Flip<T>, iters: u64, mut step: impl FnMut(&T)) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        step(flip.step());
    }
    start.elapsed()
}

fn benches(c: &mut Criterion) {
    let mode = RunMode::from_args();
    for size in mode.file_sizes() {
        let label = size_label(size);
        let file = SourceFile::generate(size, SEED);
        let bytes = file.bytes();
        let scratch = scratch_dir().expect("a scratch directory");
        let ws = scratch.path();
        std::fs::write(ws.join(FILE_PATH), bytes).expect("write the workspace file");
        let fs = RealFs::open(ws).expect("open the workspace");

        // The floor.
        {
            let mut group = c.benchmark_group("floor");
            configure(&mut group, size);
            group.throughput(Throughput::BytesDecimal(size as u64));
            group.bench_function(BenchmarkId::new("copy", &label), |b| {
                b.iter(|| floor_in_memory(black_box(bytes)))
            });
            group.bench_function(BenchmarkId::new("disk", &label), |b| {
                b.iter(|| floor_on_disk(ws, FILE_PATH).expect("the floor's I/O"))
            });
            group.finish();
        }

        // The envelope, in memory and on disk.
        for hunks in mode.hunk_counts() {
            if hunks > file.block_count() {
                eprintln!(
                    "skipping {label} x {hunks} hunks: the file has only {} blocks to edit",
                    file.block_count()
                );
                continue;
            }
            let case = Case::new(&file, hunks);
            let options = |sha: &str| ApplyOptions {
                expected_sha256: [(FILE_PATH.to_string(), sha.to_string())].into(),
                ..ApplyOptions::default()
            };
            let mut flip = Flip::new(
                (case.forward.as_str(), options(&case.sha_before)),
                (case.reverse.as_str(), options(&case.sha_after)),
            );
            let on_disk = |(text, options): &(&str, ApplyOptions)| -> Result<(), String> {
                apply_patch::apply(&fs, text, options)
                    .map(drop)
                    .map_err(|refusal| format!("apply_patch: {}", refusal.error.message))
            };
            let checked = check_in_memory(bytes, &case.forward, &case.expected)
                .and_then(|()| on_disk(flip.step()))
                .and_then(|()| file_is(ws, &case.expected))
                .and_then(|()| on_disk(flip.step()))
                .and_then(|()| file_is(ws, bytes));
            if !engine_ok(mode, &format!("{label} x {hunks} hunks"), checked) {
                if let Some(undo) = flip.restore() {
                    let _ = on_disk(undo);
                }
                continue;
            }
            let id = BenchmarkId::new(&label, hunks);

            let mut group = c.benchmark_group("envelope_in_memory");
            configure(&mut group, size);
            group.throughput(Throughput::BytesDecimal(size as u64));
            group.bench_function(id.clone(), |b| {
                b.iter(|| envelope_in_memory(bytes, black_box(&case.forward)))
            });
            group.finish();

            // The parse alone of the same envelope: the part of the
            // in-memory figure that grows with the patch and not with the
            // file (at 10 MB x 10,000 the envelope is 1.25 MB).
            let mut group = c.benchmark_group("parse");
            configure(&mut group, case.forward.len());
            group.throughput(Throughput::BytesDecimal(case.forward.len() as u64));
            group.bench_function(BenchmarkId::new("case", format!("{label}x{hunks}")), |b| {
                b.iter(|| envelope::parse(black_box(&case.forward)).expect("the envelope parses"))
            });
            group.finish();

            let parsed = envelope::parse(&case.forward).expect("the generated envelope parses");
            let mut group = c.benchmark_group("envelope_plan_only");
            configure(&mut group, size);
            group.throughput(Throughput::BytesDecimal(size as u64));
            group.bench_function(id.clone(), |b| {
                b.iter(|| apply_hunks(bytes, black_box(update_hunks(&parsed))).expect("applies"))
            });
            group.finish();

            let apply = |edit: &(&str, ApplyOptions)| on_disk(edit).expect("applied before");
            let mut group = c.benchmark_group("envelope_on_disk");
            configure(&mut group, size);
            group.throughput(Throughput::BytesDecimal(size as u64));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| time_flips(&mut flip, iters, apply))
            });
            group.finish();
            if let Some(undo) = flip.restore() {
                apply(undo);
            }
        }

        // The line patch (TUL-002), in memory and on disk.
        let changes = mode.line_changes();
        let edits = spread_line_edits(&file, changes);
        let after = line_edits_after(bytes, &edits);
        let reverse = reverse_line_edits(&edits);
        let batch = |sha: &str, edits| -> ValidatedBatch {
            write_patch::validate(&write_patch_params(FILE_PATH, sha, edits))
                .expect("the generated batch is valid")
        };
        let forward = batch(&sha256_hex(bytes), &edits);
        let backward = batch(&sha256_hex(&after), &reverse);
        let in_memory = |original: &[u8], batch: &ValidatedBatch| {
            let file = &batch.files[0];
            if !matches_sha256(&file.original_sha256, original) {
                return Err("the digest does not match".to_string());
            }
            write_patch::apply_changes(original, &file.changes).map_err(|e| e.to_string())
        };
        let mut flip = Flip::new(forward, backward);
        let on_disk = |batch: &ValidatedBatch| -> Result<(), String> {
            let report = write_patch::apply_batch(&fs, batch);
            match report.success() {
                true => Ok(()),
                false => Err(format!("apply_batch: {report:?}")),
            }
        };
        let checked = in_memory(bytes, flip.forward_edit())
            .and_then(|out| match out == after {
                true => Ok(()),
                false => Err("apply_changes returned different bytes than expected".into()),
            })
            .and_then(|()| on_disk(flip.step()))
            .and_then(|()| file_is(ws, &after))
            .and_then(|()| on_disk(flip.step()))
            .and_then(|()| file_is(ws, bytes));
        if engine_ok(mode, &format!("{label} x {changes} line changes"), checked) {
            let id = BenchmarkId::new(&label, changes);
            let mut group = c.benchmark_group("line_patch_in_memory");
            configure(&mut group, size);
            group.throughput(Throughput::BytesDecimal(size as u64));
            let forward = flip.forward_edit().clone();
            group.bench_function(id.clone(), |b| {
                b.iter(|| in_memory(bytes, black_box(&forward)).expect("applied before"))
            });
            group.finish();

            let apply = |batch: &ValidatedBatch| on_disk(batch).expect("applied before");
            let mut group = c.benchmark_group("line_patch_on_disk");
            configure(&mut group, size);
            group.throughput(Throughput::BytesDecimal(size as u64));
            group.bench_function(id, |b| {
                b.iter_custom(|iters| time_flips(&mut flip, iters, apply))
            });
            group.finish();
        }
        if let Some(undo) = flip.restore() {
            let _ = on_disk(undo);
        }
    }

    // Parse throughput.
    let text = big_envelope(mode.parse_bytes(), SEED);
    let mut group = c.benchmark_group("parse");
    configure(&mut group, text.len());
    group.throughput(Throughput::BytesDecimal(text.len() as u64));
    group.bench_function(
        BenchmarkId::new("envelope", size_label(mode.parse_bytes())),
        |b| b.iter(|| envelope::parse(black_box(&text)).expect("the big envelope parses")),
    );
    group.finish();
    drop(text);

    // The validator on one large batch.
    let count = mode.validate_changes();
    let file = SourceFile::generate(count * 100, SEED);
    let params = write_patch_params(
        FILE_PATH,
        &sha256_hex(file.bytes()),
        &spread_line_edits(&file, count),
    );
    let mut group = c.benchmark_group("validate");
    configure(&mut group, if count >= 100_000 { usize::MAX } else { 0 });
    group.throughput(Throughput::Elements(count as u64));
    group.bench_function(BenchmarkId::new("changes", count), |b| {
        b.iter(|| write_patch::validate(black_box(&params)).expect("the batch is valid"))
    });
    group.finish();
}

criterion_group! {
    name = engine;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = benches
}
criterion_main!(engine);
