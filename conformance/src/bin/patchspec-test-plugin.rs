//! A purpose-built WebSocket plugin for the runner's own tests (not shipped).
//!
//! It connects to the URL in `$PATCHSPEC_WS_URL` (or after `--connect`) with
//! the *blocking* tungstenite API, as a third-party plugin would, serves every
//! `TOOL_CALL` on its own thread (so calls overlap), implements the fake tool
//! `test.write {path, content}` (write the file, answer
//! `{"success": true, "path": path, "maxInFlight": n}`) and hands every other
//! tool to the reference engine. A case picks a misbehaviour with the param
//! `misbehave`:
//!
//! | misbehave | what the plugin does | the runner must report |
//! |---|---|---|
//! | `root-fields` | `toolCallId`, `success`, `result` at the root, no `data` | error (protocol) |
//! | `wrong-id` | answers with `data.toolCallId` = the call's + `-not` | error (protocol), `⚠️` logged |
//! | `never-made` | first a result for a toolCallId never sent, then the right answer | error (protocol) when it is the only call pending, `⚠️` logged |
//! | `never-made-slow` | the same after 500 ms (while other calls are in flight) | pass; a run-level error, `⚠️` logged |
//! | `private` | also writes `.private/trash/x` | pass when `.private` is declared (its HELLO) |
//! | `two-late` | the right answer, then the same again 250 ms later | error (protocol), pinned on this call after the fact |
//! | `two` | two results for the call, in one write | error (protocol) |
//! | `disconnect` | drops the connection without answering, reconnects 100 ms later | error (crash); the next case passes |
//! | `silent` | never answers | error (timeout) |
//! | `late` | answers after 1 s | error (timeout); the late answer harms no other case |
//! | `exit` | exits with code 3 without answering | error (crash); the runner restarts it |
//! | `garbage` | sends text that is not JSON | error (protocol) |
//! | `slow` | answers right after 300 ms | pass (for the concurrency test) |
//! | `echo` | answers `{"success": true, "echo": <the TOOL_CALL received>}`, any tool | pass |
//!
//! It answers patchspec's `HELLO` (declaring `test.write` and the engine's
//! tools, and the private path `.private`) unless `--no-hello` is given.
//! Flags: `--always MODE` misbehaves on every call; `--bad-path` connects to
//! the wrong path (and is rejected); `--no-query` leaves out `projectKey`.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

enum Action {
    Send(Vec<String>),
    /// Send, then send the same again after a delay.
    Twice(String, Duration),
    Disconnect,
    Exit(i32),
}

fn result_message(id: &str, success: bool, doc: &Value) -> String {
    json!({"type": "TOOL_RESULT", "data": {"toolCallId": id, "success": success, "result": doc.to_string()}}).to_string()
}

struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
}

/// Serve one TOOL_CALL (on its own thread).
fn answer(call: &Value, always: Option<&str>, inflight: &InFlight) -> Option<Action> {
    let id = call["toolCallId"].as_str().unwrap_or_default().to_owned();
    let root = Path::new(call["workspaceRoot"].as_str().unwrap_or("."));
    let params = &call["params"];
    let mode = always
        .or_else(|| params["misbehave"].as_str())
        .unwrap_or("");
    let tool = call["toolName"].as_str().unwrap_or_default();
    if mode == "echo" {
        let doc = json!({"success": true, "echo": call});
        return Some(Action::Send(vec![result_message(&id, true, &doc)]));
    }
    let n = inflight.now.fetch_add(1, Ordering::SeqCst) + 1;
    inflight.max.fetch_max(n, Ordering::SeqCst);
    match mode {
        "slow" => std::thread::sleep(Duration::from_millis(300)),
        "never-made-slow" => std::thread::sleep(Duration::from_millis(500)),
        "late" => std::thread::sleep(Duration::from_millis(1000)),
        _ => {}
    }
    let (success, doc) = if tool == "test.write" {
        let path = params["path"].as_str().unwrap_or("out.txt");
        let target = root.join(path);
        if let Some(parent) = target.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&target, params["content"].as_str().unwrap_or_default());
        let max = inflight.max.load(Ordering::SeqCst);
        (
            true,
            json!({"success": true, "path": path, "maxInFlight": max}),
        )
    } else {
        let session = patchspec_engine::dispatch::Session {
            active_files: serde_json::from_value(call["session"]["activeFiles"].clone())
                .unwrap_or_default(),
            ..Default::default()
        };
        let outcome = patchspec_engine::dispatch::call(&patchspec_engine::dispatch::ToolCall {
            tool_name: tool,
            params,
            workspace_root: root,
            session: &session,
        });
        (outcome.success, outcome.result)
    };
    inflight.now.fetch_sub(1, Ordering::SeqCst);
    let right = result_message(&id, success, &doc);
    match mode {
        "root-fields" => Some(Action::Send(vec![json!({"type": "TOOL_RESULT", "toolCallId": id, "success": success, "result": doc.to_string()}).to_string()])),
        "wrong-id" => Some(Action::Send(vec![result_message(&format!("{id}-not"), success, &doc)])),
        "two-late" => Some(Action::Twice(right, Duration::from_millis(250))),
        "private" => {
            let _ = std::fs::create_dir_all(root.join(".private/trash"));
            let _ = std::fs::write(root.join(".private/trash/x"), "kept");
            Some(Action::Send(vec![right]))
        }
        "never-made" | "never-made-slow" => Some(Action::Send(vec![
            result_message(&format!("never-made-{}", std::process::id()), true, &json!({})),
            right,
        ])),
        "two" => Some(Action::Send(vec![right.clone(), right])),
        "disconnect" => Some(Action::Disconnect),
        "silent" => None,
        "exit" => Some(Action::Exit(3)),
        "garbage" => Some(Action::Send(vec!["this is not a message".into()])),
        _ => Some(Action::Send(vec![right])),
    }
}

