//! The websocket transport, tested like a product: the runner is the backend,
//! a purpose-built plugin (`patchspec-test-plugin`, see its docs for the
//! misbehaviours) or the reference plugin (`patchspec exec --connect`)
//! connects over a real loopback WebSocket, and the JSON-lines report the
//! runner emits is parsed back and compared with an expected-outcome model.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;

use common::{check_json, corpus_tools, patchspec, Corpus, Run, CORPUS_SHARD, PATCHSPEC, PLUGIN};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");

/// `patchspec check --transport websocket --corpus C --report json <extra> [-- plugin...]`,
/// asserting the exit code.
fn check(corpus: &str, extra: &[&str], plugin: &[&str], code: i32) -> Run {
    let mut args = vec!["--transport", "websocket"];
    args.extend_from_slice(extra);
    check_json(Path::new(corpus), &args, plugin, code)
}

/// Each broken plugin behaviour gets its own outcome, and the cases after it
/// run normally (reconnection, restart, a late answer that harms nobody).
#[test]
fn broken_plugins_get_their_outcomes() {
    let c = Corpus::new();
    let model = [
        ("t/a-ok", "", "pass", ""),
        ("t/root-fields", "root-fields", "error", "protocol"),
        ("t/wrong-id", "wrong-id", "error", "protocol"),
        ("t/never-made", "never-made", "error", "protocol"),
        ("t/two-results", "two", "error", "protocol"),
        ("t/garbage", "garbage", "error", "protocol"),
        ("t/disconnect", "disconnect", "error", "crash"),
        ("t/disconnect-then-ok", "", "pass", ""),
        ("t/silent", "silent", "error", "timeout"),
        ("t/silent-then-ok", "", "pass", ""),
        ("t/b-exit", "exit", "error", "crash"),
        ("t/b-exit-then-ok", "", "pass", ""),
        // The late answer arrives once the runner has given up on it and
        // sent the next call, while that call is pending.
        ("t/tardy", "late", "error", "timeout"),
        ("t/tardy-then-ok", "", "pass", ""),
        ("t/z-ok-after-all-that", "", "pass", ""),
    ];
    let mut expected = BTreeMap::new();
    for (id, mode, outcome, kind) in model {
        c.case(id, mode, &[]);
        expected.insert(id.to_owned(), (outcome.to_owned(), kind.to_owned()));
    }
    let root = c.root();
    // One call in flight, so every violation is pinned on its own case. No
    // answer waits for a span of time: the timeout only has to outlast a
    // prompt answer on a loaded machine.
    let run = check(
        root.to_str().expect("utf-8"),
        &["-j", "1", "--timeout", "2s", "--max-restarts", "2"],
        &[PLUGIN],
        1,
    );
    assert_eq!(run.outcomes(), expected, "stderr:\n{}", run.stderr);

    // The messages say what was wrong.
    let root_fields = run.message("t/root-fields");
    assert!(
        root_fields.contains("at the root instead of inside \"data\""),
        "{root_fields}"
    );
    let wrong_id_sent = format!(
        "{}-not",
        run.case("t/wrong-id")["toolCallId"]
            .as_str()
            .expect("an id")
    );
    let log_line = format!("⚠️ 未找到对应的工具调用: toolCallId={wrong_id_sent}");
    assert!(
        run.message("t/wrong-id").contains(&log_line),
        "{}",
        run.message("t/wrong-id")
    );
    // Logged the way the spec's backend logs it.
    assert!(
        run.stderr.lines().any(|l| l == log_line),
        "{log_line} in\n{}",
        run.stderr
    );
    assert!(
        run.message("t/never-made")
            .contains("⚠️ 未找到对应的工具调用: toolCallId=never-made-"),
        "{}",
        run.message("t/never-made")
    );
    assert!(
        run.message("t/two-results")
            .contains("more than one message for one call"),
        "{}",
        run.message("t/two-results")
    );
    assert!(
        run.message("t/disconnect").contains("disconnected"),
        "{}",
        run.message("t/disconnect")
    );
    let late = format!(
        "ignoring a late TOOL_RESULT for toolCallId={}",
        run.case("t/tardy")["toolCallId"].as_str().expect("an id")
    );
    assert!(
        run.stderr.contains(&late),
        "the late answer is logged, not blamed: {late} in\n{}",
        run.stderr
    );
    let footer = run.footer();
    assert_eq!(
        (footer["passed"].as_u64(), footer["failed"].as_u64()),
        (Some(6), Some(9))
    );
}

