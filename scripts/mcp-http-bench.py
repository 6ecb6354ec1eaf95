"""`patchspec mcp --listen`: the figures of docs/performance.md's section on
the MCP HTTP transport. Standard library only; traffic to 127.0.0.1 only.

    python3 scripts/mcp-http-bench.py [BINARY] [WHAT...]

BINARY defaults to target/release/patchspec. WHAT picks the measurements
(default: all of them):

- `latency`: a write-free call (`workspace.read_file` of a 20-line file)
  500 times over stdio, and 500 times over HTTP on one reused keep-alive
  connection (one session), with Python's http.client and with a minimal
  client (raw socket, as the stdio client is a write and a readline);
  median and p95 of the round trip.
- `sessions`: 10,000 `initialize` calls (new connection each, sessions
  never deleted) against `--max-sessions 10000 --session-timeout 5s`, then
  idle 8 s; the server's RSS before any request, at start (once one
  session was served and deleted: the code that serves HTTP paged in),
  after the calls, and after the idle time. Then the same against the default cap (1,000): how many are refused.
- `starve`: 500 half-open connections (half a request head) and 200 slow
  bodies (a head announcing 1 MiB, then one byte every 0.5 s), held open;
  meanwhile 50 normal clients in turn (connect, initialize, one call):
  median and worst time.
- `nofile`: the server under `prlimit --nofile=64` (RLIMIT_NOFILE 64),
  80 idle connections opened; its CPU use over 5 s, then how long a normal
  client waits to be served (the idle ones are closed after the 10 s
  header timeout).
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/release/patchspec"
WHAT = set(sys.argv[2:]) or {"latency", "sessions", "starve", "nofile"}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
READ = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "workspace.read_file", "arguments": {"path": "a.txt"}}}


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="mcp-http-bench-"))
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(20)))
    return root


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.2f} ms, p95 {percentile(values, 0.95) * 1000:.2f} ms, max {max(values) * 1000:.2f} ms"


def serve(extra: list[str], preexec=None) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [BINARY, "mcp", "--root", str(workspace()), "--listen", "127.0.0.1:0", *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
    )
    assert server.stderr
    line = server.stderr.readline()
    authority = line.strip().removeprefix("patchspec mcp: listening on http://").removesuffix("/mcp")
    return server, authority


def body_of(response: http.client.HTTPResponse) -> dict:
    text = response.read().decode()
    for line in text.splitlines():
        if line.startswith("data:") and "{" in line:
            return json.loads(line[5:])
    return json.loads(text)


def initialize(conn: http.client.HTTPConnection) -> str:
    conn.request("POST", "/mcp", json.dumps(INIT), HEADERS)
    response = conn.getresponse()
    body_of(response)
    assert response.status == 200, response.status
    session = response.getheader("mcp-session-id")
    headers = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers)
    response = conn.getresponse()
    response.read()
    return session


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency() -> None:
    rounds = 500
    root = workspace()
    stdio = subprocess.Popen([BINARY, "mcp", "--root", str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert stdio.stdin and stdio.stdout
    stdio.stdin.write(json.dumps(INIT) + "\n")
    stdio.stdin.flush()
    stdio.stdout.readline()
    stdio.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    times = []
    for i in range(rounds):
        started = time.perf_counter()
        stdio.stdin.write(json.dumps({**READ, "id": 10 + i}) + "\n")
        stdio.stdin.flush()
        answer = json.loads(stdio.stdout.readline())
        times.append(time.perf_counter() - started)
        assert answer["result"]["isError"] is False
    stdio.stdin.close()
    stdio.wait()
    print(f"latency: stdio, workspace.read_file x{rounds}: {ms(times)}")
    server, authority = serve([])
    try:
        conn = http.client.HTTPConnection(authority)
        session = initialize(conn)
        headers = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        http_times = []
        for i in range(rounds):
            started = time.perf_counter()
            conn.request("POST", "/mcp", json.dumps({**READ, "id": 10 + i}), headers)
            answer = body_of(conn.getresponse())
            http_times.append(time.perf_counter() - started)
            assert answer["result"]["isError"] is False
        print(f"latency: HTTP (http.client), one keep-alive connection, workspace.read_file x{rounds}: {ms(http_times)}")
        # A minimal client, as the stdio figure's (a write, then reading the
        # head and the chunked SSE body): what the server adds, not Python's
        # http.client.
        host, port = authority.rsplit(":", 1)
        raw = socket.create_connection((host, int(port)))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = raw.makefile("rb")
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n"
            "MCP-Protocol-Version: 2025-11-25\r\n"
        )
        raw_times = []
        for i in range(rounds):
            body = json.dumps({**READ, "id": 10 + i}).encode()
            started = time.perf_counter()
            raw.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            while reader.readline() != b"\r\n":
                pass
            text = b""
            while True:
                size = int(reader.readline().strip(), 16)
                chunk = reader.read(size + 2)
                if size == 0:
                    break
                text += chunk[:-2]
            raw_times.append(time.perf_counter() - started)
            assert b'"isError":false' in text, text[:200]
        raw.close()
        print(f"latency: HTTP (minimal client), one keep-alive connection, workspace.read_file x{rounds}: {ms(raw_times)}")
        for label, values in (("http.client", http_times), ("minimal client", raw_times)):
            ratio = statistics.median(values) / statistics.median(times)
            print(f"latency: HTTP ({label}) / stdio, medians: {ratio:.2f}")
    finally:
        server.kill()


def sessions() -> None:
    for extra, label in ((["--max-sessions", "10000", "--session-timeout", "5s"], "cap 10000, timeout 5s"), ([], "default cap")):
        server, authority = serve(extra)
        try:
            time.sleep(0.3)
            cold = rss_mb(server.pid)
            # One session opened and deleted: the start is a server that has
            # served (its code paged in), not one that has not run yet.
            conn = http.client.HTTPConnection(authority)
            warm = initialize(conn)
            conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": warm, "MCP-Protocol-Version": "2025-11-25"})
            conn.getresponse().read()
            conn.close()
            time.sleep(1.5)
            start = rss_mb(server.pid)
            started = time.perf_counter()
            refused = 0
            for _ in range(10_000):
                conn = http.client.HTTPConnection(authority)
                conn.request("POST", "/mcp", json.dumps(INIT), HEADERS)
                response = conn.getresponse()
                response.read()
                if response.status == 503:
                    refused += 1
                else:
                    assert response.status == 200, response.status
                conn.close()
            took = time.perf_counter() - started
            peak = rss_mb(server.pid)
            if label.startswith("cap"):
                time.sleep(8)
            after = rss_mb(server.pid)
            print(
                f"sessions ({label}): 10,000 initialize in {took:.1f} s ({10_000 / took:.0f}/s), {refused} refused (503); "
                f"RSS {cold:.1f} MB before any request, {start:.1f} MB at start (one session served and deleted), "
                f"{peak:.1f} MB after the calls"
                + (f", {after:.1f} MB after 8 s idle ({after / start:.2f}x the start)" if label.startswith("cap") else "")
            )
        finally:
            server.kill()


def starve() -> None:
    server, authority = serve([])
    host, port = authority.rsplit(":", 1)
    held: list[socket.socket] = []
    stop = threading.Event()
    try:
        for _ in range(500):
            s = socket.create_connection((host, int(port)))
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            held.append(s)
        slow: list[socket.socket] = []
        for _ in range(200):
            s = socket.create_connection((host, int(port)))
            head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1048576\r\n\r\n"
            s.sendall(head.encode())
            slow.append(s)
        held.extend(slow)

        def trickle() -> None:
            while not stop.wait(0.5):
                for s in slow:
                    try:
                        s.sendall(b" ")
                    except OSError:
                        pass

        threading.Thread(target=trickle, daemon=True).start()
        time.sleep(0.5)
        times = []
        for i in range(50):
            started = time.perf_counter()
            conn = http.client.HTTPConnection(authority, timeout=10)
            session = initialize(conn)
            headers = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            conn.request("POST", "/mcp", json.dumps({**READ, "id": 3}), headers)
            answer = body_of(conn.getresponse())
            times.append(time.perf_counter() - started)
            assert answer["result"]["isError"] is False
            conn.close()
        print(f"starve: 500 half-open + 200 slow bodies held; a normal client (connect, initialize, one call) x50: {ms(times)}")
    finally:
        stop.set()
        for s in held:
            s.close()
        server.kill()


def nofile() -> None:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    server, authority = serve([], preexec=limit)
    host, port = authority.rsplit(":", 1)
    try:
        idle = [socket.create_connection((host, int(port))) for _ in range(80)]
        time.sleep(0.5)
        before, started = cpu_seconds(server.pid), time.perf_counter()
        time.sleep(5)
        used = cpu_seconds(server.pid) - before
        wall = time.perf_counter() - started
        print(f"nofile: RLIMIT_NOFILE 64, 80 idle connections: {used:.2f} s CPU in {wall:.1f} s ({100 * used / wall:.1f} %)")
        started = time.perf_counter()
        conn = http.client.HTTPConnection(authority, timeout=30)
        initialize(conn)
        print(f"nofile: a normal client, the idle connections still open on the client side: served after {time.perf_counter() - started:.1f} s")
        for s in idle:
            s.close()
    finally:
        server.kill()


for name in ("latency", "sessions", "starve", "nofile"):
    if name in WHAT:
        globals()[name]()
