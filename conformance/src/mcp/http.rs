//! `patchspec mcp --listen`: the Streamable HTTP transport, hardened for a
//! server anyone on the machine (and any web page in its browser) can reach.
//!
//! Main function: [`serve_http`]. In front of rmcp's `StreamableHttpService`
//! (the MCP protocol: sessions, SSE, version headers, `Host` and `Origin`
//! checks) sits `Gate`, which answers what rmcp would get wrong or leave
//! open:
//!
//! - only [`ENDPOINT`] answers; any other path is `404`;
//! - `Origin`: absent, a loopback origin (`http(s)://localhost`,
//!   `127.0.0.1`, `[::1]`, any port) or one named with `--allow-origin`;
//!   any other is `403` (rmcp's check, configured here, and asked first:
//!   a forbidden POST is refused before its body is read);
//! - a POST body is read by the gate, up to [`MAX_MESSAGE_BYTES`] (the
//!   stdio limit too) within [`BODY_TIMEOUT`]: past the size, `413` with a
//!   JSON-RPC error naming the limit; too slow, `408`; a body that is not a
//!   JSON-RPC message, `400` with the JSON-RPC error the stdio transport
//!   would give ([`super::framing`]), never rmcp's `415`;
//! - `DELETE` of a session the server does not have is `404`, of one it
//!   ends `204` (rmcp: `202` for both);
//! - at most [`HttpOptions::max_sessions`] live sessions: an `initialize`
//!   past it is `503` with a JSON-RPC error that says so. A session ends on
//!   `DELETE` or after [`HttpOptions::session_timeout`] without a message,
//!   and the memory of ended sessions is handed back to the system
//!   (`malloc_trim` once the live count falls).
//!
//! Per connection: `TCP_NODELAY` (without it a reused connection waits
//! ~40 ms per request on delayed ACKs); the request head must arrive within
//! [`HttpOptions::header_timeout`] ([`HEADER_TIMEOUT`] unless told) of the
//! connection going idle, which also closes a
//! keep-alive connection idle that long. Accept errors (out of descriptors)
//! back off from 10 ms to 1 s instead of spinning.
//!
//! What it leaves out: TLS and authentication (loopback is the boundary),
//! HTTP/2.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{combinators::BoxBody, BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};

use super::framing::{self, Peeked, MAX_MESSAGE_BYTES};
use super::{is_loopback, runtime, EngineServer};
use crate::error::Error;

/// The MCP endpoint's path; every other path is `404`.
pub const ENDPOINT: &str = "/mcp";

/// How long a connection may take to send a request head, counted from the
/// moment it is idle (accepted, or done with its previous request): a
/// half-sent request, or a keep-alive connection idle this long, is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a POST body may take to arrive in full (`408` past it).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The default cap on live sessions (`--max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// The default time a session lives without a message (`--session-timeout`).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(300);

/// The origins a browser page on this machine sends: loopback, any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// The JSON-RPC error code of a refused `initialize` past the session cap
/// (the server-error range of JSON-RPC).
pub const TOO_MANY_SESSIONS: i32 = -32000;

/// What `--listen` serves beyond the tools.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Origins accepted beside the loopback ones (`--allow-origin`), as
    /// `scheme://host[:port]` (`:*`: any port).
    pub allowed_origins: Vec<String>,
    /// The most sessions alive at once (`--max-sessions`).
    pub max_sessions: usize,
    /// A session without a message for this long ends (`--session-timeout`).
    pub session_timeout: Duration,
    /// A request head must arrive within this long of the connection going
    /// idle, else the connection is closed (`--header-timeout`).
    pub header_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_origins: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            header_timeout: HEADER_TIMEOUT,
        }
    }
}

type Body = BoxBody<Bytes, Infallible>;

/// The checks in front of rmcp's service.
struct Gate {
    service: StreamableHttpService<EngineServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
}

