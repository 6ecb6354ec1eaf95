//! `patchspec mcp`: the reference engine as a Model Context Protocol server.
//!
//! Main type: [`EngineServer`], an rmcp `ServerHandler` that lists the
//! catalog's tools ([`patchspec_engine::catalog`]) and answers `tools/call`
//! through [`crate::engine_call::run_engine`], the engine entry
//! `patchspec exec` and the in-process transport use, so the MCP server and
//! the conformance runner's reference cannot drift apart. [`serve_stdio`]
//! and [`serve_http`] run it over the two MCP transports (newline-framed
//! JSON-RPC on stdin/stdout; Streamable HTTP on `/mcp`).
//!
//! What a call returns: the tool's result document as `structuredContent`
//! and, serialised, as the last text block. A call the engine refuses (its
//! result document says `success: false`) has `isError: true` and a first
//! text block with the engine's one-line reason and, for a refused edit, its
//! diagnosis as indented text; the engine's commits are all or nothing, so a
//! refusal changes nothing. A tool name the server does not expose, or a
//! request that is not a valid `tools/call`, is a JSON-RPC error (-32602);
//! params the engine cannot read are a tool error in the engine's own
//! vocabulary (`invalid_params`), like over every other transport.
//!
//! Session state that the executor protocol carries beside a call
//! (ActiveFiles, `session.limits`) travels in the request's `_meta` under
//! [`SESSION_META_KEY`]; the initialize result's `_meta` under
//! [`EXECUTOR_META_KEY`] declares the engine's private paths. Both are
//! optional extensions: a client that sends neither gets the defaults.
//!
//! Cost: one call is one engine call (each tool's own bound, see its module
//! doc) on a blocking thread, plus one serialisation of its result document;
//! `tools/list` serialises the catalog entries, built on the first list. A client that
//! goes away mid-call does not stop the engine call: it finishes (or its
//! commit does not happen), never half-writes, and the process exits once no
//! call is running.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use patchspec_engine::catalog::{self, ToolDefinition};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, InitializeResult, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use crate::catalog::{render, Format};
use crate::diagnosis_text::human_diagnosis;
use crate::engine_call::{run_engine, PRIVATE_PATHS};
use crate::error::Error;
use crate::protocol::SessionMsg;

pub mod framing;
pub mod http;
pub mod stdio;

pub use http::{serve_http, HttpOptions};
pub use stdio::serve_stdio;

/// The `_meta` key of a `tools/call` request that carries the executor
/// protocol's session state (`{"activeFiles": {...}, "limits": {...}}`, the
/// `session` object of docs/protocol.md).
pub const SESSION_META_KEY: &str = "dev.patchspec/session";

/// The `_meta` key of the initialize result that declares what the
/// executor protocol's `HELLO` would (`{"privatePaths": [...],
/// "unsupportedTags": [...]}`); `check --transport mcp` reads it.
pub const EXECUTOR_META_KEY: &str = "dev.patchspec/executor";

/// The `_meta` key of a `tools/call` result that says how long the engine
/// itself took, in microseconds (informational, like a `TOOL_RESULT`'s
/// `executionTime`): what MCP adds is the round trip minus this.
pub const ENGINE_MICROS_META_KEY: &str = "dev.patchspec/engineMicros";

/// What `patchspec mcp` exposes, and where.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The workspace every path is relative to.
    pub root: PathBuf,
    /// Only these tools (by wire or model name); `None`: every tool of the catalog.
    pub tools: Option<Vec<String>>,
    /// Only the tools that never write.
    pub read_only: bool,
}