fn hello() -> String {
    let mut tools = vec!["test.write".to_owned()];
    tools.extend(
        patchspec_engine::dispatch::SUPPORTED_TOOLS
            .iter()
            .map(|s| s.to_string()),
    );
    json!({
        "type": "HELLO", "protocolVersion": 1,
        "implementation": {"name": "patchspec-test-plugin", "version": "0.0.0", "language": "Rust"},
        "tools": tools, "privatePaths": [".private"]
    })
    .to_string()
}

fn connect(url: &str) -> Result<WebSocket<TcpStream>, String> {
    let rest = url.strip_prefix("ws://").ok_or("not a ws:// URL")?;
    let host = rest.split('/').next().unwrap_or_default();
    let stream = TcpStream::connect(host).map_err(|e| format!("connect {host}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (ws, _) = tungstenite::client(url, stream).map_err(|e| format!("handshake: {e}"))?;
    ws.get_ref()
        .set_read_timeout(Some(Duration::from_millis(2)))
        .map_err(|e| e.to_string())?;
    Ok(ws)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let always = value("--always");
    let mut url = value("--connect")
        .or_else(|| std::env::var("PATCHSPEC_WS_URL").ok())
        .unwrap_or_else(|| {
            eprintln!("patchspec-test-plugin: no URL (--connect or $PATCHSPEC_WS_URL)");
            std::process::exit(2)
        });
    if flag("--bad-path") {
        url = url.replace("/ws/agent/chat", "/ws/other");
    }
    if flag("--no-query") {
        url = url.split('?').next().unwrap_or_default().to_owned();
    }
    let inflight = Arc::new(InFlight {
        now: AtomicUsize::new(0),
        max: AtomicUsize::new(0),
    });
    let (tx, rx) = mpsc::channel::<Action>();
    loop {
        let mut ws = match connect(&url) {
            Ok(ws) => ws,
            Err(e) => {
                eprintln!("patchspec-test-plugin: {e}");
                std::process::exit(1);
            }
        };
        let reconnect = loop {
            match ws.read() {
                Ok(Message::Text(text)) => {
                    let call: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                    if call["type"] == "HELLO" && !flag("--no-hello") {
                        let _ = ws.send(Message::text(hello()));
                    }
                    if call["type"] == "TOOL_CALL" {
                        let (tx, always, inflight) = (tx.clone(), always.clone(), inflight.clone());
                        std::thread::spawn(move || {
                            match answer(&call, always.as_deref(), &inflight) {
                                Some(Action::Twice(text, delay)) => {
                                    let _ = tx.send(Action::Send(vec![text.clone()]));
                                    std::thread::sleep(delay);
                                    let _ = tx.send(Action::Send(vec![text]));
                                }
                                Some(action) => {
                                    let _ = tx.send(action);
                                }
                                None => {}
                            }
                        });
                    }
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    std::process::exit(0)
                }
                Err(e) => {
                    eprintln!("patchspec-test-plugin: {e}");
                    std::process::exit(1);
                }
            }
            let mut reconnect = false;
            while let Ok(action) = rx.try_recv() {
                match action {
                    Action::Send(burst) => {
                        // One flush: a burst arrives together.
                        for text in burst {
                            let _ = ws.write(Message::text(text));
                        }
                        let _ = ws.flush();
                    }
                    Action::Twice(..) => {}
                    Action::Disconnect => reconnect = true,
                    Action::Exit(code) => std::process::exit(code),
                }
            }
            if reconnect {
                break true;
            }
        };
        if reconnect {
            eprintln!("patchspec-test-plugin: dropping the connection");
            let _ = ws.get_ref().shutdown(std::net::Shutdown::Both);
            drop(ws);
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
