"""Latency of `patchspec mcp` over stdio, as a client sees it.

    python3 scripts/mcp-latency.py [BINARY] [ROUNDS]

BINARY defaults to target/release/patchspec, ROUNDS to 500. One server on a
temp workspace, the `initialize` handshake, then ROUNDS of each, timed from
the request's write to the answer's read (raw JSON-RPC lines; the client's
own cost, a write and a readline, is in the figures):

- `tools/list` (every tool of the catalog, with their schemas);
- `tools/call` of a small edit: `apply_patch` changing one line of a
  20-line file (it applies every round: the edit flips the line back and
  forth), and the engine's own time for the same call, which the server
  reports in the result's `_meta["dev.patchspec/engineMicros"]`. The
  difference is what MCP adds: framing, the SDK's dispatch, the blocking
  thread hand-off, serialising the document twice.

Prints the median and the 95th percentile of each. Standard library only.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/patchspec"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    root = Path(tempfile.mkdtemp(prefix="mcp-latency-"))
    lines = [f"line {i}\n" for i in range(20)]
    (root / "a.txt").write_text("".join(lines))
    server = subprocess.Popen(
        [binary, "mcp", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert server.stdin and server.stdout
    next_id = 0

    def request(method: str, params: dict) -> tuple[dict, float]:
        nonlocal next_id
        next_id += 1
        message = json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
        started = time.perf_counter()
        server.stdin.write(message + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        elapsed = time.perf_counter() - started
        response = json.loads(answer)
        if response.get("id") != next_id or "error" in response:
            sys.exit(f"unexpected answer: {answer[:300]}")
        return response, elapsed

    request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "latency", "version": "1"}},
    )
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    server.stdin.flush()

    listing = []
    for _ in range(rounds):
        _, elapsed = request("tools/list", {})
        listing.append(elapsed * 1000)

    flips = ["line 10", "LINE 10"]
    round_trips, engine = [], []
    for i in range(rounds):
        old, new = flips[i % 2], flips[(i + 1) % 2]
        patch = f"*** Begin Patch\n*** Update File: a.txt\n@@\n line 9\n-{old}\n+{new}\n line 11\n*** End Patch\n"
        response, elapsed = request("tools/call", {"name": "apply_patch", "arguments": {"patch": patch}})
        result = response["result"]
        if result.get("isError"):
            sys.exit(f"the edit was refused: {result['content'][0]['text'][:300]}")
        round_trips.append(elapsed * 1000)
        engine.append(result["_meta"]["dev.patchspec/engineMicros"] / 1000)
    server.stdin.close()
    server.wait(timeout=10)

    overhead = [r - e for r, e in zip(round_trips, engine)]
    print(f"{rounds} rounds each, {binary}")
    print(f"tools/list round trip:       median {statistics.median(listing):.3f} ms, p95 {percentile(listing, 0.95):.3f} ms")
    print(f"tools/call small edit:       median {statistics.median(round_trips):.3f} ms, p95 {percentile(round_trips, 0.95):.3f} ms")
    print(f"  the engine's own time:     median {statistics.median(engine):.3f} ms, p95 {percentile(engine, 0.95):.3f} ms")
    print(f"  added by MCP (per call):   median {statistics.median(overhead):.3f} ms, p95 {percentile(overhead, 0.95):.3f} ms")


if __name__ == "__main__":
    main()
