//! `patchspec mcp --listen` through the real binary over 127.0.0.1, spoken
//! to with raw HTTP/1.1 as a hostile or careless peer would: origins,
//! paths, bodies that are malformed, too large or too slow, unknown
//! sessions, the session cap and timeout, a reused connection's latency,
//! and the accept loop out of descriptors.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::PATCHSPEC;
use serde_json::{json, Value};

/// A `patchspec mcp --listen 127.0.0.1:0` server.
struct Http {
    child: Child,
    authority: String,
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Http {
    fn start(root: &Path, extra: &[&str]) -> Http {
        Http::start_with(root, "127.0.0.1:0", extra, |_| {})
    }

    fn start_with(
        root: &Path,
        listen: &str,
        extra: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Http {
        let mut command = Command::new(PATCHSPEC);
        command
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(["--listen", listen])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        adjust(&mut command);
        let mut child = command.spawn().expect("patchspec mcp starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("the listening line");
        let authority = line
            .trim()
            .strip_prefix("patchspec mcp: listening on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_owned();
        Http { child, authority }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(&self.authority).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("read timeout");
        stream
    }

    /// One request on a new connection; (status, head, body).
    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut stream = self.connect();
        send(&mut stream, &self.authority, method, path, headers, body);
        read_reply(&mut BufReader::new(stream))
    }

    fn post(&self, headers: &[(&str, &str)], body: &Value) -> Reply {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.request("POST", "/mcp", &all, body.to_string().as_bytes())
    }

    /// A new session's id.
    fn initialize(&self) -> String {
        let reply = self.post(&[], &initialize(1));
        assert_eq!(reply.status, 200, "{reply:?}");
        let id = reply.header("mcp-session-id").expect("a session id");
        let done = self.post(
            &session_headers(&id),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(done.status, 202, "{done:?}");
        id
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
}

fn session_headers(id: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

fn send(
    stream: &mut TcpStream,
    authority: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).expect("write the head");
    // A server that answers before reading a large body may close early.
    let _ = stream.write_all(body);
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// The JSON-RPC message of the body (plain JSON, or the `data:` of an SSE event).
    fn json(&self) -> Value {
        let text = self
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| d.starts_with('{'))
            .unwrap_or(self.body.trim());
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// One response from a keep-alive connection: Content-Length or chunked.
fn read_reply(reader: &mut BufReader<TcpStream>) -> Reply {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("read the head") == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let reply = Reply {
        status,
        head,
        body: String::new(),
    };
    let mut body = Vec::new();
    if let Some(len) = reply.header("content-length") {
        body.resize(len.parse().expect("a length"), 0);
        reader.read_exact(&mut body).expect("read the body");
    } else if reply
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).expect("a chunk size");
            let size = usize::from_str_radix(size.trim(), 16).expect("hex");
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).expect("a chunk");
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Reply {
        body: String::from_utf8_lossy(&body).into_owned(),
        ..reply
    }
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").expect("write");
    dir
}

fn create_file(id: u64, path: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "workspace_create_file", "arguments": {"path": path, "content": "x\n"}}})
}

#[test]
fn a_foreign_origin_is_refused_and_writes_nothing() {
    let ws = workspace();
    let server = Http::start(ws.path(), &["--allow-origin", "https://app.example:8443"]);
    let evil = [("Origin", "http://evil.example")];
    assert_eq!(server.post(&evil, &initialize(1)).status, 403);
    // A Host that is not loopback (DNS rebinding): 403 as well.
    let mut stream = server.connect();
    let body = initialize(1).to_string();
    send(
        &mut stream,
        "evil.example",
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body.as_bytes(),
    );
    assert_eq!(read_reply(&mut BufReader::new(stream)).status, 403);
    let session = server.initialize();
    let [s, v] = session_headers(&session);
    let refused = server.post(&[s, v, evil[0]], &create_file(2, "evil.txt"));
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(!ws.path().join("evil.txt").exists());
    // A look-alike of a loopback or allowed origin is foreign too.
    for origin in [
        "http://localhost.evil.example",
        "https://app.example:9999",
        "null",
    ] {
        let reply = server.post(&[("Origin", origin)], &initialize(1));
        assert_eq!(reply.status, 403, "{origin}");
    }
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:1",
        "https://app.example:8443",
    ] {
        let reply = server.post(&[("Origin", origin)], &initialize(1));
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
    }
    let ok = server.post(
        &[s, v, ("Origin", "http://localhost:5173")],
        &create_file(3, "ok.txt"),
    );
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(ws.path().join("ok.txt").exists());
}

