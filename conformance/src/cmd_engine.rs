//! The engine's own subcommands: `patchspec apply`, `patchspec call`,
//! `patchspec recover` and `patchspec trash`. They parse nothing themselves
//! beyond clap, and call the engine. `apply` takes the workspace's writer
//! lock and recovers an interrupted commit first, as every tool call does
//! (`patchspec_engine::Workspace::open_for_writing`).
//!
//! Exit codes ([`crate::exit`]): 0 applied (or the tool succeeded), 1
//! refused (the tool failed), 2 usage errors — and 2 when the output could
//! not be written (a reader that closes the pipe early is not such a
//! failure: see [`crate::output`]).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use crate::exit;
use crate::output::{eprintln_quietly, stdout, Quiet};

use patchspec_engine::dispatch::{self, Session, ToolCall};
use patchspec_engine::{ApplyOptions, TrashBounds, Workspace};
use serde_json::Value;

/// `--root DIR`, the workspace of `apply`, `call`, `recover` and `trash`.
#[derive(Clone, Debug, clap::Args)]
pub struct WorkspaceArg {
    /// The workspace.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
}

/// `patchspec apply [FILE|-]`: apply an envelope to a directory.
#[derive(Clone, Debug, clap::Args)]
pub struct ApplyArgs {
    /// The envelope file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub file: String,
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArg,
    /// Apply section by section and stop at the first failure.
    #[arg(long)]
    pub no_atomic: bool,
    /// Assert a file's SHA-256 before applying (`PATH=HEX`, `PATH=` for "must not exist"); repeatable.
    #[arg(long = "expect-sha", value_name = "PATH=HEX")]
    pub expect_sha: Vec<String>,
    /// Check everything and print the plan; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the result document as JSON.
    #[arg(long)]
    pub json: bool,
    /// On a refusal that carries a repair (`error.details.repair`), write
    /// the corrected envelope to this file; it is never applied here.
    #[arg(long, value_name = "FILE")]
    pub save_repair: Option<PathBuf>,
    /// The patch store.
    #[command(flatten)]
    pub store: crate::engine_store::StoreArgs,
    /// The events.
    #[command(flatten)]
    pub log: crate::logging::LogArgs,
}

/// `patchspec call TOOL [PARAMS|-]`: run one tool call and print its result document.
#[derive(Clone, Debug, clap::Args)]
pub struct CallArgs {
    /// The tool's wire name, e.g. `workspace_write_patch`.
    pub tool: String,
    /// The params: JSON text, `@FILE` to read them from a file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub params: String,
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArg,
    /// A JSON file mapping docPath to content: the session's ActiveFiles.
    #[arg(long)]
    pub active_files: Option<PathBuf>,
    /// The patch store.
    #[command(flatten)]
    pub store: crate::engine_store::StoreArgs,
    /// The events.
    #[command(flatten)]
    pub log: crate::logging::LogArgs,
}

/// `patchspec recover --root DIR`: finish (roll back) an interrupted commit.
#[derive(Clone, Debug, clap::Args)]
pub struct RecoverArgs {
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArg,
    /// Also remove what is found in .patchspec/txn and not proven to be this
    /// engine's (a journal planted by a clone, a torn or broken one), after
    /// listing it. Without it, such entries are listed and left alone: they
    /// are never executed either way.
    #[arg(long)]
    pub discard: bool,
}

/// `patchspec trash --root DIR`: list what the workspace trash holds.
#[derive(Clone, Debug, clap::Args)]
pub struct TrashArgs {
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArg,
}

