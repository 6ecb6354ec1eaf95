//! The engine's own subcommands: `patchspec apply` and `patchspec call`.
//! They parse nothing themselves beyond clap, and call the engine.
//!
//! Exit codes: 0 applied (or the tool succeeded), 1 refused (the tool
//! failed), 2 usage errors — and 2 when the output could not be written
//! (a reader that closes the pipe early is not such a failure: see
//! [`crate::output`]).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use crate::output::{eprintln_quietly, stdout, Quiet};

use patchspec_engine::dispatch::{self, Session, ToolCall};
use patchspec_engine::fs::RealFs;
use patchspec_engine::tools::apply_patch::{self, ApplyOptions};

/// `patchspec apply [FILE|-]`: apply an envelope to a directory.
#[derive(Clone, Debug, clap::Args)]
pub struct ApplyArgs {
    /// The envelope file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub file: String,
    /// The workspace (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
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
}

/// `patchspec call TOOL [PARAMS|-]`: run one tool call and print its result document.
#[derive(Clone, Debug, clap::Args)]
pub struct CallArgs {
    /// The tool's wire name, e.g. `workspace_write_patch`.
    pub tool: String,
    /// The params: JSON text, `@FILE` to read them from a file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub params: String,
    /// The workspace (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// A JSON file mapping docPath to content: the session's ActiveFiles.
    #[arg(long)]
    pub active_files: Option<PathBuf>,
}

/// Run `patchspec apply`; returns the process exit code (0 applied, 1 refused, 2 usage).
pub fn apply(args: &ApplyArgs) -> i32 {
    let envelope = match read_input(&args.file) {
        Ok(bytes) => bytes,
        Err(e) => return usage(&format!("cannot read {}: {e}", args.file)),
    };
    let mut options = ApplyOptions {
        atomic: !args.no_atomic,
        dry_run: args.dry_run,
        ..ApplyOptions::default()
    };
    for pair in &args.expect_sha {
        // The last `=`: a digest never contains one, a file name may.
        let Some((path, hex)) = pair.rsplit_once('=') else {
            return usage(&format!("--expect-sha takes PATH=HEX, got {pair:?}"));
        };
        options
            .expected_sha256
            .insert(path.to_string(), hex.to_string());
    }
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let fs = match RealFs::open(&root) {
        Ok(fs) => fs,
        Err(e) => {
            return usage(&format!(
                "cannot open the workspace {}: {e}",
                root.display()
            ))
        }
    };
    let applied = apply_patch::apply_bytes(&fs, &envelope, &options);
    let code = i32::from(applied.error.is_some());
    let mut out = stdout();
    let printed = if args.json {
        let outcome = apply_patch::outcome(options.atomic, &applied);
        print_json(&mut out, &outcome.result)
    } else {
        print_changes(&mut out, &applied.changed_files, args.dry_run)
    };
    if let Err(e) = printed {
        return output_failed(&e);
    }
    if let (Some(e), false) = (&applied.error, args.json) {
        eprintln_quietly(format_args!("error[{}]: {}", e.kind.as_str(), e.message));
        if let Some(text) = e
            .details
            .get("diagnosis")
            .and_then(apply_patch::human_diagnosis)
        {
            eprintln_quietly(format_args!("{}", text.trim_end_matches('\n')));
        }
        if !options.atomic && !applied.changed_files.is_empty() {
            eprintln_quietly(format_args!(
                "note: not atomic: the sections listed above were applied before the failure"
            ));
        } else if !args.dry_run {
            eprintln_quietly(format_args!("note: nothing was written"));
        }
    }
    code
}

/// The human list of changed files.
fn print_changes(
    out: &mut Quiet<io::Stdout>,
    files: &[apply_patch::ChangedFile],
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
    2
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
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let outcome = dispatch::call(&ToolCall {
        tool_name: &args.tool,
        params: &params,
        workspace_root: &root,
        session: &session,
    });
    if let Err(e) = print_json(&mut stdout(), &outcome.result) {
        return output_failed(&e);
    }
    i32::from(!outcome.success)
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
    2
}
