//! The command line: clap definitions and wiring only. Each subcommand's
//! logic is in its `cmd_*` module; [`main`] maps the result to an exit code
//! through [`crate::exit`].

use clap::{Parser, Subcommand};

use crate::cmd_check::CheckArgs;
use crate::cmd_corpus::{CoverageArgs, LintArgs, ListArgs, ReproArgs, ShowArgs};
use crate::cmd_engine;
use crate::cmd_exec::ExecArgs;
use crate::cmd_matrix::MatrixArgs;
use crate::cmd_mcp::McpArgs;
use crate::corpus_source::ExportArgs;

/// patchspec: a reference engine and a conformance runner for agent file-edit tools.
#[derive(Debug, Parser)]
#[command(name = "patchspec", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the corpus against an executor (default: the built-in reference engine) as a CI gate.
    Check(Box<CheckArgs>),
    /// Be the reference executor: answer TOOL_CALLs with the engine (oneshot; `--session` for the session transport; `--connect URL` as a WebSocket plugin).
    Exec(ExecArgs),
    /// List the selected cases.
    List(ListArgs),
    /// Print one case readably.
    Show(ShowArgs),
    /// Write a case's workspace and exact request to a directory, and print the command that reproduces it.
    Repro(ReproArgs),
    /// Check the corpus: schema, ids, spec references, summaries, and every case against the reference engine.
    Lint(LintArgs),
    /// Generate tool calls, run each through the reference engine and an executor, and shrink
    /// every disagreement to a case (`--out DIR`); the executor after `--` (session transport by default).
    Fuzz(Box<crate::cmd_fuzz::FuzzArgs>),
    /// Run the corpus against several implementations (the reference engine always one column)
    /// and write matrix.json, matrix.html and badges to --out.
    Matrix(Box<MatrixArgs>),
    /// Every clause of docs/spec-clauses.md with the cases that pin it; exit 1 when a clause has none.
    Coverage(CoverageArgs),
    /// Apply a patch envelope to a directory (the engine).
    Apply(cmd_engine::ApplyArgs),
    /// Run one tool call and print its result document (the engine).
    Call(cmd_engine::CallArgs),
    /// Roll back a commit interrupted by a crash, remove orphaned temp files, and say what was done (exit 0: the workspace is consistent).
    Recover(cmd_engine::RecoverArgs),
    /// List what the workspace trash (.patchspec/trash) holds: deleted and moved-away files, per commit.
    Trash(cmd_engine::TrashArgs),
    /// The corpus compiled into this binary (`corpus export DIR`).
    #[command(subcommand)]
    Corpus(CorpusCommand),
    /// Print the tool catalog (descriptions, sides, JSON Schemas of params and results) as JSON, an MCP tools/list result, or OpenAI or Anthropic tool definitions; or write the schemas to a directory.
    Catalog(crate::cmd_catalog::CatalogArgs),
    /// Serve the engine's tools on a workspace as a Model Context Protocol server (stdio; Streamable HTTP with --listen).
    Mcp(McpArgs),
}

/// `patchspec corpus …`.
#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Write the corpus compiled into this binary (cases, VERSION, CHANGELOG.md, schema/) to DIR, for tools in other languages.
    Export(ExportArgs),
}

/// Parse the process arguments, run, and return the exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    // Rust ignores SIGPIPE: a closed stdout is an error our writers absorb
    // (see crate::output), never a panic.
    let result = match &cli.command {
        Command::Check(a) => crate::cmd_check::check(a),
        Command::Exec(a) => crate::cmd_exec::exec(a),
        Command::List(a) => crate::cmd_corpus::list(a),
        Command::Show(a) => crate::cmd_corpus::show(a),
        Command::Repro(a) => crate::cmd_corpus::repro(a),
        Command::Lint(a) => crate::cmd_corpus::lint(a),
        Command::Coverage(a) => crate::cmd_corpus::coverage(a),
        Command::Matrix(a) => crate::cmd_matrix::matrix(a),
        Command::Fuzz(a) => crate::cmd_fuzz::fuzz_command(a),
        Command::Apply(a) => Ok(cmd_engine::apply(a)),
        Command::Call(a) => Ok(cmd_engine::call(a)),
        Command::Corpus(CorpusCommand::Export(a)) => crate::corpus_source::export(a),
        Command::Recover(a) => Ok(cmd_engine::recover(a)),
        Command::Trash(a) => Ok(cmd_engine::trash(a)),
        Command::Catalog(a) => Ok(crate::cmd_catalog::catalog(a)),
        Command::Mcp(a) => crate::cmd_mcp::mcp(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Quietly: stderr may be a pipe its reader closed (`2>&1 | head -1`).
            crate::output::eprintln_quietly(format_args!("error: {e}"));
            e.exit_code()
        }
    }
}
