//! The engine's own subcommands: `patchspec apply` and `patchspec call`.
//! They parse nothing themselves beyond clap, and call the engine.

use std::path::PathBuf;

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
    /// The params as JSON, or `-` for standard input.
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
    let _ = args;
    2
}

/// Run `patchspec call`; returns the process exit code (0 success, 1 tool failure, 2 usage).
pub fn call(args: &CallArgs) -> i32 {
    let _ = args;
    2
}
