//! The patch store's cost (issue 20): what recording adds to a call, and
//! how fast `get_patch_change` answers on a large store.
//!
//! - `store_write_patch/{off,on}/1000`: one `workspace_write_patch` batch of
//!   1,000 changes on a 1 MB file, through `dispatch::call` (validate,
//!   apply, commit, result document; with the store, its transaction too),
//!   alternating the batch and its inverse so the file stays as it was.
//! - `store_small_call/{off,on}`: a one-change batch on a small file, the
//!   same way.
//! - `store_record/{1000,1}`: the store's own part alone, `record` of the
//!   result documents those two calls produce (a fresh batch ID each
//!   time): what recording adds to a call, free of the workspace commit's
//!   fsync, whose latency on a shared disk dwarfs it.
//! - `store_get_patch_change/{batch,change}/100000`: `get_patch_change` on a
//!   store holding 100,000 recorded batches (generated once per run through
//!   the store's own `record`; 2,000 under `cargo test`).
//!
//! Budgets (docs/performance.md, "The patch store"): storing adds at most
//! 10% to the 1,000-change batch and 2 ms to a small call; a lookup takes
//! under 5 ms.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use patchspec_benches::support::{scratch_dir, Flip, RunMode};
use patchspec_benches::{
    line_edits_after, reverse_line_edits, spread_line_edits, write_patch_params, SourceFile,
    FILE_PATH, SEED,
};
use patchspec_engine::dispatch::{call, Session, ToolCall, ToolOutcome};
use patchspec_engine::hash::sha256_hex;
use patchspec_engine::store::{PatchStore, RecordedCall};
use patchspec_engine::tools::tul::write_patch;
use patchspec_store::SqliteStore;
use serde_json::{json, Value};

fn run(tool: &str, params: &Value, root: &std::path::Path, session: &Session) -> ToolOutcome {
    call(&ToolCall {
        tool_name: tool,
        params,
        workspace_root: root,
        session,
    })
}

fn session(store: Option<Arc<SqliteStore>>) -> Session {
    Session {
        store: store.map(|s| s as Arc<dyn PatchStore>),
        call_id: Some("bench".into()),
        ..Session::default()
    }
}

/// Time `iters` calls of the flip's batches on `root`.
fn time_calls(flip: &mut Flip<Value>, iters: u64, root: &std::path::Path, s: &Session) -> Duration {
    let started = Instant::now();
    for _ in 0..iters {
        let outcome = run("workspace_write_patch", flip.step(), root, s);
        assert!(outcome.success, "{}", outcome.result);
    }
    started.elapsed()
}

/// A batch and its inverse over a generated file of `bytes` bytes with `changes` changes.
fn flip_for(root: &std::path::Path, bytes: usize, changes: usize) -> Flip<Value> {
    let file = SourceFile::generate(bytes, SEED);
    let original = file.bytes();
    std::fs::write(root.join(FILE_PATH), original).expect("write the file");
    let edits = spread_line_edits(&file, changes);
    let after = line_edits_after(original, &edits);
    Flip::new(
        write_patch_params(FILE_PATH, &sha256_hex(original), &edits),
        write_patch_params(FILE_PATH, &sha256_hex(&after), &reverse_line_edits(&edits)),
    )
}

