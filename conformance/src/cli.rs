//! The command line: clap definitions and wiring only. Each subcommand's
//! logic is in its `cmd_*` module; [`main`] maps the result to an exit code
//! through [`crate::exit`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::cmd_engine;

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

/// `patchspec mcp`.
#[derive(Clone, Debug, Args)]
pub struct McpArgs {
    /// The workspace the tools work on (every path is relative to it).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. A loopback address
    /// (`127.0.0.1:PORT`, `[::1]:PORT`, `localhost:PORT`) unless you name another one:
    /// anyone who can reach ADDR can edit the workspace.
    #[arg(long, value_name = "ADDR", value_parser = crate::cmd_mcp::parse_listen)]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: also accept requests whose `Origin` is ORIGIN (`scheme://host[:port]`,
    /// `:*` for any port; repeatable). Loopback origins and requests without one are always accepted.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// With --listen: the most live sessions; an `initialize` past it gets HTTP 503.
    #[arg(long, value_name = "N", default_value_t = crate::mcp::http::DEFAULT_MAX_SESSIONS,
          value_parser = clap::value_parser!(usize))]
    pub max_sessions: usize,
    /// With --listen: a session without a message for this long ends (e.g. 300s, 90s).
    #[arg(long, value_name = "DURATION", default_value = "300s")]
    pub session_timeout: String,
    /// Expose only these tools (comma-separated; wire or model names, e.g. workspace.read_file or workspace_read_file).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// Expose only the tools that never write.
    #[arg(long)]
    pub read_only: bool,
    /// The patch store.
    #[command(flatten)]
    pub store: crate::engine_store::StoreArgs,
    /// The events.
    #[command(flatten)]
    pub log: crate::logging::LogArgs,
}

/// `patchspec corpus …`.
#[derive(Debug, Subcommand)]
pub enum CorpusCommand {
    /// Write the corpus compiled into this binary (cases, VERSION, CHANGELOG.md, schema/) to DIR, for tools in other languages.
    Export(ExportArgs),
}

/// `patchspec corpus export`.
#[derive(Clone, Debug, Args)]
pub struct ExportArgs {
    /// The directory to write (created; must be absent or empty).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// The corpus location.
#[derive(Clone, Debug, Default, Args)]
pub struct CorpusArgs {
    /// The corpus directory (default: the nearest `corpus/` at or above the current directory that has a VERSION file and schema/, else the corpus compiled into this binary).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
}

/// Case filters.
#[derive(Clone, Debug, Default, Args)]
pub struct FilterArgs {
    /// Run only cases whose id matches GLOB (`*` within a segment, `**` across); repeatable.
    #[arg(long = "run", value_name = "GLOB")]
    pub run: Vec<String>,
    /// Skip cases whose id matches GLOB; repeatable.
    #[arg(long = "skip", value_name = "GLOB")]
    pub skip: Vec<String>,
    /// Only cases of this tool; repeatable (any of).
    #[arg(long = "tool", value_name = "NAME")]
    pub tool: Vec<String>,
    /// Only cases with this tag; repeatable (any of).
    #[arg(long = "tag", value_name = "TAG")]
    pub tag: Vec<String>,
    /// Only shard I of N (1-based), split by a stable hash of the id, after filtering.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::select::Shard>,
}

/// The transport to an external executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// One process per call.
    Oneshot,
    /// One long-lived process per worker, HELLO handshake, one message per line.
    Session,
    /// The runner is the websocket protocol's backend; the executor is a plugin that connects to it.
    Websocket,
    /// The executor is an MCP server over stdio, started per case (`{root}` in an argument
    /// becomes the case's workspace, also its working directory); each case is a `tools/call`.
    Mcp,
}

/// The report written to stdout (or `--report-file`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Readable (unstable layout).
    Human,
    /// JSON lines (stable).
    Json,
    /// Markdown summary for a CI step summary.
    Markdown,
}