/// Run `patchspec recover`: exit 0 when the workspace is now consistent
/// (whether or not there was anything to do), 1 when recovery failed, 2 when
/// the workspace cannot be opened.
pub fn recover(args: &RecoverArgs) -> i32 {
    let root = &args.workspace.root;
    if !root.is_dir() {
        return usage(&format!("{} is not a directory", root.display()));
    }
    let done = match Workspace::recover(root, args.discard) {
        Ok(done) => done,
        Err(e) => {
            eprintln_quietly(format_args!("error: {}: {e}", root.display()));
            return exit::REFUSED;
        }
    };
    let j = done.journal;
    let mut lines = Vec::new();
    if j.interrupted > 0 {
        lines.push(format!(
            "rolled back {} file{} of {} interrupted commit{}; removed {} staged temp file{}",
            j.rolled_back,
            plural(j.rolled_back),
            j.interrupted,
            plural(j.interrupted),
            j.temps_removed,
            plural(j.temps_removed)
        ));
    }
    if j.leftovers > 0 {
        lines.push(format!(
            "cleaned up after {} finished commit{}",
            j.leftovers,
            plural(j.leftovers)
        ));
    }
    if done.orphans_removed > 0 {
        lines.push(format!(
            "removed {} orphaned temp file{} no journal named",
            done.orphans_removed,
            plural(done.orphans_removed)
        ));
    }
    for (foreign, removed) in &done.discarded {
        lines.push(format!(
            "discarded {} ({removed} entr{}): {}",
            foreign.path,
            if *removed == 1 { "y" } else { "ies" },
            foreign.reason
        ));
    }
    if !args.discard && !j.foreign.is_empty() {
        for foreign in &j.foreign {
            lines.push(format!(
                "not executed, left as it is: {}: {}",
                foreign.path, foreign.reason
            ));
        }
        lines.push(format!(
            "{} entr{} in .patchspec/txn not proven to be this engine's (docs/security.md); \
             `patchspec recover --discard` removes {}",
            j.foreign.len(),
            if j.foreign.len() == 1 { "y" } else { "ies" },
            if j.foreign.len() == 1 { "it" } else { "them" }
        ));
    }
    if lines.is_empty() {
        lines.push("nothing to do: no interrupted commit".to_string());
    }
    let mut out = stdout();
    for line in lines {
        if let Err(e) = writeln!(out, "{line}") {
            return output_failed(&e);
        }
    }
    exit::OK
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Run `patchspec trash`: one line per transaction folder (oldest first:
/// id, UTC time, bytes, file count), then its files indented.
pub fn trash(args: &TrashArgs) -> i32 {
    let root = &args.workspace.root;
    let listed = Workspace::open(root).and_then(|workspace| workspace.trash());
    let entries = match listed {
        Ok(entries) => entries,
        Err(e) => return usage(&format!("cannot read the trash of {}: {e}", root.display())),
    };
    let bounds = TrashBounds::default();
    let mut out = stdout();
    let mut write = || -> io::Result<()> {
        writeln!(
            out,
            "trash: {} commit{} (kept: {} days, {} MiB in all; oldest pruned first)",
            entries.len(),
            plural(entries.len()),
            bounds.max_age_ms / 86_400_000,
            bounds.max_bytes >> 20
        )?;
        for e in &entries {
            let size = e
                .bytes
                .map_or_else(|| "size unknown".to_string(), |b| format!("{b} bytes"));
            writeln!(
                out,
                "{}  {}  {size}  {} file{}",
                e.transaction,
                utc(e.millis),
                e.files.len(),
                plural(e.files.len())
            )?;
            for f in &e.files {
                writeln!(out, "  {f}")?;
            }
        }
        out.flush()
    };
    match write() {
        Ok(()) => exit::OK,
        Err(e) => output_failed(&e),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` of Unix milliseconds (proleptic Gregorian).
fn utc(millis: u128) -> String {
    let secs = millis / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Days to civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Run `patchspec apply`; returns the process exit code (0 applied, 1 refused, 2 usage).
///
/// The call goes through [`dispatch::call`] as `apply_patch`, like every
/// tool call of `exec` and `call`: its events are emitted and, with
/// `--store`, it is recorded. Two runs cannot be a wire call and go
/// through the typed front door instead: a dry run
/// ([`Workspace::preview_patch`]: the wire has no dry run; it writes
/// nothing, takes no lock and records nothing) and an envelope that is not
/// UTF-8 ([`Workspace::apply_patch`] takes bytes: the wire's `patch` is a
/// JSON string; the refusal names the line of the first invalid byte).
pub fn apply(args: &ApplyArgs) -> i32 {
    let envelope = match read_input(&args.file) {
        Ok(bytes) => bytes,
        Err(e) => return usage(&format!("cannot read {}: {e}", args.file)),
    };
    let mut expected_sha256 = BTreeMap::new();
    for pair in &args.expect_sha {
        // The last `=`: a digest never contains one, a file name may.
        let Some((path, hex)) = pair.rsplit_once('=') else {
            return usage(&format!("--expect-sha takes PATH=HEX, got {pair:?}"));
        };
        // A malformed digest is the caller's typo, not a stale file: usage.
        if !hex.is_empty() && !patchspec_engine::hash::is_sha256_hex(hex) {
            return usage(&format!(
                "--expect-sha {pair:?}: HEX must be a SHA-256 (64 hexadecimal digits), or empty for \"{path} must not exist\""
            ));
        }
        expected_sha256.insert(path.to_string(), hex.to_string());
    }
    let root = &args.workspace.root;
    args.log.install();
    if let Err(e) = args.store.open() {
        return usage(&e.to_string());
    }
    let outcome = match std::str::from_utf8(&envelope) {
        Ok(patch) if !args.dry_run => {
            if !root.is_dir() {
                return usage(&format!(
                    "cannot open the workspace {}: not a directory",
                    root.display()
                ));
            }
            let params = serde_json::json!({
                "patch": patch,
                "atomic": !args.no_atomic,
                "expectedSha256ByPath": expected_sha256,
            });
            let session = Session {
                store: crate::engine_store::for_call(root, false),
                ..Session::default()
            };
            dispatch::call(&ToolCall {
                tool_name: "apply_patch",
                params: &params,
                workspace_root: root,
                session: &session,
            })
        }
        _ => match apply_without_dispatch(&envelope, expected_sha256, args) {
            Ok(outcome) => outcome,
            Err(code) => return code,
        },
    };
    report_applied(args, &outcome)
}

/// A dry run, or an envelope that is not UTF-8, through the front door
/// (see [`apply`]); `Err` is the exit code of a workspace that cannot be opened.
fn apply_without_dispatch(
    envelope: &[u8],
    expected_sha256: BTreeMap<String, String>,
    args: &ApplyArgs,
) -> Result<dispatch::ToolOutcome, i32> {
    let root = &args.workspace.root;
    let cannot_open = |e: io::Error| {
        usage(&format!(
            "cannot open the workspace {}: {e}",
            root.display()
        ))
    };
    let options = ApplyOptions {
        atomic: !args.no_atomic,
        dry_run: args.dry_run,
        expected_sha256,
        workspace_root: std::path::absolute(root).ok(),
        ..ApplyOptions::default()
    };
    // A dry run only reads: it does not wait for the writer lock.
    let applied = if args.dry_run {
        Workspace::open(root)
            .map_err(cannot_open)?
            .preview_patch(envelope, &options)
    } else {
        Workspace::open_for_writing(root)
            .map_err(cannot_open)?
            .apply_patch(envelope, &options)
    };
    Ok(dispatch::ToolOutcome::of_apply_patch(
        options.atomic,
        &applied,
    ))
}

/// Print what `apply` did from its result document (the document itself
/// with `--json`), write `--save-repair`, and say why on a refusal.
fn report_applied(args: &ApplyArgs, outcome: &dispatch::ToolOutcome) -> i32 {
    let doc = &outcome.result;
    let error = doc.get("error").filter(|_| !outcome.success);
    let no_details = serde_json::Map::new();
    let details = error
        .and_then(|e| e.get("details"))
        .and_then(Value::as_object)
        .unwrap_or(&no_details);
    let changed: Vec<ChangedFile> = doc
        .pointer("/data/changedFiles")
        .and_then(|files| serde_json::from_value(files.clone()).ok())
        .unwrap_or_default();
    let mut out = stdout();
    let printed = if args.json {
        print_json(&mut out, doc)
    } else {
        print_changes(&mut out, &changed, args.dry_run)
    };
    if let Err(e) = printed {
        return output_failed(&e);
    }
    let repair = patchspec_engine::repair_of(details);
    if let (Some(path), Some(repair)) = (&args.save_repair, &repair) {
        if let Err(e) = std::fs::write(path, &repair.patch) {
            return usage(&format!("cannot write {}: {e}", path.display()));
        }
    }
    let Some(error) = error else {
        return exit::OK;
    };
    if args.json {
        return exit::REFUSED;
    }
    let kind = error
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let hint = details.get("hint").and_then(Value::as_str);
    // The wire's message carries the hint after `; hint: ` (for hosts that
    // forward only the message); here the hint has its own line.
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = hint
        .and_then(|hint| message.strip_suffix(&format!("; hint: {hint}")))
        .unwrap_or(message);
    eprintln_quietly(format_args!("error[{kind}]: {message}"));
    if let Some(text) = details
        .get("diagnosis")
        .and_then(crate::diagnosis_text::human_diagnosis)
    {
        eprintln_quietly(format_args!("{}", text.trim_end_matches('\n')));
    } else if let Some(hint) = hint {
        eprintln_quietly(format_args!("  hint: {hint}"));
    }
    if let Some(repair) = &repair {
        eprintln_quietly(format_args!(
            "repair: exactly one correction of the envelope fits the workspace as it is (checked by a dry run; not applied):"
        ));
        for fix in &repair.fixes {
            eprintln_quietly(format_args!(
                "  envelope line {}: {}: {}",
                fix.envelope_line, fix.cause, fix.note
            ));
        }
        eprintln_quietly(format_args!(
            "  to apply it: patchspec apply --save-repair FIXED {} then patchspec apply FIXED (or take error.details.repair.patch from --json)",
            args.file
        ));
    }
    if args.no_atomic && !changed.is_empty() {
        eprintln_quietly(format_args!(
            "note: not atomic: the sections listed above were applied before the failure"
        ));
    } else if !args.dry_run {
        eprintln_quietly(format_args!("note: nothing was written"));
    }
    exit::REFUSED
}

/// One entry of the result document's `data.changedFiles`, as printed.
#[derive(serde::Deserialize)]
struct ChangedFile {
    path: String,
    operation: String,
    from: Option<String>,
}

/// The human list of changed files.
fn print_changes(
    out: &mut Quiet<io::Stdout>,
    files: &[ChangedFile],
    dry_run: bool,
) -> io::Result<()> {
    let verb = if dry_run { "would change" } else { "changed" };
    if !files.is_empty() {
        writeln!(out, "{verb}:")?;
    }
    for file in files {
        match &file.from {
            Some(from) => writeln!(out, "  {:<6} {from} -> {}", file.operation, file.path)?,
            None => writeln!(out, "  {:<6} {}", file.operation, file.path)?,
        }
    }
    out.flush()
}

fn print_json(out: &mut Quiet<io::Stdout>, value: &serde_json::Value) -> io::Result<()> {
    // One write: stdout is line-buffered, and a result of a million lines
    // (a call_chain's call sites) written line by line cost seconds.
    let mut text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    text.push(b'\n');
    out.write_all(&text)?;
    out.flush()
}

fn output_failed(e: &io::Error) -> i32 {
    eprintln_quietly(format_args!("error: cannot write the output: {e}"));
    exit::USAGE
}

/// Run `patchspec call`; returns the process exit code (0 success, 1 tool failure, 2 usage).
pub fn call(args: &CallArgs) -> i32 {
    let params = match args.params.as_str() {
        "-" => read_input("-"),
        text => match text.strip_prefix('@') {
            Some(file) => read_input(file),
            None => Ok(text.as_bytes().to_vec()),
        },
    };
    let params = match params {
        Ok(bytes) => bytes,
        Err(e) => return usage(&format!("cannot read the params: {e}")),
    };
    let params: serde_json::Value = match serde_json::from_slice(&params) {
        Ok(v) => v,
        Err(e) => return usage(&format!("params are not JSON: {e}")),
    };
    let mut session = Session::default();
    if let Some(path) = &args.active_files {
        let parsed = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| {
                serde_json::from_slice::<BTreeMap<String, String>>(&b).map_err(|e| e.to_string())
            });
        match parsed {
            Ok(map) => session.active_files = map,
            Err(e) => return usage(&format!("--active-files {}: {e}", path.display())),
        }
    }
    let root = &args.workspace.root;
    args.log.install();
    if let Err(e) = args.store.open() {
        return usage(&e.to_string());
    }
    session.store = crate::engine_store::for_call(root, false);
    let outcome = dispatch::call(&ToolCall {
        tool_name: &args.tool,
        params: &params,
        workspace_root: root,
        session: &session,
    });
    if let Err(e) = print_json(&mut stdout(), &outcome.result) {
        return output_failed(&e);
    }
    if outcome.success {
        exit::OK
    } else {
        exit::REFUSED
    }
}

/// Read a file, or standard input for `-`.
fn read_input(name: &str) -> std::io::Result<Vec<u8>> {
    if name == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(name)
    }
}

fn usage(message: &str) -> i32 {
    eprintln_quietly(format_args!("error: {message}"));
    exit::USAGE
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formats_unix_millis() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(1_700_000_000_123), "2023-11-14T22:13:20Z");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
