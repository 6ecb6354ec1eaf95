//! The tools, one module each: parse the tool's JSON params, run it on the
//! shared layers (path guard, line views, committer), and build the result
//! document its own spec defines.
//!
//! [`REGISTRY`] is the one list of tools: dispatch finds a tool's runner
//! there, [`SUPPORTED_TOOLS`] (what an executor announces in its HELLO) is
//! its names, and [`writes`] its write flags.
//!
//! [`tul`] holds the TUL tools and `apply_patch`. The IDE-plugin tools of
//! websocket-tool-protocol.md (`read_file`, `grep_file`, `apply_change`,
//! `call_chain`), compiled only with the `ide` cargo feature (on by default;
//! without it the engine builds without tree-sitter, `ignore` and `regex`),
//! live in `ide`, with their params
//! checks, failure document, workspace walk and one runner
//! (`ide::run_with`, generic over `ide::IdeTool`).
//!
//! Every tool's runner goes through [`guarded`], so a panic (a bug: the
//! engine never panics on input) becomes the tool's own internal-error
//! result instead of taking the executor down; and every tool opens its
//! workspace through an [`OpenFs`] (in production [`open_real`]), the seam
//! through which tests hand it a `crate::fs::FaultFs`.
//!
//! # Adding a tool
//!
//! 1. Write its module here: params check, the work on `&dyn Fs` (through
//!    `path_guard`, `text`, `commit`: never `std::fs`), its result document,
//!    and a runner `fn(&ToolCall, &OpenFs) -> ToolOutcome` that wraps the
//!    work in [`guarded`]. An IDE-protocol tool implements `ide::IdeTool`
//!    instead and uses `ide::run_with` (and is `#[cfg(feature = "ide")]`).
//! 2. Add one [`ToolEntry`] to [`REGISTRY`] (wire name, summary, whether it
//!    writes, runner, its catalog description in
//!    `src/catalog/descriptions/`, its side, and its params and result types
//!    for the schemas: the params type the parser reads into, the result
//!    type the tool serializes). Dispatch, `SUPPORTED_TOOLS`, the writer
//!    lock, the HELLO of the reference executors and the tool catalog
//!    ([`crate::catalog`], `patchspec catalog`) follow from it.
//! 3. State the tool's cost bound in its module doc and hold it with a test
//!    that counts steps.
//! 4. Add its case to `engine/tests/tool_panics.rs` (the test fails until
//!    every registered tool has one), corpus cases under `corpus/`, and its
//!    page under `docs/`.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde_json::Value;

use crate::call::{ToolCall, ToolOutcome};
use crate::fs::Fs;
use crate::schema::schema_of;

#[cfg(feature = "ide")]
pub mod ide;
pub mod tul;
pub mod wire;

#[cfg(feature = "ide")]
use ide::{apply_change, call_chain, grep_file};
use tul::{apply_patch, create_file, get_patch_change, read_file, write_patch};


/// How a tool opens the workspace at a root: [`open_real`] in production.
pub type OpenFs<'o> = dyn Fn(&Path) -> io::Result<Box<dyn Fs + 'o>> + 'o;

/// The real workspace, to read: [`RealFs`](crate::fs::RealFs) on the root, after recovering
/// an interrupted commit of a dead writer ([`crate::workspace::open_for_reading`]).
pub fn open_real(root: &Path) -> io::Result<Box<dyn Fs>> {
    Ok(Box::new(crate::workspace::open_for_reading(root)?))
}

/// The real workspace, to write: the writer lock held until the returned
/// handle is dropped, and any interrupted commit rolled back
/// ([`crate::workspace::open_for_writing`]).
pub fn open_for_writing(root: &Path) -> io::Result<Box<dyn Fs>> {
    Ok(Box::new(crate::workspace::open_for_writing(root)?))
}

/// A tool's hooks in its [`REGISTRY`] entry, so that neither the events
/// module nor the store asks which tool ran: its own events, beside the
/// common ones of every call ([`crate::events`]), and how the patch store
/// files its calls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ToolHooks {
    /// After `Tool.Call.Received`: what the params announce.
    pub received: fn(tool: &str, call_id: &str, params: &Value),
    /// Before `Tool.Call.Executed` or `Tool.Call.Error`: what the outcome
    /// tells (`code`: its error code, or `""`).
    pub finished: fn(
        tool: &str,
        call_id: &str,
        params: &Value,
        outcome: &ToolOutcome,
        code: &str,
        duration_ms: f64,
    ),
    /// Before `Store.Recorded`: what the store now holds of the result.
    pub stored: fn(tool: &str, call_id: &str, result: &Value, duration_ms: f64),
    /// What the store files of a call of a writing tool, from its result
    /// document (without the workspace's file content): `None` to keep the
    /// params and the document as they are; for a call whose request the
    /// store files in tables of its own, the typed record
    /// ([`crate::store::StoredBatch`]) and what the call row keeps beside it.
    pub filed: fn(call_id: &str, kept: &Value) -> Option<(crate::store::StoredBatch, Value)>,
}