/// How each answer is judged and what a run leaves out: the options
/// `check`, `matrix` and `fuzz` share (one definition, one meaning).
#[derive(Clone, Debug, Args)]
pub struct JudgingArgs {
    /// How long one call may take: seconds, or with a unit (`500ms`, `5s`).
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub timeout: String,
    /// How answers are judged: `full` (the result document and the tree) or `outcome`
    /// (success or failure and the tree, for executors that report no error kinds).
    #[arg(long, value_enum, default_value = "full")]
    pub judge: crate::judge::Judge,
    /// Leave out cases (fuzz: calls) of this tool, e.g. for an executor that declares no
    /// tools; repeatable.
    #[arg(long, value_name = "NAME")]
    pub skip_tool: Vec<String>,
    /// Leave out cases (fuzz: calls) with this tag (fuzz generates `symlink`, `modes`,
    /// `limits`, `active-files`, `crlf`, `bom`, `non-utf8`); repeatable.
    #[arg(long, value_name = "TAG")]
    pub skip_tag: Vec<String>,
    /// An implementation-private path glob left out of tree comparison; repeatable.
    #[arg(long, value_name = "GLOB")]
    pub ignore_path: Vec<String>,
}

/// `patchspec check`.
#[derive(Clone, Debug, Args)]
pub struct CheckArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Transport to the executor given after `--`.
    #[arg(long, value_enum)]
    pub transport: Option<Transport>,
    /// A shell command (`sh -c`) run once before the first case, e.g. a build.
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Parallel workers (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Timeout, judge and what is left out.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Stop starting cases after the first unexpected outcome.
    #[arg(long)]
    pub fail_fast: bool,
    /// Stop starting cases after N unexpected outcomes (N >= 1; cases left unrun fail the run).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_fail: Option<u64>,
    /// Known failures (JSON array of {id, outcome, reason?, issue?}).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Rewrite the baseline from this run (refused on a filtered or sharded run, or when
    /// cases were not run; entries of skipped cases are kept).
    #[arg(long, requires = "baseline")]
    pub update_baseline: bool,
    /// Fail (exit 2) unless the corpus's VERSION is exactly this (an implementation's pin).
    #[arg(long, value_name = "X.Y.Z")]
    pub corpus_version: Option<String>,
    /// Fail (exit 2) unless the corpus's content hash is exactly this (`sha256:<hex>`, as in the reports).
    #[arg(long, value_name = "sha256:HEX")]
    pub corpus_hash: Option<String>,
    /// Accept a run in which every selected case is skipped (by the executor's declaration,
    /// --skip-tool or --skip-tag): exit 0 instead of 2.
    #[arg(long)]
    pub allow_empty: bool,
    /// The most bytes of files an executor may leave in one case's workspace (and, apart,
    /// in the rest of its case directory): bytes, or with `K`, `M`, `G` (powers of 1024).
    /// Past it the case is an error and the runner reads no further.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::cmd_check::parse_size)]
    pub max_case_bytes: u64,
    /// The folder each run's case workspaces are made in (default: $TMPDIR when set, else
    /// /dev/shm when writable, a memory filesystem, else the system temporary folder).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Session transport: how many times a crashed executor is restarted over the run
    /// (websocket: a started plugin that exited).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_restarts: usize,
    /// Websocket: listen on ADDR (default 127.0.0.1:0). Without an executor after `--`,
    /// start nothing and wait for a plugin to connect (one inside an IDE).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Websocket: how long to wait for the plugin to connect, at the start and after a disconnect.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub connect_timeout: String,
    /// Human report: list every case (PASS and SKIP too, not only those that break the gate)
    /// and every id of a group of failures that share a cause.
    #[arg(short, long)]
    pub verbose: bool,
    /// The report on stdout.
    #[arg(long, value_enum, default_value = "human")]
    pub report: ReportFormat,
    /// Write the `--report` output to FILE instead of stdout (the human report then stays on stdout).
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// Also write JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The executor's argv, after `--` (no shell). None: the built-in reference engine, in-process
    /// (websocket: the reference plugin). Websocket: `{url}` in an argument becomes the URL to
    /// connect to, also given as $PATCHSPEC_WS_URL. Mcp: an MCP server started per case, with
    /// `{root}` in an argument (and its working directory) the case's workspace.
    #[arg(last = true, value_name = "EXECUTOR")]
    pub executor: Vec<String>,
}