/// The TOOL_CALL on the wire: the protocol's fields at the root, the
/// extension fields, and, for the spec's own tools only, `projectKey` and
/// `webSocketSessionId` inside `params` too (never overriding the case's).
#[test]
fn the_tool_call_carries_the_routing_fields() {
    let c = Corpus::new();
    let raw = |id: &str, tool: &str, call: Value| {
        let case = json!({
            "id": id, "summary": "echo the TOOL_CALL", "spec": ["websocket-tool-protocol#tool-call"],
            "tool": tool, "given": {"files": {"src/A.java": "class A {}\n"}, "session": {"activeFiles": {"src/A.java": "class A {}\n"}}},
            // `$open`: the echo is not a member the tools document (exact mode).
            "call": call, "expect": {"result": {"$open": {"success": true}}, "files": "unchanged"}
        });
        let path = c.root().join(format!("{id}.json"));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, case.to_string()).expect("write case");
    };
    raw(
        "e/grep",
        "grep_file",
        json!({"pattern": "class", "misbehave": "echo"}),
    );
    raw(
        "e/keeps-own-key",
        "read_file",
        json!({"relativePath": "src/A.java", "projectKey": "mine", "misbehave": "echo"}),
    );
    raw(
        "e/other-tool",
        "test.write",
        json!({"path": "a.txt", "misbehave": "echo"}),
    );
    let root = c.root();
    let run = check(root.to_str().expect("utf-8"), &[], &[PLUGIN], 0);
    let echo = |id: &str| run.case(id)["result"]["echo"].clone();
    let grep = echo("e/grep");
    assert_eq!(grep["type"], "TOOL_CALL");
    assert_eq!(grep["toolCallId"], run.case("e/grep")["toolCallId"]);
    assert_eq!(grep["toolName"], "grep_file");
    let session = grep["webSocketSessionId"].as_str().expect("a session id");
    assert!(session.starts_with("patchspec-"), "{grep}");
    assert_eq!(
        grep["params"],
        json!({"pattern": "class", "misbehave": "echo", "projectKey": "patchspec", "webSocketSessionId": session})
    );
    let ws_root = grep["workspaceRoot"].as_str().expect("workspaceRoot");
    assert!(
        ws_root.starts_with('/') && ws_root.ends_with("/ws"),
        "{ws_root}"
    );
    assert_eq!(
        grep["session"],
        json!({"activeFiles": {"src/A.java": "class A {}\n"}})
    );
    assert_eq!(echo("e/keeps-own-key")["params"]["projectKey"], "mine");
    assert_eq!(
        echo("e/other-tool")["params"],
        json!({"path": "a.txt", "misbehave": "echo"})
    );
}

/// `-j N` puts N calls in flight over the one connection: the plugin holds
/// each `gather` call until four are in flight at once (the probe, the
/// first case, runs alone), so the run ends only if they overlap.
#[test]
fn several_calls_are_in_flight_over_one_connection() {
    let c = Corpus::new();
    c.case("p/a-probe", "", &[]);
    for i in 0..8 {
        c.case(&format!("p/gather-{i}"), "gather", &[]);
    }
    let root = c.root();
    let run = check(root.to_str().expect("utf-8"), &["-j", "4"], &[PLUGIN], 0);
    let most = run
        .lines()
        .iter()
        .filter(|v| v["type"] == "case")
        .filter_map(|v| v["result"]["maxInFlight"].as_u64())
        .max();
    assert_eq!(most, Some(4), "{}", run.stdout);
}

