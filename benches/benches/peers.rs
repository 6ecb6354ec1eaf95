//! The same edit through the tools users would pick instead, each timed as a
//! whole process on the same files: `patchspec apply` (the envelope, with
//! `--expect-sha`), GNU `patch -p1` and `git apply` (the unified diff), and
//! codex's `apply_patch` (the envelope on stdin; `@openai/codex` 0.169.0 as
//! `adapters/envelope-cli/install-codex.sh` installs it, or
//! `$PATCHSPEC_CODEX_APPLY_PATCH`). `floor` is the least any atomic rewrite
//! costs, as a process: `patchspec-benchgen floor` reads the file, SHA-256s
//! it, writes it to a temp file, fsyncs and renames it (no edit).
//! Neither peer fsyncs what it writes, and `patchspec` does (the file and
//! its directory), so each peer is also timed followed by
//! `sync big.rs .` (`gnu_patch_fsync`, `git_apply_fsync`): the same edit at
//! the same durability.
//!
//! A tool that is not installed is skipped with a note; `PATCHSPEC_PEERS`
//! (e.g. `patchspec,gnu_patch`) narrows the run to some tools. A tool whose
//! single run exceeds `PATCHSPEC_PEER_SLOW_SECS` (default 10 s) is timed
//! once instead of by criterion, and its `_fsync` variant is skipped. `patchspec` is looked
//! up as `$PATCHSPEC_BIN`, else next to this bench binary's target directory
//! (`target/release/patchspec` under `cargo bench`; build it first with
//! `cargo build --release -p patchspec-conformance`, which `benches/peers.sh`
//! does). Each tool's output is checked once against the expected file
//! before it is timed; iterations then alternate the edit and its inverse
//! (`-R` for the diff tools, the reverse envelope for patchspec).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use patchspec_benches::case::{Case, CasePaths};
use patchspec_benches::report::SINGLE_RUNS_DIR;
use patchspec_benches::support::{scratch_dir, Flip, RunMode};
use patchspec_benches::{size_label, SourceFile, FILE_PATH, SEED};

/// One way of running a tool forward or backward on a case.
struct Tool {
    /// The benchmark function id: `patchspec`, `floor`, `gnu_patch`,
    /// `git_apply`, `codex`, or one of the last three with `_fsync`.
    name: &'static str,
    program: PathBuf,
    /// Follow the tool with `sync big.rs .` (fsync of the file and its
    /// directory), for a comparison at the durability `patchspec` gives.
    fsync: bool,
}

impl Tool {
    /// The command that applies the case forward (`reverse == false`) or back.
    fn command(&self, case: &Case, paths: &CasePaths, reverse: bool) -> Command {
        let mut args: Vec<OsString> = Vec::new();
        let mut env: Option<(&str, &Path)> = None;
        let mut stdin: Option<&Path> = None;
        match self.name.trim_end_matches("_fsync") {
            "floor" => {
                args.extend(["floor".into(), "--dir".into()]);
                args.push(paths.workspace.clone().into());
                args.extend(["--file".into(), FILE_PATH.into()]);
            }
            "codex" => {
                // The envelope on stdin: as an argument it would pass the
                // kernel's 128 KiB limit on one argument.
                stdin = Some(if reverse {
                    &paths.reverse
                } else {
                    &paths.forward
                });
            }
            "patchspec" => {
                let (envelope, sha) = if reverse {
                    (&paths.reverse, &case.sha_after)
                } else {
                    (&paths.forward, &case.sha_before)
                };
                args.extend(["apply".into(), envelope.into(), "--root".into()]);
                args.push(paths.workspace.clone().into());
                args.push("--expect-sha".into());
                args.push(format!("{FILE_PATH}={sha}").into());
            }
            "gnu_patch" => {
                for a in ["-p1", "-s", "-f", "--no-backup-if-mismatch", "-i"] {
                    args.push(a.into());
                }
                args.push(paths.diff.clone().into());
                if reverse {
                    args.push("-R".into());
                }
            }
            "git_apply" => {
                // Outside any repository: never let git find one above the workspace.
                env = Some((
                    "GIT_CEILING_DIRECTORIES",
                    paths.workspace.parent().unwrap_or(Path::new("/")),
                ));
                args.push("apply".into());
                if reverse {
                    args.push("-R".into());
                }
                args.push(paths.diff.clone().into());
            }
            other => unreachable!("no such tool {other}"),
        }
        let mut cmd = if self.fsync {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!("\"$0\" \"$@\" && sync -- {FILE_PATH} ."))
                .arg(&self.program)
                .args(args);
            sh
        } else {
            let mut cmd = Command::new(&self.program);
            cmd.args(args);
            cmd
        };
        if let Some((key, value)) = env {
            cmd.env(key, value);
        }
        let input = match stdin.map(std::fs::File::open) {
            Some(Ok(file)) => Stdio::from(file),
            // Not readable: the tool then fails on empty input, and says so.
            Some(Err(_)) | None => Stdio::null(),
        };
        cmd.current_dir(&paths.workspace)
            .stdin(input)
            .stdout(Stdio::null());
        cmd
    }

    /// The file this tool leaves after a forward run: `floor` rewrites the
    /// same bytes, every other tool applies the edit.
    fn forward_result<'c>(&self, case: &'c Case) -> &'c [u8] {
        match self.name {
            "floor" => &case.original,
            _ => &case.expected,
        }
    }

    fn run(&self, case: &Case, paths: &CasePaths, reverse: bool) -> Result<(), String> {
        let status = self
            .command(case, paths, reverse)
            .status()
            .map_err(|e| format!("{} does not start: {e}", self.name))?;
        match status.success() {
            true => Ok(()),
            false => Err(format!("{} failed ({status})", self.name)),
        }
    }

    /// Apply the edit once, timed, and check the result.
    fn forward_once(&self, case: &Case, paths: &CasePaths) -> Result<Duration, String> {
        let start = Instant::now();
        self.run(case, paths, false)?;
        let took = start.elapsed();
        file_is(paths, self.forward_result(case), || {
            format!("{} produced a different file", self.name)
        })?;
        Ok(took)
    }

    /// Undo the edit with the tool itself, and check the result.
    fn reverse_once(&self, case: &Case, paths: &CasePaths) -> Result<(), String> {
        self.run(case, paths, true)?;
        file_is(paths, &case.original, || {
            format!("{} did not undo the edit", self.name)
        })
    }
}