/// `patchspec matrix`.
#[derive(Clone, Debug, Args)]
pub struct MatrixArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// An implementation to check: NAME=CMD, CMD split into argv like a POSIX shell
    /// splits words ('…', "…", backslash) but never run by one; over --transport; repeatable.
    #[arg(long = "executor", value_name = "NAME=CMD")]
    pub executor: Vec<String>,
    /// The transport to every --executor, as in `check` (websocket: `{url}` in CMD becomes
    /// the URL to connect to, also given as $PATCHSPEC_WS_URL; mcp: `{root}` in CMD becomes the
    /// case's workspace). Sessions and plugins are
    /// restarted up to 3 times; a plugin has 10 s to connect.
    #[arg(long, value_enum, default_value = "oneshot")]
    pub transport: Transport,
    /// The directory to write matrix.json, matrix.html and badges/NAME.json into (created).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write the matrix as Markdown (tables by tool and clause, departures) to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// With `--judge outcome`: also judge every answer in full, without running anything
    /// again, and write that matrix to DIR like --out (and its Markdown as DIR/matrix.md
    /// with --markdown). Not for cases with steps (their step answers are not kept).
    #[arg(long, value_name = "DIR")]
    pub full_out: Option<PathBuf>,
    /// Parallel workers per executor run (default: the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Timeout, judge and what is left out, the same for every column.
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Do not send oneshot executors a HELLO first (nothing declared: every selected case runs).
    #[arg(long)]
    pub no_hello: bool,
    /// The folder each run's case workspaces are made in (default: $TMPDIR when set, else
    /// /dev/shm when writable, a memory filesystem, else the system temporary folder).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

/// `patchspec exec`.
#[derive(Clone, Debug, Args)]
pub struct ExecArgs {
    /// Speak the session transport (HELLO, one message per line, BYE) instead of oneshot.
    #[arg(long)]
    pub session: bool,
    /// Be the reference WebSocket plugin: connect to the backend at URL
    /// (`ws://HOST:PORT/ws/agent/chat?sessionId=…&projectKey=…`) and serve its TOOL_CALLs.
    #[arg(long, value_name = "URL", conflicts_with = "session")]
    pub connect: Option<String>,
    /// The patch store.
    #[command(flatten)]
    pub store: crate::engine_store::StoreArgs,
    /// The events.
    #[command(flatten)]
    pub log: crate::logging::LogArgs,
}

/// `patchspec list`.
#[derive(Clone, Debug, Args)]
pub struct ListArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Filters.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// One JSON object per case (id, tool, tags, summary, spec).
    #[arg(long)]
    pub json: bool,
}

/// `patchspec show`.
#[derive(Clone, Debug, Args)]
pub struct ShowArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// The case id.
    pub id: String,
}

/// `patchspec repro`.
#[derive(Clone, Debug, Args)]
pub struct ReproArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// The case id.
    pub id: String,
    /// The directory to write (must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The executor's argv for the printed command (default: this binary's `exec`).
    #[arg(last = true, value_name = "EXECUTOR")]
    pub executor: Vec<String>,
}

/// `patchspec coverage`.
#[derive(Clone, Debug, Args)]
pub struct CoverageArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Print one JSON object: clauses with their cases, and the gaps;
    /// `members`: each documented result member with the cases pinning it.
    #[arg(long)]
    pub json: bool,
    /// List only the clauses and the documented result members nothing pins.
    #[arg(long)]
    pub gaps: bool,
}

/// `patchspec lint`.
#[derive(Clone, Debug, Args)]
pub struct LintArgs {
    /// Corpus.
    #[command(flatten)]
    pub corpus: CorpusArgs,
    /// Skip running the cases against the reference engine.
    #[arg(long)]
    pub no_run: bool,
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