/// The names of the tools `options` exposes, in catalog order. A name in
/// `--tools` that the engine does not have is an error that names it.
///
/// Read from the registry the catalog is built from, not from
/// [`catalog::catalog`]: a server started for one call (as the runner's
/// mcp transport does, once per case) need not generate eight tools' JSON
/// Schemas it will never list; [`EngineServer`] builds the catalog entries
/// on the first `tools/list`.
pub fn exposed_tools(options: &ServerOptions) -> Result<Vec<&'static str>, String> {
    let registry = patchspec_engine::REGISTRY;
    // A name may be given as the wire name or the model name
    // (`workspace_read_file`), as `patchspec catalog --tools` takes it.
    let wanted: Option<Vec<&'static str>> = match &options.tools {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|name| {
                    crate::catalog::wire_name(name).ok_or_else(|| {
                        let known: Vec<&str> = registry.iter().map(|t| t.name).collect();
                        format!(
                            "--tools: unknown tool {name:?} (the catalog has: {})",
                            known.join(", ")
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(registry
        .iter()
        .filter(|t| wanted.as_ref().is_none_or(|names| names.contains(&t.name)))
        .filter(|t| !(options.read_only && t.writes))
        .map(|t| t.name)
        .collect())
}

/// The engine as an MCP server on one workspace.
#[derive(Clone)]
pub struct EngineServer {
    root: Arc<Path>,
    names: Arc<[&'static str]>,
    /// The catalog entries of `names` as MCP tools, built on first use.
    tools: Arc<OnceLock<Result<Vec<Tool>, String>>>,
}

impl EngineServer {
    /// A server exposing the tools `names` (wire names the engine has) on `root`.
    pub fn new(root: &Path, names: &[&'static str]) -> EngineServer {
        EngineServer {
            root: Arc::from(root),
            names: names.into(),
            tools: Arc::default(),
        }
    }

    /// The server's `tools/list` entries: exactly what `patchspec catalog
    /// --format mcp` prints for these tools ([`crate::catalog::render`], the
    /// one MCP rendering of the catalog), read into rmcp's type.
    pub fn tools(&self) -> Result<&[Tool], ErrorData> {
        self.tools
            .get_or_init(|| {
                let definitions: Vec<ToolDefinition> = self
                    .names
                    .iter()
                    .filter_map(|name| catalog::definition(name))
                    .collect();
                let mut rendered = render(Format::Mcp, &definitions);
                serde_json::from_value(rendered["tools"].take())
                    .map_err(|e| format!("the catalog's MCP rendering is not a tool list: {e}"))
            })
            .as_deref()
            .map_err(|e| ErrorData::internal_error(e.clone(), None))
    }

    fn exposes(&self, name: &str) -> bool {
        self.names.contains(&name)
    }
}

/// The session state a request's `_meta` carries, or the default.
fn session_from_meta(meta: &JsonObject) -> Result<SessionMsg, ErrorData> {
    match meta.get(SESSION_META_KEY) {
        None => Ok(SessionMsg::default()),
        Some(value) => serde_json::from_value(value.clone()).map_err(|e| {
            ErrorData::invalid_params(format!("_meta[{SESSION_META_KEY:?}]: {e}"), None)
        }),
    }
}

/// The MCP result of one engine outcome.
pub fn call_result(
    success: bool,
    document: Value,
    error: Option<String>,
) -> Result<CallToolResult, ErrorData> {
    let text = serde_json::to_string(&document)
        .map_err(|e| ErrorData::internal_error(format!("result document: {e}"), None))?;
    let mut result = if success {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        let mut reason = error.unwrap_or_else(|| "the tool call failed".into());
        if let Some(diagnosis) = document
            .pointer("/error/details/diagnosis")
            .and_then(human_diagnosis)
        {
            reason.push_str("\ndiagnosis:\n");
            reason.push_str(diagnosis.trim_end());
        }
        CallToolResult::error(vec![ContentBlock::text(reason), ContentBlock::text(text)])
    };
    result.structured_content = Some(document);
    Ok(result)
}

impl ServerHandler for EngineServer {
    fn get_info(&self) -> InitializeResult {
        let mut meta = MetaObject::new();
        meta.insert(
            EXECUTOR_META_KEY.into(),
            json!({ "privatePaths": PRIVATE_PATHS }),
        );
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(
                "File-edit tools on one workspace, served by the patchspec reference \
                     engine. Paths are relative to the workspace. A refused edit \
                     (isError: true) changed nothing: its text says why; re-read the file \
                     and retry.",
            );
        info.server_info = Implementation::new("patchspec", env!("CARGO_PKG_VERSION"));
        info.meta = Some(meta);
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()?.to_vec()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // rmcp hands over here a request whose params did not parse as its
        // method's: for tools/call that is bad params, not an unknown method.
        if request.method == "tools/call" {
            return Err(ErrorData::invalid_params(
                "tools/call params: `name` must be a string and `arguments`, when given, an object",
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("unknown method {:?}", request.method),
            None,
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().ok()?.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.exposes(&request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        }
        let session = session_from_meta(&context.meta.0 .0)?;
        let params = Value::Object(request.arguments.unwrap_or_default());
        let root = self.root.clone();
        let name = request.name.into_owned();
        // The engine is synchronous and may fsync: a blocking thread, which
        // runs to its end even when the client goes away (never a half
        // commit), and which the runtime waits for before the process exits.
        let outcome = tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            run_engine(&name, &params, &root, &session, None).map(|o| (o, started.elapsed()))
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the engine call failed: {e}"), None))?
        .map_err(|panic| ErrorData::internal_error(panic, None))?;
        let (outcome, took) = outcome;
        let mut result = call_result(outcome.success, outcome.result, outcome.error)?;
        let mut meta = MetaObject::new();
        meta.insert(
            ENGINE_MICROS_META_KEY.into(),
            json!(u64::try_from(took.as_micros()).unwrap_or(u64::MAX)),
        );
        result.meta = Some(meta);
        Ok(CallToolResponse::from(result))
    }
}

/// A runtime for the server. One thread drives the I/O (a server answers
/// one client); the engine calls run on its blocking pool, in parallel.
/// Cheaper to start than a multi-thread runtime, which matters to a
/// server started per call.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start the async runtime: {e}")))
}

/// Is `addr` one only this machine can reach?
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(tools: Option<&[&str]>, read_only: bool) -> ServerOptions {
        ServerOptions {
            root: PathBuf::from("/nowhere"),
            tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
            read_only,
        }
    }

    #[test]
    fn exposed_tools_follow_the_catalog_subset_and_read_only() {
        let all: Vec<&str> = catalog::catalog().iter().map(|t| t.name).collect();
        assert_eq!(exposed_tools(&options(None, false)).unwrap(), all);
        let readers: Vec<&str> = catalog::catalog()
            .iter()
            .filter(|t| !t.writes)
            .map(|t| t.name)
            .collect();
        assert!(!readers.is_empty() && readers.len() < all.len());
        assert_eq!(exposed_tools(&options(None, true)).unwrap(), readers);
        // Catalog order, whatever the order asked.
        let subset = exposed_tools(&options(Some(&["call_chain", "apply_patch"]), false)).unwrap();
        assert_eq!(subset, ["apply_patch", "call_chain"]);
        let both = exposed_tools(&options(Some(&["call_chain", "apply_patch"]), true)).unwrap();
        assert_eq!(both, ["call_chain"]);
        // The model name of a tool names it too.
        let by_model = exposed_tools(&options(Some(&["workspace_read_file"]), false)).unwrap();
        assert_eq!(by_model, ["workspace.read_file"]);
        let err = exposed_tools(&options(Some(&["apply_patch", "rm"]), false)).unwrap_err();
        assert!(err.contains("unknown tool \"rm\""), "{err}");
    }

    #[test]
    fn the_listed_tools_are_the_catalog_entries() {
        let server = EngineServer::new(Path::new("/nowhere"), &["workspace.read_file"]);
        let tools = server.tools().unwrap();
        assert_eq!(tools.len(), 1);
        let def = catalog::definition("workspace.read_file").unwrap();
        let listed = serde_json::to_value(&tools[0]).unwrap();
        assert_eq!(listed["name"], "workspace.read_file");
        assert_eq!(listed["description"], def.description.as_str());
        assert_eq!(listed["inputSchema"], def.params_schema);
        assert_eq!(listed["outputSchema"], def.result_schema);
        assert_eq!(listed["annotations"]["readOnlyHint"], true);
        // The one MCP rendering of the catalog, field for field.
        let rendered = render(Format::Mcp, &[def]);
        assert_eq!(listed, rendered["tools"][0]);
        assert!(server.exposes("workspace.read_file") && !server.exposes("apply_patch"));
    }

    #[test]
    fn a_result_carries_the_document_structured_and_as_text() {
        let doc = json!({"success": true, "data": {"changedFiles": []}});
        let result = call_result(true, doc.clone(), None).unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(doc.clone()));
        assert_eq!(result.content.len(), 1);
        let text = &result.content[0].as_text().unwrap().text;
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), doc);
    }

    #[test]
    fn a_refusal_leads_with_its_reason_and_diagnosis() {
        let doc = json!({"success": false, "error": {"kind": "patch_apply_error",
            "message": "a.txt: hunk 0: context not found",
            "details": {"diagnosis": {"cause": "no_similar_region", "causes": ["no_similar_region"]}}}});
        let result = call_result(
            false,
            doc.clone(),
            Some("a.txt: hunk 0: context not found".into()),
        )
        .unwrap();
        assert_eq!(result.is_error, Some(true));
        let reason = &result.content[0].as_text().unwrap().text;
        assert!(
            reason.starts_with(
                "a.txt: hunk 0: context not found\ndiagnosis:\n  cause: no_similar_region"
            ),
            "{reason}"
        );
        let last = &result.content[1].as_text().unwrap().text;
        assert_eq!(serde_json::from_str::<Value>(last).unwrap(), doc);
        // No message and no diagnosis: still a reason.
        let bare = call_result(false, json!({"success": false}), None).unwrap();
        assert_eq!(
            bare.content[0].as_text().unwrap().text,
            "the tool call failed"
        );
    }

    #[test]
    fn session_state_comes_from_meta_or_defaults() {
        let mut meta = JsonObject::new();
        assert_eq!(session_from_meta(&meta).unwrap(), SessionMsg::default());
        meta.insert(
            SESSION_META_KEY.into(),
            json!({"activeFiles": {"a.txt": "x"}, "limits": {"createFileMaxBytes": 4}}),
        );
        let session = session_from_meta(&meta).unwrap();
        assert_eq!(session.active_files["a.txt"], "x");
        assert_eq!(session.limits.create_file_max_bytes, Some(4));
        meta.insert(SESSION_META_KEY.into(), json!({"activeFiles": 3}));
        assert!(session_from_meta(&meta).is_err());
    }
}