/// The hooks of a tool without events of its own, whose calls the store
/// keeps as they came.
pub(crate) const NO_HOOKS: ToolHooks = ToolHooks {
    received: |_, _, _| {},
    finished: |_, _, _, _, _, _| {},
    stored: |_, _, _, _| {},
    filed: |_, _| None,
};

/// How the registry runs a tool: the call, and how to open its workspace
/// ([`open_real`] or [`open_for_writing`] in production, a
/// `crate::fs::FaultFs` in tests).
pub type Runner = fn(&ToolCall<'_>, &OpenFs<'_>) -> ToolOutcome;

/// Where a tool executes, per its spec: on the client (the agent's machine,
/// the IDE plugin, the harness that owns the workspace) or on the server
/// (the backend that answers from its own store).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Executed where the workspace is: the client, IDE plugin or harness.
    Client,
    /// Executed by the backend.
    Server,
}

impl Side {
    /// The wire name: `client` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// One tool of [`REGISTRY`].
#[derive(Clone, Copy, Debug)]
pub struct ToolEntry {
    /// The wire name a call carries (`apply_patch`, `workspace.read_file`, ...).
    pub name: &'static str,
    /// What the tool does, in one line.
    pub summary: &'static str,
    /// A short human-readable name (MCP's `title`: what a client's UI shows).
    pub title: &'static str,
    /// True when a second call with the same arguments changes nothing more
    /// (MCP's `idempotentHint`): every reading tool, and
    /// `workspace_create_file` (the same content again, or `file_exists`).
    /// An edit is not: applied again, it may apply again or be refused.
    pub idempotent: bool,
    /// True when the tool may write: dispatch opens its workspace with the
    /// writer lock (`open_for_writing`).
    pub writes: bool,
    /// Runs one call; a panic inside becomes the tool's internal error.
    pub run: Runner,
    /// Its own events, and how the store files its calls.
    pub(crate) hooks: ToolHooks,
    /// The catalog description, written for a model: what the tool does,
    /// when to use it, its rules and its errors
    /// (`src/catalog/descriptions/<tool>.md`).
    pub description: &'static str,
    /// Where the tool executes, per its spec.
    pub side: Side,
    /// The JSON Schema of the params, from the type the parser reads them into.
    pub params_schema: fn() -> Schema,
    /// The JSON Schema of the result document, from the type the tool serializes.
    pub result_schema: fn() -> Schema,
}

macro_rules! description {
    ($file:literal) => {
        include_str!(concat!("../catalog/descriptions/", $file, ".md"))
    };
}

/// Every tool this engine implements, in the order executors announce them.
/// The four IDE tools are here only with the `ide` cargo feature (on by
/// default).
pub const REGISTRY: &[ToolEntry] = &[
    ToolEntry {
        name: "apply_patch",
        title: "Apply a patch",
        idempotent: false,
        summary: "apply an apply_patch envelope (add, delete, update, move files) atomically",
        writes: true,
        run: apply_patch::run_with,
        hooks: NO_HOOKS,
        description: description!("apply_patch"),
        side: Side::Client,
        params_schema: schema_of::<apply_patch::ApplyPatchParams>,
        result_schema: schema_of::<apply_patch::ApplyPatchDocument<'static>>,
    },
    ToolEntry {
        name: "workspace_write_patch",
        title: "Write line-numbered changes",
        idempotent: false,
        summary: "apply a batch of line-numbered changes, checked against each file's SHA-256",
        writes: true,
        run: write_patch::run_with,
        hooks: write_patch::HOOKS,
        description: description!("workspace_write_patch"),
        side: Side::Client,
        params_schema: schema_of::<write_patch::WritePatchParams>,
        result_schema: schema_of::<write_patch::WritePatchDocument>,
    },
    ToolEntry {
        name: "workspace_create_file",
        title: "Create a file",
        idempotent: true,
        summary: "create a text file (or replace one when overwrite is true), atomically",
        writes: true,
        run: create_file::run_with,
        hooks: create_file::HOOKS,
        description: description!("workspace_create_file"),
        side: Side::Client,
        params_schema: schema_of::<create_file::CreateFileParams<'static>>,
        result_schema: schema_of::<create_file::CreateFileResult>,
    },
    ToolEntry {
        name: "workspace.read_file",
        title: "Read a workspace file",
        idempotent: true,
        summary: "read a file by its DocPath, with ActiveFiles precedence",
        writes: false,
        run: read_file::run_with,
        hooks: NO_HOOKS,
        description: description!("workspace.read_file"),
        side: Side::Server,
        params_schema: schema_of::<read_file::ReadFileArgs>,
        result_schema: schema_of::<read_file::ReadFileDocument<'static>>,
    },
    ToolEntry {
        name: "get_patch_change",
        title: "Get a stored patch or change",
        idempotent: true,
        summary: "a stored workspace_write_patch batch, file patch or change by ID, with its unified diff",
        writes: false,
        run: get_patch_change::run_with,
        hooks: NO_HOOKS,
        description: description!("get_patch_change"),
        side: Side::Server,
        params_schema: schema_of::<get_patch_change::GetPatchChangeParams>,
        result_schema: schema_of::<get_patch_change::GetPatchChangeDocument>,
    },
    #[cfg(feature = "ide")]
    ToolEntry {
        name: "read_file",
        title: "Read a file (IDE)",
        idempotent: true,
        summary: "IDE: a file's text, whole or a window of lines",
        writes: false,
        run: ide::run_with::<ide::read_file::IdeReadFile>,
        hooks: NO_HOOKS,
        description: description!("read_file"),
        side: Side::Client,
        params_schema: schema_of::<ide::read_file::ReadFileParams>,
        result_schema: schema_of::<ide::IdeDocument<'static, ide::read_file::ReadBody>>,
    },
    #[cfg(feature = "ide")]
    ToolEntry {
        name: "grep_file",
        title: "Search a file (IDE)",
        idempotent: true,
        summary:
            "IDE: the lines of a file, a directory or the workspace matching a literal or regex",
        writes: false,
        run: ide::run_with::<grep_file::GrepFile>,
        hooks: NO_HOOKS,
        description: description!("grep_file"),
        side: Side::Client,
        params_schema: schema_of::<grep_file::GrepFileParams>,
        result_schema: schema_of::<ide::IdeDocument<'static, grep_file::GrepBody>>,
    },
    #[cfg(feature = "ide")]
    ToolEntry {
        name: "apply_change",
        title: "Apply a search/replace edit (IDE)",
        idempotent: false,
        summary: "IDE: one SEARCH/REPLACE edit of one file, or the creation of a file",
        writes: true,
        run: ide::run_with::<apply_change::ApplyChange>,
        hooks: NO_HOOKS,
        description: description!("apply_change"),
        side: Side::Client,
        params_schema: schema_of::<apply_change::ApplyChangeParams>,
        result_schema: schema_of::<ide::IdeDocument<'static, apply_change::ChangeBody>>,
    },
    #[cfg(feature = "ide")]
    ToolEntry {
        name: "call_chain",
        title: "Java call chain (IDE)",
        idempotent: true,
        summary: "IDE: who calls a Java method and what it calls, to a given depth",
        writes: false,
        run: ide::run_with::<call_chain::CallChain>,
        hooks: NO_HOOKS,
        description: description!("call_chain"),
        side: Side::Client,
        params_schema: schema_of::<call_chain::CallChainParams>,
        result_schema: schema_of::<ide::IdeDocument<'static, call_chain::ChainBody>>,
    },
];

/// The tools this engine implements, by wire name: the names of
/// [`REGISTRY`], in its order.
pub const SUPPORTED_TOOLS: &[&str] = &REGISTERED_NAMES;

const REGISTERED_NAMES: [&str; REGISTRY.len()] = {
    let mut names = [""; REGISTRY.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = REGISTRY[i].name;
        i += 1;
    }
    names
};

/// The registered tool called `name`, if any.
pub fn find(name: &str) -> Option<&'static ToolEntry> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// True for the tools that may write (they take the writer lock).
pub fn writes(tool_name: &str) -> bool {
    find(tool_name).is_some_and(|t| t.writes)
}

/// Run a tool's body; if it panics, return `on_panic()` (the tool's
/// internal-error result) instead. The one place a tool catches a panic.
pub fn guarded(
    body: impl FnOnce() -> ToolOutcome,
    on_panic: impl FnOnce() -> ToolOutcome,
) -> ToolOutcome {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| on_panic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_found() {
        for (i, tool) in REGISTRY.iter().enumerate() {
            assert!(
                REGISTRY[..i].iter().all(|t| t.name != tool.name),
                "{} registered twice",
                tool.name
            );
            assert_eq!(find(tool.name).map(|t| t.name), Some(tool.name));
            assert!(!tool.summary.is_empty(), "{}", tool.name);
        }
        assert!(find("no_such_tool").is_none());
        assert_eq!(SUPPORTED_TOOLS.len(), REGISTRY.len());
    }

    #[test]
    fn only_the_editing_tools_take_the_writer_lock() {
        let writing: Vec<&str> = REGISTRY
            .iter()
            .filter(|t| writes(t.name))
            .map(|t| t.name)
            .collect();
        let mut expected = vec![
            "apply_patch",
            "workspace_write_patch",
            "workspace_create_file",
        ];
        if cfg!(feature = "ide") {
            expected.push("apply_change");
        }
        assert_eq!(writing, expected);
        assert!(!writes("no_such_tool"));
    }
}