fn file_is(paths: &CasePaths, want: &[u8], what: impl Fn() -> String) -> Result<(), String> {
    match std::fs::read(paths.workspace.join(FILE_PATH)) {
        Ok(now) if now == want => Ok(()),
        Ok(_) => Err(what()),
        Err(e) => Err(e.to_string()),
    }
}

/// One timed run is all a tool gets when it takes longer than this
/// (`PATCHSPEC_PEER_SLOW_SECS`, default 10): criterion's ten samples of a
/// tool that needs minutes per run would take hours. The run is recorded
/// under `<criterion dir>/peers-single-runs/` and reported as one run.
fn slow_limit() -> Duration {
    let secs = std::env::var("PATCHSPEC_PEER_SLOW_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    Duration::from_secs_f64(secs)
}

/// Where criterion writes (`CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
/// else the workspace's `target/criterion`), as criterion itself decides.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    target.join("criterion")
}

/// Record a single timed run in the format `patchspec_benches::report` reads.
fn record_single_run(id: &str, took: Duration) {
    let dir = criterion_dir().join(SINGLE_RUNS_DIR);
    let file = dir.join(format!("{}.json", id.replace('/', "__")));
    let json = serde_json::json!({"full_id": id, "seconds": took.as_secs_f64(), "runs": 1});
    if let Err(e) =
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, json.to_string()))
    {
        eprintln!("peers: cannot record {}: {e}", file.display());
    }
}

/// The installed tools, in report order.
fn tools() -> Vec<Tool> {
    let mut found = Vec::new();
    match patchspec_bin() {
        Some(program) => found.push(Tool {
            name: "patchspec",
            program,
            fsync: false,
        }),
        None => eprintln!(
            "peers: no patchspec binary (set PATCHSPEC_BIN or run `cargo build --release -p patchspec-conformance`); skipping it"
        ),
    }
    match sibling_bin("patchspec-benchgen") {
        Some(program) => found.push(Tool {
            name: "floor",
            program,
            fsync: false,
        }),
        None => eprintln!(
            "peers: no patchspec-benchgen binary (`cargo build --release -p patchspec-benches`); skipping floor"
        ),
    }
    let peers = [
        ("gnu_patch", "patch", false),
        ("gnu_patch_fsync", "patch", true),
        ("git_apply", "git", false),
        ("git_apply_fsync", "git", true),
    ];
    for (name, program, fsync) in peers {
        match on_path(program) {
            Some(program) => found.push(Tool {
                name,
                program,
                fsync,
            }),
            None => eprintln!("peers: `{program}` is not installed; skipping {name}"),
        }
    }
    match codex_apply_patch() {
        Some(program) => {
            for (name, fsync) in [("codex", false), ("codex_fsync", true)] {
                found.push(Tool {
                    name,
                    program: program.clone(),
                    fsync,
                });
            }
        }
        None => eprintln!(
            "peers: codex's apply_patch is not installed (adapters/envelope-cli/install-codex.sh 0.169.0, or set PATCHSPEC_CODEX_APPLY_PATCH); skipping codex"
        ),
    }
    match std::env::var("PATCHSPEC_PEERS") {
        Ok(only) if !only.trim().is_empty() => {
            let only: Vec<&str> = only.split(',').map(str::trim).collect();
            found.retain(|t| only.contains(&t.name));
            found
        }
        _ => found,
    }
}