/// A plain-text answer.
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A JSON-RPC error answer with an HTTP status.
fn json_error(status: StatusCode, answer: &Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

impl Gate {
    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != ENDPOINT {
            return plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp");
        }
        let session = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match *request.method() {
            Method::POST => {}
            Method::DELETE => {
                let known = match &session {
                    Some(id) => self
                        .sessions
                        .sessions
                        .read()
                        .await
                        .contains_key(id.as_str()),
                    None => true,
                };
                // rmcp checks Host, Origin and the headers first (a
                // forbidden request must not learn whether a session
                // exists), then answers 202 whether it had the session or
                // not: 404 for one it did not have, and 204 for one it
                // ended (the Python SDK takes only 200 or 204 as success).
                let mut response = self.service.handle(request).await;
                if response.status() == StatusCode::ACCEPTED {
                    if !known {
                        return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
                    }
                    *response.status_mut() = StatusCode::NO_CONTENT;
                }
                return response;
            }
            _ => return self.service.handle(request).await,
        }
        if let Some(forbidden) = self.forbidden(&request).await {
            return forbidden;
        }
        let (parts, body) = request.into_parts();
        let read = tokio::time::timeout(
            BODY_TIMEOUT,
            Limited::new(body, MAX_MESSAGE_BYTES).collect(),
        )
        .await;
        let bytes = match read {
            Err(_) => {
                return plain(
                    StatusCode::REQUEST_TIMEOUT,
                    "Request Timeout: the body did not arrive in time",
                )
            }
            Ok(Err(e)) if e.is::<LengthLimitError>() => {
                let refusal = framing::too_large(&[], &[]);
                let answer = refusal
                    .response()
                    .unwrap_or_else(|| too_large_answer(&refusal.message));
                return json_error(StatusCode::PAYLOAD_TOO_LARGE, &answer);
            }
            Ok(Err(e)) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    &format!("Bad Request: the body could not be read: {e}"),
                )
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };
        let message = match framing::read_message(&bytes) {
            Ok(message) => message,
            Err(refusal) => {
                let answer = refusal.response().unwrap_or_else(|| {
                    json!({"jsonrpc": "2.0", "id": null,
                           "error": {"code": refusal.code, "message": refusal.message}})
                });
                return json_error(StatusCode::BAD_REQUEST, &answer);
            }
        };
        if session.is_none() && is_initialize(&message) {
            let live = self.sessions.sessions.read().await.len();
            if live >= self.max_sessions {
                let id = match framing::peek_id(&bytes) {
                    Peeked::Id(id) => id,
                    Peeked::BadId | Peeked::NoId => Value::Null,
                };
                return json_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": TOO_MANY_SESSIONS,
                        "message": format!(
                            "too many sessions: this server keeps at most {} live sessions \
                             (--max-sessions); one ends on DELETE or after its idle timeout",
                            self.max_sessions
                        ),
                    }}),
                );
            }
        }
        let request = Request::from_parts(parts, Full::new(bytes));
        self.service.handle(request).await
    }

    /// rmcp's answer when it refuses `request`'s `Host` or `Origin` (403),
    /// asked before the gate reads the body: a forbidden request is
    /// answered 403 whatever it carries, and costs no body read. The probe
    /// is the request's head with an empty body, which rmcp refuses
    /// without side effects (no session, no call) whatever the headers.
    async fn forbidden(&self, request: &Request<Incoming>) -> Option<Response<Body>> {
        let mut probe = Request::new(Full::new(Bytes::new()));
        *probe.method_mut() = request.method().clone();
        *probe.uri_mut() = request.uri().clone();
        *probe.headers_mut() = request.headers().clone();
        let answer = self.service.handle(probe).await;
        (answer.status() == StatusCode::FORBIDDEN).then_some(answer)
    }
}

fn too_large_answer(message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null,
           "error": {"code": framing::TOO_LARGE, "message": message}})
}

fn is_initialize(message: &rmcp::model::ClientJsonRpcMessage) -> bool {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
    matches!(message, ClientJsonRpcMessage::Request(r)
        if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

/// Hand freed heap back to the system once sessions have ended: glibc keeps
/// it in its arenas otherwise (thousands of ended sessions left the process
/// at ten times its size). Checks every second; trims when the live count
/// has fallen since the last trim.
async fn trim_after_sessions_end(sessions: Arc<LocalSessionManager>) {
    let mut interval = tokio::time::interval(Duration::from_secs(1));
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut peak = 0usize;
    loop {
        interval.tick().await;
        let live = sessions.sessions.read().await.len();
        if live < peak {
            // The map keeps the capacity of its peak otherwise.
            sessions.sessions.write().await.shrink_to_fit();
            // A blocking call (it walks the heap): off the I/O thread.
            let _ = tokio::task::spawn_blocking(release_free_memory).await;
            peak = live;
        } else {
            peak = live;
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_free_memory() {
    // SAFETY: malloc_trim only walks and trims glibc's own heap; it takes
    // the allocator's locks and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

/// Serve `server` over Streamable HTTP at `http://ADDR/mcp` until killed.
/// `ready` is called with the bound address (port 0 picks one) once the
/// server accepts connections.
pub fn serve_http(
    server: EngineServer,
    addr: SocketAddr,
    options: &HttpOptions,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::io(format!("cannot listen on {addr}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::io(format!("cannot listen on {addr}: {e}")))?;
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins(
                LOOPBACK_ORIGINS
                    .iter()
                    .map(|o| o.to_string())
                    .chain(options.allowed_origins.iter().cloned()),
            )
            .enforce_origin_validation()
            // The gate bounds the body; rmcp's own bound must not be lower.
            .with_max_request_body_bytes(MAX_MESSAGE_BYTES + 1);
        if !is_loopback(&bound) {
            // The user named a non-loopback address on purpose: accept the
            // Host header they will use (rmcp's default accepts loopback names only).
            config.allowed_hosts.push(bound.ip().to_string());
            config.allowed_hosts.push(bound.to_string());
        }
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(options.session_timeout);
        let sessions = Arc::new(manager);
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        let gate = Arc::new(Gate {
            service,
            sessions: sessions.clone(),
            max_sessions: options.max_sessions,
        });
        tokio::spawn(trim_after_sessions_end(sessions));
        ready(bound);
        let header_timeout = options.header_timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => {
                    backoff = Duration::from_millis(10);
                    stream
                }
                // Out of descriptors (or another transient failure): the
                // pending connection stays queued; wait for one to free
                // instead of spinning on the same error.
                Err(_) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            };
            // Without it, a response's last segment waits for the client's
            // delayed ACK: ~40 ms per request on a reused connection.
            let _ = stream.set_nodelay(true);
            let gate = gate.clone();
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let service = hyper::service::service_fn(move |request| {
                    let gate = gate.clone();
                    async move { Ok::<_, Infallible>(gate.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(io, service)
                    .await;
            });
        }
    })
}