/// `--listen ADDR` starts nothing and waits for a plugin (inside an IDE) to
/// connect to the URL it prints; the plugin exits when the run is over.
#[test]
fn listen_waits_for_a_plugin_to_connect() {
    let c = Corpus::new();
    c.case("l/a", "", &[]);
    c.case("l/b", "", &[]);
    // Its trash is private by its HELLO, with no --ignore-path.
    c.case("l/c", "private", &[]);
    let root = c.root();
    let mut runner = Command::new(PATCHSPEC)
        .args([
            "check",
            "--transport",
            "websocket",
            "--listen",
            "127.0.0.1:0",
            "--corpus",
            root.to_str().expect("utf-8"),
            "--report",
            "json",
        ])
        .env("CI", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start patchspec");
    let stderr = runner.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("ws://") {
                let _ = tx.send(
                    line[at..]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_owned(),
                );
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the runner prints the URL to connect to");
    assert!(url.contains("/ws/agent/chat?sessionId="), "{url}");
    assert!(url.contains("&projectKey="), "{url}");
    let mut plugin = Command::new(PLUGIN)
        .args(["--connect", &url])
        .stdin(Stdio::null())
        .spawn()
        .expect("start the plugin");
    let mut stdout = String::new();
    runner
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let status = runner.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{stdout}");
    let run = Run {
        code: 0,
        stdout,
        stderr: String::new(),
    };
    assert_eq!(run.lines()[0]["executor"]["transport"], "websocket");
    assert_eq!(run.lines()[0]["executor"]["command"], json!([]));
    // A plugin that connected by itself declares itself with its HELLO.
    assert_eq!(run.lines()[0]["executor"]["declaredBy"], "hello");
    assert_eq!(
        run.lines()[0]["executor"]["implementation"]["name"],
        "patchspec-test-plugin"
    );
    assert_eq!(run.footer()["passed"], 3);
    // The backend closed: the plugin exits by itself, with 0.
    let deadline = Instant::now() + Duration::from_secs(5);
    let code = loop {
        if let Some(s) = plugin.try_wait().expect("try_wait") {
            break s.code();
        }
        assert!(Instant::now() < deadline, "the plugin did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
}

/// No plugin, a plugin that connects to the wrong place, one that drops
/// the first call: the executor is unusable (exit code 3), with the reason.
#[test]
fn unusable_plugins_and_usage_errors() {
    let c = Corpus::new();
    c.case("u/a", "", &[]);
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    let run = check(
        r,
        &["--listen", "127.0.0.1:0", "--connect-timeout", "300ms"],
        &[],
        3,
    );
    assert!(run.stderr.contains("no plugin connected"), "{}", run.stderr);
    let run = check(r, &["--connect-timeout", "2s"], &[PLUGIN, "--bad-path"], 3);
    assert!(
        run.stderr
            .contains("path \"/ws/other\" is not \"/ws/agent/chat\""),
        "{}",
        run.stderr
    );
    let run = check(r, &["--connect-timeout", "2s"], &[PLUGIN, "--no-query"], 3);
    assert!(
        run.stderr.contains("sessionId and projectKey"),
        "{}",
        run.stderr
    );
    check(r, &[], &[PLUGIN, "--always", "disconnect"], 3);
    check(r, &[], &[PLUGIN, "--always", "root-fields"], 3);
    check(r, &[], &["/nonexistent/plugin"], 3);
    // --listen belongs to the websocket transport.
    let run = patchspec(&["check", "--corpus", r, "--listen", "127.0.0.1:0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// A started plugin that exits is restarted at most `--max-restarts` times.
#[test]
fn plugin_restarts_are_bounded() {
    let c = Corpus::new();
    c.case("r/a-ok", "", &[]);
    for i in 0..3 {
        c.case(&format!("r/exit-{i}"), "exit", &[]);
    }
    c.case("r/z-ok", "", &[]);
    let root = c.root();
    let run = check(
        root.to_str().expect("utf-8"),
        &["-j", "1", "--max-restarts", "2"],
        &[PLUGIN],
        1,
    );
    let o = run.outcomes();
    // Three processes: the first and two restarts; exit-0..exit-2 use them up.
    assert_eq!(o["r/exit-0"], ("error".into(), "crash".into()));
    assert_eq!(o["r/exit-2"], ("error".into(), "crash".into()));
    assert_eq!(o["r/z-ok"], ("error".into(), "session".into()));
    assert!(
        run.message("r/z-ok").contains("restart bound"),
        "{}",
        run.message("r/z-ok")
    );
}

/// `patchspec check --transport websocket -j 2 --corpus CORPUS --report json
/// <filter> [-- plugin...]` over the shipped corpus: every selected case
/// passes, and the report names the reference plugin as the executor,
/// declared as `declared_by`.
fn corpus_over_websocket(filter: &[&str], plugin: &[&str], declared_by: &str) -> Run {
    let mut args = vec![
        "check",
        "--transport",
        "websocket",
        "-j",
        "2",
        "--corpus",
        CORPUS,
        "--report",
        "json",
    ];
    args.extend_from_slice(filter);
    if !plugin.is_empty() {
        args.push("--");
        args.extend_from_slice(plugin);
    }
    let run = patchspec(&args);
    let executor = &run.lines()[0]["executor"];
    assert_eq!(executor["transport"], "websocket");
    assert_eq!(executor["declaredBy"], declared_by);
    assert_eq!(executor["implementation"]["name"], "patchspec-engine");
    assert_eq!(executor["privatePaths"], json!([".patchspec"]));
    let failed: Vec<String> = run
        .outcomes()
        .into_iter()
        .filter(|(_, (o, _))| o != "pass")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        (run.code, run.footer()["failed"].as_u64()),
        (0, Some(0)),
        "{plugin:?}: not passing: {failed:?}\n{}",
        run.stderr
    );
    run
}

/// The shipped corpus over WebSocket against the reference plugin, started
/// by the runner (no executor named): a transport must not change any
/// verdict, so every case passes, as in-process (`gate.rs`). The one
/// whole-corpus run over this transport in `cargo test`.
#[test]
fn the_corpus_passes_over_websocket_against_the_reference_plugin() {
    let run = corpus_over_websocket(&[], &[], "builtin");
    let cases = patchspec(&["list", "--corpus", CORPUS])
        .stdout
        .lines()
        .count();
    assert!(cases >= 1_000, "{cases} cases listed");
    assert_eq!(run.outcomes().len(), cases);
}

/// The reference plugin named explicitly with the `{url}` placeholder (as a
/// third-party plugin is): a shard of the corpus that holds cases of every
/// tool. The whole corpus runs this way in `.ci/run`'s gate stage.
#[test]
fn a_corpus_shard_passes_over_websocket_against_an_external_plugin() {
    let run = corpus_over_websocket(
        &["--shard", CORPUS_SHARD],
        &[PATCHSPEC, "exec", "--connect", "{url}"],
        "hello",
    );
    assert_eq!(
        run.tools(),
        corpus_tools(),
        "the shard holds cases of every tool"
    );
}

/// The reference plugin against a backend shaped like the spec's own
/// example (no extension fields): answers in the `data` layer, serves the
/// cwd when no `workspaceRoot` is given, refuses a malformed call with
/// `success: false`, ignores other message types, exits 0 on close.
#[test]
fn the_reference_plugin_serves_a_spec_shaped_backend() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let url = format!("ws://127.0.0.1:{port}/ws/agent/chat?sessionId=test-123&projectKey=autoloop");
    let mut plugin = Command::new(PATCHSPEC)
        .args(["exec", "--connect", &url])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .spawn()
        .expect("start the plugin");
    let (stream, _) = listener.accept().expect("the plugin connects");
    let mut ws = tungstenite::accept(stream).expect("upgrade");
    for msg in [
        json!({"type": "CHAT", "text": "not for the plugin"}),
        json!({"type": "TOOL_CALL", "toolCallId": "test-001", "toolName": "grep_file", "params": {"pattern": "TODO", "projectKey": "autoloop"}}),
        json!({"type": "TOOL_CALL", "toolCallId": "test-002", "toolName": "workspace.read_file", "params": {"path": "a.txt"}, "webSocketSessionId": "test-123"}),
        json!({"type": "TOOL_CALL", "toolCallId": "test-003", "params": {}}),
    ] {
        ws.send(tungstenite::Message::text(msg.to_string()))
            .expect("send");
    }
    let mut answers = BTreeMap::new();
    while answers.len() < 3 {
        let text = match ws.read().expect("read") {
            tungstenite::Message::Text(t) => t.as_str().to_owned(),
            _ => continue,
        };
        let v: Value = serde_json::from_str(&text).expect("JSON");
        // Every field inside data; nothing else at the root.
        let root: Vec<&String> = v.as_object().expect("object").keys().collect();
        assert_eq!(root, ["type", "data"], "{v}");
        assert_eq!(v["type"], "TOOL_RESULT");
        let id = v["data"]["toolCallId"].as_str().expect("id").to_owned();
        answers.insert(id, v["data"].clone());
    }
    assert!(answers["test-001"]["result"].is_string());
    let read = &answers["test-002"];
    assert_eq!(read["success"], true, "{read}");
    let doc: Value = serde_json::from_str(read["result"].as_str().expect("a string")).expect("doc");
    assert_eq!(doc["file"]["content"], "one\n");
    let refused = &answers["test-003"];
    assert_eq!(refused["success"], false);
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("toolName"),
        "{refused}"
    );
    ws.close(None).expect("close");
    while ws.read().is_ok() {}
    let deadline = Instant::now() + Duration::from_secs(5);
    let code = loop {
        if let Some(s) = plugin.try_wait().expect("try_wait") {
            break s.code();
        }
        assert!(Instant::now() < deadline, "the plugin did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
}

/// A plugin declares itself with a HELLO over the socket (answering the
/// runner's); one that does not is a plugin without a declaration, and the
/// report says so.
#[test]
fn a_plugin_declares_private_paths_with_its_hello() {
    let c = Corpus::new();
    c.case("h/a-ok", "", &[]);
    c.case("h/b-private", "private", &[]);
    let root = c.root();
    let r = root.to_str().expect("utf-8");
    let run = check(r, &[], &[PLUGIN], 0);
    let executor = &run.lines()[0]["executor"];
    assert_eq!(executor["declaredBy"], "hello");
    assert_eq!(executor["privatePaths"], json!([".private"]));
    let run = check(r, &[], &[PLUGIN, "--no-hello"], 1);
    let executor = &run.lines()[0]["executor"];
    assert_eq!(executor["declaredBy"], "none");
    assert!(
        executor["noHello"]
            .as_str()
            .unwrap_or_default()
            .contains("did not answer the runner's HELLO"),
        "{executor}"
    );
    assert!(run.stderr.contains("no HELLO given"), "{}", run.stderr);
    assert_eq!(
        run.case("h/b-private")["files"]["extra"],
        json!([".private", ".private/trash", ".private/trash/x"])
    );
    check(
        r,
        &["--ignore-path", ".private"],
        &[PLUGIN, "--no-hello"],
        0,
    );
}

/// With several calls in flight, a violation is pinned where it belongs: a
/// late second answer on the call it answers again (even though that call
/// had passed), an unknown toolCallId on no case but on the run — never on
/// the innocent calls pending at the time.
#[test]
fn violations_with_calls_in_flight_harm_no_innocent_case() {
    let c = Corpus::new();
    // The order is made by events, not by time. The first case is the
    // probe, judged alone before any other call is sent: its second answer
    // goes out when the next call arrives, so after it was judged, with
    // calls in flight. b's unknown id goes out once a d-held call is in
    // flight, and those are answered only after it: pending when it comes.
    // Three d-held calls and c-ok: four workers cannot all wait for b.
    c.case("j/a-two-late", "two-late", &[]);
    c.case("j/b-never-made", "never-made-in-flight", &[]);
    c.case("j/c-ok", "", &[]);
    for i in 0..3 {
        c.case(&format!("j/d-held-{i}"), "after-never-made", &[]);
    }
    let root = c.root();
    let junit = c.path("junit.xml");
    let run = check(
        root.to_str().expect("utf-8"),
        &["-j", "4", "--junit", junit.to_str().expect("utf-8")],
        &[PLUGIN],
        1,
    );
    let mut expected: BTreeMap<String, (String, String)> = BTreeMap::new();
    for id in ["j/b-never-made", "j/c-ok"] {
        expected.insert(id.into(), ("pass".into(), "".into()));
    }
    expected.insert("j/a-two-late".into(), ("error".into(), "protocol".into()));
    for i in 0..3 {
        expected.insert(format!("j/d-held-{i}"), ("pass".into(), "".into()));
    }
    assert_eq!(run.outcomes(), expected, "stderr:\n{}", run.stderr);
    let late = run.case("j/a-two-late");
    assert_eq!(late["amended"], true);
    assert!(
        late["message"]
            .as_str()
            .unwrap_or_default()
            .contains("a second TOOL_RESULT"),
        "{late}"
    );
    let footer = run.footer();
    let errors = footer["runErrors"].as_array().cloned().unwrap_or_default();
    assert_eq!(errors.len(), 1, "{footer}");
    let first = errors[0].as_str().unwrap_or_default();
    assert!(
        first.contains("⚠️ 未找到对应的工具调用: toolCallId=never-made-")
            && first.contains("calls were pending"),
        "{first}"
    );
    // The closing line and JUnit count it: 1 case error + 1 run error.
    assert_eq!(footer["failed"], 2);
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert!(xml.contains("run-error-1"), "{xml}");
    assert!(xml.contains("errors=\"2\""), "{xml}");
}
