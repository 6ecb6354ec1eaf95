//! `patchspec mcp`: the reference engine as a Model Context Protocol server.
//!
//! Main type: [`EngineServer`], an rmcp `ServerHandler` that lists the
//! catalog's tools ([`patchspec_engine::catalog`]) and answers `tools/call`
//! through [`crate::transport::inprocess::run_engine`], the engine entry
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
//! `tools/list` serialises the catalog built once at start. A client that
//! goes away mid-call does not stop the engine call: it finishes (or its
//! commit does not happen), never half-writes, and the process exits once no
//! call is running.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use patchspec_engine::catalog::{self, ToolDefinition};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, InitializeResult, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::diagnosis_text::human_diagnosis;
use crate::error::Error;
use crate::protocol::SessionMsg;
use crate::transport::inprocess::{run_engine, PRIVATE_PATHS};

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
    /// Only these tools (by wire name); `None`: every tool of the catalog.
    pub tools: Option<Vec<String>>,
    /// Only the tools that never write.
    pub read_only: bool,
}

/// The catalog entries `options` exposes, in catalog order. A name in
/// `--tools` that is not in the catalog is an error that names it.
pub fn exposed_tools(options: &ServerOptions) -> Result<Vec<ToolDefinition>, String> {
    let all = catalog::catalog();
    if let Some(names) = &options.tools {
        for name in names {
            if !all.iter().any(|t| t.name == name) {
                let known: Vec<&str> = all.iter().map(|t| t.name).collect();
                return Err(format!(
                    "--tools: unknown tool {name:?} (the catalog has: {})",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(all
        .into_iter()
        .filter(|t| {
            options
                .tools
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == t.name))
        })
        .filter(|t| !(options.read_only && t.writes))
        .collect())
}

/// A JSON Schema as MCP's `inputSchema`/`outputSchema` wants it: an object.
fn schema_object(schema: &Value) -> Arc<JsonObject> {
    Arc::new(match schema {
        Value::Object(map) => map.clone(),
        // The catalog's schemas are objects by construction; a boolean
        // schema would still mean "anything", which an empty object says too.
        _ => JsonObject::new(),
    })
}

/// One catalog entry as an MCP tool.
fn mcp_tool(def: &ToolDefinition) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(!def.writes)
        // A refused edit changes nothing, and an applied one only what it names.
        .destructive(false)
        .open_world(false);
    Tool::new_with_raw(
        def.name,
        Some(Cow::Owned(def.description.clone())),
        schema_object(&def.params_schema),
    )
    .with_raw_output_schema(schema_object(&def.result_schema))
    .with_annotations(annotations)
}

/// The engine as an MCP server on one workspace.
#[derive(Clone)]
pub struct EngineServer {
    root: Arc<Path>,
    tools: Arc<[Tool]>,
}

impl EngineServer {
    /// A server exposing `tools` (catalog entries) on `root`.
    pub fn new(root: &Path, tools: &[ToolDefinition]) -> EngineServer {
        EngineServer {
            root: Arc::from(root),
            tools: tools.iter().map(mcp_tool).collect(),
        }
    }

    /// The server's `tools/list` entries.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn exposes(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
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
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
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
        self.tools.iter().find(|t| t.name == name).cloned()
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
            run_engine(&name, &params, &root, &session).map(|o| (o, started.elapsed()))
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

/// A runtime for the server: the engine calls run on its blocking pool.
fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start the async runtime: {e}")))
}

/// Serve `server` over stdin/stdout until the client closes stdin.
pub fn serve_stdio(server: EngineServer) -> Result<(), Error> {
    let rt = runtime()?;
    rt.block_on(async move {
        let running = server
            .serve(rmcp::transport::io::stdio())
            .await
            .map_err(|e| Error::io(format!("MCP over stdio: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::io(format!("MCP over stdio: {e}")))?;
        Ok(())
    })
    // Dropping the runtime waits for engine calls still running.
}

/// Is `addr` one only this machine can reach?
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// Serve `server` over Streamable HTTP at `http://ADDR/mcp` until killed.
/// `ready` is called with the bound address (port 0 picks one) once the
/// server accepts connections.
pub fn serve_http(
    server: EngineServer,
    addr: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::io(format!("cannot listen on {addr}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::io(format!("cannot listen on {addr}: {e}")))?;
        let mut config = StreamableHttpServerConfig::default();
        if !is_loopback(&bound) {
            // The user named a non-loopback address on purpose: accept the
            // Host header they will use (rmcp's default accepts loopback names only).
            config.allowed_hosts.push(bound.ip().to_string());
            config.allowed_hosts.push(bound.to_string());
        }
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        ready(bound);
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                // A transient accept failure (out of descriptors) must not
                // end the server.
                Err(_) => continue,
            };
            let service = service.clone();
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let service = hyper_util::service::TowerToHyperService::new(service);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    })
}