#[test]
fn only_the_endpoint_path_answers() {
    let ws = workspace();
    let server = Http::start(ws.path(), &[]);
    let session = server.initialize();
    let [s, v] = session_headers(&session);
    for path in ["/", "/foo", "/MCP", "/mcp/x", "/mcp/"] {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            s,
            v,
        ];
        let body = create_file(2, "stray.txt").to_string();
        let reply = server.request("POST", path, &headers, body.as_bytes());
        assert_eq!(reply.status, 404, "{path}: {reply:?}");
        headers.truncate(2);
        let reply = server.request("GET", path, &headers, b"");
        assert_eq!(reply.status, 404, "{path}: {reply:?}");
    }
    assert!(!ws.path().join("stray.txt").exists());
}

#[test]
fn a_malformed_body_is_400_with_the_json_rpc_error() {
    let ws = workspace();
    let server = Http::start(ws.path(), &[]);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let cases: [(&[u8], Value, i64); 5] = [
        (br#"{"jsonrpc":"2.0","id":9,"method":"x","params":{,}}"#, json!(9), -32700),
        (b"", Value::Null, -32700),
        (b"{\"jsonrpc\":\"2.0\",\"id\":\"k\",\"method\":\"initialize\",\"params\":{\"s\":\"\\ud800\"}}", json!("k"), -32602),
        (br#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"n":1e400}}"#, json!(4), -32602),
        (br#"{"id":5,"hello":1}"#, json!(5), -32600),
    ];
    for (body, id, code) in cases {
        let reply = server.request("POST", "/mcp", &headers, body);
        assert_eq!(reply.status, 400, "{reply:?}");
        let answer = reply.json();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
}

#[test]
fn delete_of_an_unknown_session_is_404() {
    let ws = workspace();
    let server = Http::start(ws.path(), &[]);
    let unknown = server.request("DELETE", "/mcp", &session_headers("no-such-session"), b"");
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let session = server.initialize();
    // Ended: 204 (the Python SDK logs a failure for anything but 200/204).
    let first = server.request("DELETE", "/mcp", &session_headers(&session), b"");
    assert_eq!(first.status, 204, "{first:?}");
    let again = server.request("DELETE", "/mcp", &session_headers(&session), b"");
    assert_eq!(again.status, 404, "{again:?}");
    // Origin is checked before the session is looked up.
    let [s, v] = session_headers("no-such-session");
    let foreign = server.request(
        "DELETE",
        "/mcp",
        &[s, v, ("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
}

#[test]
fn a_body_over_the_limit_is_413_with_a_json_rpc_error_naming_it() {
    let ws = workspace();
    let server = Http::start(ws.path(), &[]);
    let session = server.initialize();
    let [s, v] = session_headers(&session);
    let limit = 16 * 1024 * 1024;
    let content = "a".repeat(limit);
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "workspace_create_file", "arguments": {"path": "big.txt", "content": content}}});
    let reply = server.post(&[s, v], &body);
    assert_eq!(reply.status, 413, "{}", reply.head);
    let answer = reply.json();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().expect("a message");
    assert!(message.contains(&limit.to_string()), "{message}");
    assert!(!ws.path().join("big.txt").exists());
    // Just under it is served (the limit is the stdio one too).
    let content = "a".repeat(5 << 20);
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "workspace_create_file", "arguments": {"path": "big.txt", "content": content,
        }, "_meta": {"dev.patchspec/session": {"limits": {"createFileMaxBytes": 8 << 20}}}}});
    let reply = server.post(&[s, v], &body);
    assert_eq!(reply.status, 200, "{}", reply.head);
    assert_eq!(reply.json()["result"]["isError"], false, "{}", reply.body);
}

#[test]
fn sessions_are_capped_and_end_when_idle() {
    let ws = workspace();
    let server = Http::start(
        ws.path(),
        &["--max-sessions", "2", "--session-timeout", "1s"],
    );
    let first = server.initialize();
    let _second = server.initialize();
    let refused = server.post(&[], &initialize(7));
    assert_eq!(refused.status, 503, "{refused:?}");
    let answer = refused.json();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32000);
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 2 live sessions")),
        "{answer}"
    );
    // DELETE frees a place at once.
    let closed = server.request("DELETE", "/mcp", &session_headers(&first), b"");
    assert!(closed.status / 100 == 2, "{closed:?}");
    let third = server.initialize();
    // Idle past the timeout, a session ends and its place is free: the test
    // waits for that event (a new session admitted), not for a span of
    // time. The second session idles out first, then the third.
    admitted_once_a_place_frees(&server);
    admitted_once_a_place_frees(&server);
    let [s, v] = session_headers(&third);
    let gone = server.post(
        &[s, v],
        &json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
    );
    assert_eq!(gone.status, 404, "{gone:?}");
}