fn patchspec_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PATCHSPEC_BIN") {
        return Some(PathBuf::from(bin));
    }
    // target/<profile>/deps/peers-<hash> → target/<profile>/patchspec
    sibling_bin("patchspec")
}

/// A binary next to this bench's target directory (`target/release/NAME`).
fn sibling_bin(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join(name);
    bin.is_file().then_some(bin)
}

/// codex's `apply_patch`: `$PATCHSPEC_CODEX_APPLY_PATCH`, else where
/// `adapters/envelope-cli/install-codex.sh` puts version 0.169.0.
fn codex_apply_patch() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PATCHSPEC_CODEX_APPLY_PATCH") {
        return Some(PathBuf::from(bin));
    }
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/envelope-cli/codex/0.169.0/bin/apply_patch");
    bin.exists().then_some(bin)
}

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

fn benches(c: &mut Criterion) {
    let mode = RunMode::from_args();
    let tools = tools();
    if mode == RunMode::Measure {
        // Single runs of an earlier invocation would shadow this one's figures.
        let _ = std::fs::remove_dir_all(criterion_dir().join(SINGLE_RUNS_DIR));
    }
    let mut current: Option<(usize, SourceFile)> = None;
    for (size, hunks) in mode.peer_cases() {
        if current.as_ref().map(|(s, _)| *s) != Some(size) {
            drop(current.take()); // free the previous file before generating the next
            current = Some((size, SourceFile::generate(size, SEED)));
        }
        let (_, file) = current.as_ref().expect("generated above");
        let case = Case::new(file, hunks);
        let scratch = scratch_dir().expect("a scratch directory");
        let paths = case.write(scratch.path()).expect("write the case");
        let target = paths.workspace.join(FILE_PATH);

        let mut group = c.benchmark_group("peers");
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::BytesDecimal(size as u64));
        let mut slow: Vec<&str> = Vec::new();
        for tool in &tools {
            let base = tool.name.trim_end_matches("_fsync");
            let case_id = format!("{}x{hunks}", size_label(size));
            let full_id = format!("peers/{}/{case_id}", tool.name);
            if slow.contains(&base) {
                eprintln!("peers: {full_id} skipped: {base} alone exceeded the slow limit");
                continue;
            }
            let checked = tool.forward_once(&case, &paths).and_then(|took| {
                if mode == RunMode::Measure && took > slow_limit() {
                    eprintln!("peers: {full_id}: one run took {took:?}; recorded as a single run");
                    record_single_run(&full_id, took);
                    slow.push(base);
                    std::fs::write(&target, &case.original).map_err(|e| e.to_string())?;
                    return Ok(false);
                }
                tool.reverse_once(&case, &paths).map(|()| true)
            });
            match (checked, mode) {
                (Ok(true), _) => {}
                (Ok(false), _) => continue,
                (Err(e), RunMode::Test) => panic!("{full_id}: {e}"),
                (Err(e), RunMode::Measure) => {
                    eprintln!("TOOL ERROR, skipped: {full_id}: {e}");
                    std::fs::write(&target, &case.original).expect("restore the file");
                    continue;
                }
            }
            let mut flip = Flip::new(false, true);
            let id = BenchmarkId::new(tool.name, case_id);
            group.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    let start = Instant::now();
                    for _ in 0..iters {
                        tool.run(&case, &paths, *flip.step()).expect("ran before");
                    }
                    start.elapsed()
                })
            });
            if let Some(&reverse) = flip.restore() {
                tool.run(&case, &paths, reverse).expect("ran before");
            }
            assert!(
                std::fs::read(&target).expect("read") == case.original,
                "left as found"
            );
        }
        group.finish();
    }
}

criterion_group! {
    name = peers;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = benches
}
criterion_main!(peers);
