//! patchspec-conformance: the case model, the conformance runner, its
//! reports, and the `patchspec` command line.
//!
//! The runner checks *any* executor (any language) against the corpus of
//! JSON spec cases, as a CI gate. The pipeline, module by module:
//!
//! - [`case`]: load and validate case files (the only serde types for cases);
//! - [`corpus_source`], [`corpus_walk`], [`corpus_embedded`]: which corpus a
//!   command uses (a directory or the copy compiled into the binary),
//!   `corpus export`;
//! - [`corpus_lint`], [`coverage`]: the corpus's own checks (`lint`) and
//!   which cases and tests pin each spec clause (`coverage`);
//! - [`pattern`]: the `expect.result` pattern language; [`members`]: the
//!   documented members of each tool's results (from the catalog's result
//!   schemas), for member coverage and exact mode;
//! - [`workspace`]: per-case temp workspace, sentinel, snapshots, tree diffs;
//! - [`protocol`]: the wire messages (TOOL_CALL, TOOL_RESULT, HELLO, BYE);
//! - [`transport`]: in-process, oneshot, session and websocket executors,
//!   started in one place ([`transport::launch`]) for `check`, `matrix` and `fuzz`;
//! - [`select`], [`run`], [`outcome`], [`baseline`]: selection and sharding,
//!   the scheduler that emits [`event`]s, outcomes, known failures;
//! - [`setup`]: the run setup `check`, `matrix` and `fuzz` share (their
//!   common options and the checks before the first case);
//! - [`report`]: human, JSON lines, JUnit, Markdown — event consumers only;
//!   [`spec_links`]: a case's clauses as the docs sections that explain them;
//! - [`judge`]: the judge modes (`full`, `outcome`);
//! - [`fuzz`]: `patchspec fuzz`: generated calls judged against the
//!   reference engine, disagreements shrunk into cases;
//! - [`matrix`]: several implementations side by side (`patchspec matrix`):
//!   JSON, a self-contained HTML page, badges, Markdown;
//! - [`exit`], [`error`]: the exit-code table and the library error;
//! - [`output`]: stdout and stderr that go quiet on a broken pipe;
//! - [`catalog`]: the engine's tool catalog as MCP, OpenAI and Anthropic
//!   tool definitions and as schema files (`patchspec catalog`);
//! - [`cli`] and the `cmd_*` modules: the command line (`main.rs` only calls
//!   [`cli::main`]; each `cmd_*` turns its arguments into library calls); [`diagnosis_text`]: a refusal's diagnosis as text for
//!   people, as `patchspec apply` prints it.
//!
//! Beside the library, `src/bin/` holds two purpose-built executors for the
//! runner's own tests, not shipped: `patchspec-test-executor` (oneshot and
//! session) and `patchspec-test-plugin` (WebSocket), each misbehaving on
//! request so the tests can prove the runner reports it.
//!
//! The modules form layers with no cycle: ARCHITECTURE.md lists them.
//!
//! What it leaves out: the tools themselves (`patchspec-engine`). Unix only
//! (process groups).
#![deny(missing_docs)]

pub mod baseline;
pub mod case;
pub mod catalog;
pub mod cli;
pub mod cmd_catalog;
pub mod cmd_check;
pub mod cmd_corpus;
pub mod cmd_engine;
pub mod cmd_exec;
pub mod cmd_fuzz;
pub mod cmd_matrix;
pub mod cmd_mcp;
pub mod corpus_embedded;
pub mod corpus_lint;
pub mod corpus_source;
pub mod corpus_walk;
pub mod coverage;
pub mod diagnosis_text;
pub mod engine_call;
pub mod engine_store;
pub mod error;
pub mod event;
pub mod exit;
pub mod fuzz;
pub mod judge;
pub mod logging;
pub mod matrix;
pub mod mcp;
pub mod members;
pub mod outcome;
pub mod output;
pub mod pattern;
pub mod protocol;
pub mod rel_path;
pub mod report;
pub mod run;
pub mod select;
pub mod setup;
pub mod spec_links;
pub mod steps;
pub mod strict_schema;
pub mod transport;
pub mod workspace;