/// Ask for a new session until the server admits one (503 while at the
/// cap); a deadline only guards against a hang.
fn admitted_once_a_place_frees(server: &Http) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let reply = server.post(&[], &initialize(9));
        if reply.status == 200 {
            return;
        }
        assert_eq!(reply.status, 503, "{reply:?}");
        assert!(
            Instant::now() < deadline,
            "no session ended within 20 s of idling"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_reused_connection_does_not_wait_for_delayed_acks() {
    let ws = workspace();
    let server = Http::start(ws.path(), &[]);
    let session = server.initialize();
    let [s, v] = session_headers(&session);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        s,
        v,
    ];
    let mut stream = server.connect();
    stream.set_nodelay(true).expect("nodelay");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut took = Vec::new();
    for id in 0..30 {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "workspace.read_file", "arguments": {"path": "a.txt"}}})
        .to_string();
        let started = Instant::now();
        send(
            &mut stream,
            &server.authority,
            "POST",
            "/mcp",
            &headers,
            body.as_bytes(),
        );
        let reply = read_reply(&mut reader);
        took.push(started.elapsed());
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.json()["id"], id);
    }
    took.sort();
    // Delayed ACKs cost ~40 ms per request; a median of 20 ms leaves room
    // for a loaded machine and none for them.
    let median = took[took.len() / 2];
    assert!(
        median < Duration::from_millis(20),
        "median {median:?}: {took:?}"
    );
}

#[test]
fn a_half_sent_request_is_closed_after_the_header_timeout() {
    let ws = workspace();
    // 2 s rather than the default 10 s: the same timer, a fifth of the wait.
    let server = Http::start(ws.path(), &["--header-timeout", "2s"]);
    let mut stream = server.connect();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("half a head");
    let started = Instant::now();
    let mut rest = Vec::new();
    let read = stream.read_to_end(&mut rest);
    let waited = started.elapsed();
    assert!(read.is_ok(), "closed, not timed out on our side: {read:?}");
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(8),
        "{waited:?}"
    );
}

#[test]
fn listen_accepts_localhost() {
    let ws = workspace();
    let server = Http::start_with(ws.path(), "localhost:0", &[], |_| {});
    assert!(
        server.authority.starts_with("127.0.0.1:"),
        "{}",
        server.authority
    );
    server.initialize();
}

/// CPU seconds (user + system) of a process so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the comm.
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz
}

#[test]
fn out_of_descriptors_the_accept_loop_backs_off_and_recovers() {
    use std::os::unix::process::CommandExt;
    let ws = workspace();
    let server = Http::start_with(ws.path(), "127.0.0.1:0", &[], |command| {
        // SAFETY: setrlimit is async-signal-safe; it only lowers this
        // child's own descriptor limit before it runs.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    let idle: Vec<TcpStream> = (0..80).map(|_| server.connect()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let pid = server.child.id();
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_seconds(pid) - before;
    assert!(used < 0.1, "{used} s of CPU in 2 s with no descriptor left");
    drop(idle);
    // The queued connections are accepted and closed as they come (their
    // clients are gone); then a normal client is served.
    let started = Instant::now();
    server.initialize();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_foreign_origin_is_refused_before_the_body_is_read() {
    let ws = workspace();
    let server = Http::start(ws.path(), &["--max-sessions", "1"]);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Origin", "http://evil.example"),
    ];
    // Malformed, or past the session cap: still 403, not 400 or 503.
    let malformed = server.request("POST", "/mcp", &headers, b"{,}");
    assert_eq!(malformed.status, 403, "{malformed:?}");
    server.initialize();
    let capped = server.request(
        "POST",
        "/mcp",
        &headers,
        initialize(2).to_string().as_bytes(),
    );
    assert_eq!(capped.status, 403, "{capped:?}");
    // A head announcing a body that never comes: answered at once.
    let mut stream = server.connect();
    stream
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\n\
                 Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
                server.authority
            )
            .as_bytes(),
        )
        .expect("write the head");
    let started = Instant::now();
    let reply = read_reply(&mut BufReader::new(stream));
    assert_eq!(reply.status, 403, "{reply:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