fn write_costs(c: &mut Criterion, mode: RunMode) {
    let dir = scratch_dir().expect("scratch dir");
    let record_store = SqliteStore::open(&dir.path().join("r.db")).expect("open the store");
    let mut record_group = Vec::new();
    for (group, bytes, changes) in [
        ("store_write_patch", 1_000_000, 1_000),
        ("store_small_call", 2_000, 1),
    ] {
        // Small inputs under `cargo test` (a 64 KB file has room for 100 changes).
        let (bytes, changes) = match mode {
            RunMode::Test => (bytes.min(64_000), changes.min(100)),
            RunMode::Measure => (bytes, changes),
        };
        let root = dir.path().join(group);
        std::fs::create_dir(&root).expect("workspace");
        let mut flip = flip_for(&root, bytes, changes);
        let store =
            Arc::new(SqliteStore::open(&root.with_extension("db")).expect("open the store"));
        let params = flip.forward_edit().clone();
        let sample = run("workspace_write_patch", &params, &root, &session(None));
        assert!(sample.success, "{}", sample.result);
        record_group.push((changes, sample));
        flip.step();
        let mut g = c.benchmark_group(group);
        g.sample_size(20).measurement_time(Duration::from_secs(8));
        for (label, with) in [("off", None), ("on", Some(store.clone()))] {
            let s = session(with);
            g.bench_function(format!("{label}/{changes}"), |b| {
                b.iter_custom(|iters| time_calls(&mut flip, iters, &root, &s))
            });
        }
        g.finish();
        if let Some(undo) = flip.restore() {
            run("workspace_write_patch", undo, &root, &session(None));
        }
    }
    let mut g = c.benchmark_group("store_record");
    let mut n = 0u64;
    for (changes, sample) in record_group {
        // The batch as the tool's registry entry files it (what dispatch
        // hands the store), made once: this group times the store alone.
        let (mut batch, errors) = write_patch::filed("bench", &sample.result).expect("a batch");
        g.bench_function(format!("{changes}"), |b| {
            b.iter(|| {
                n += 1;
                batch.batch_id = format!("batch-{n:032x}");
                record_store
                    .record(&RecordedCall {
                        transactions: &[],
                        tool: "workspace_write_patch",
                        call_id: "bench",
                        params: None,
                        success: true,
                        result: &errors,
                        batch: Some(&batch),
                        duration: Duration::ZERO,
                    })
                    .expect("record")
            })
        });
    }
    g.finish();
}

/// A store of `n` recorded batches (2 files, 3 changes each); the IDs of the last.
fn generated_store(path: &std::path::Path, n: usize) -> (SqliteStore, Value) {
    let store = SqliteStore::open(path).expect("open the store");
    let mut last = Value::Null;
    for i in 0..n {
        let id = |prefix: &str, k: usize| format!("{prefix}-{:016x}{:016x}", i, k);
        let change = |k: usize| {
            json!({"changeId": id("chg", k), "operation": "replace", "startLine": 10 + k, "endLine": 10 + k,
                   "expectedOriginalLines": [format!("old line {k}")], "newLines": [format!("new line {k}"), "added"],
                   "description": "a generated change"})
        };
        let file = |f: usize| {
            json!({"filePatchId": id("fp", f), "docPath": format!("src/module_{i}_{f}.rs"),
                   "originalSha256": "0".repeat(64), "applied": true, "newSha256": "1".repeat(64),
                   "changes": [change(3 * f), change(3 * f + 1), change(3 * f + 2)]})
        };
        let result = json!({"success": true, "result": {"batchId": id("batch", 0), "files": [file(0), file(1)]}, "errors": []});
        let (batch, errors) = write_patch::filed("gen", &result).expect("a batch");
        store
            .record(&RecordedCall {
                transactions: &[],
                tool: "workspace_write_patch",
                call_id: "gen",
                params: None,
                success: true,
                result: &errors,
                batch: Some(&batch),
                duration: Duration::ZERO,
            })
            .expect("record");
        last = result["result"].clone();
    }
    (store, last)
}

fn lookup_costs(c: &mut Criterion, mode: RunMode) {
    let n = if mode == RunMode::Test {
        2_000
    } else {
        100_000
    };
    let dir = scratch_dir().expect("scratch dir");
    let (store, ids) = generated_store(&dir.path().join("big.db"), n);
    let s = session(Some(Arc::new(store)));
    let batch_id = ids["batchId"].as_str().expect("id");
    let mut g = c.benchmark_group("store_get_patch_change");
    for (label, params) in [
        ("batch", json!({"batchId": batch_id})),
        (
            "change",
            json!({"batchId": batch_id, "changeId": ids["files"][1]["changes"][2]["changeId"]}),
        ),
    ] {
        let outcome = run("get_patch_change", &params, dir.path(), &s);
        assert!(outcome.success, "{}", outcome.result);
        g.bench_function(format!("{label}/{n}"), |b| {
            b.iter(|| run("get_patch_change", black_box(&params), dir.path(), &s))
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let mode = RunMode::from_args();
    write_costs(c, mode);
    lookup_costs(c, mode);
}

criterion_group!(store, benches);
criterion_main!(store);
