"""`patchspec mcp` driven by the official Python MCP SDK (PyPI `mcp`, v2).

A client from another ecosystem than the server's (rmcp, Rust): if the two
SDKs read the protocol differently, this is where it shows. Run by
scripts/mcp-python-client.sh inside a venv that has `mcp`; usage:

    python mcp-python-client.py PATCHSPEC_BINARY

Three connections to three fresh workspaces: stdio with the `initialize`
handshake (mode="legacy", revision 2025-11-25), stdio with the SDK's
default negotiation (server/discover, revision 2026-07-28), and Streamable
HTTP (`patchspec mcp --listen 127.0.0.1:0`), with the SDK's default
negotiation and with the `initialize` handshake (a session, DELETEd on
close: the SDK must log no warning). On each: list the tools (the
nine names, each with an inputSchema and an outputSchema), apply a patch
(structuredContent, and the file on disk), have one refused (isError, the
reason in the text, the file unchanged), and read a file with
workspace.read_file. Then a --read-only server must list only the tools
that never write. Prints one line per check and `mcp-python: N passed, N
failed`; exits 1 if any check failed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

EXPECTED_TOOLS = {
    "apply_patch",
    "workspace_write_patch",
    "workspace_create_file",
    "workspace.read_file",
    "read_file",
    "grep_file",
    "apply_change",
    "call_chain",
    "get_patch_change",
}
READ_ONLY_TOOLS = {"workspace.read_file", "read_file", "grep_file", "call_chain", "get_patch_change"}

ORIGINAL = "def greet(name):\n    return 'hello ' + name\n"
APPLIES = (
    "*** Begin Patch\n"
    "*** Update File: greet.py\n"
    "@@\n"
    " def greet(name):\n"
    "-    return 'hello ' + name\n"
    "+    return f'hello {name}'\n"
    "*** End Patch\n"
)
PATCHED = "def greet(name):\n    return f'hello {name}'\n"
# Its removed line is not in the file (any more): the engine refuses it.
REFUSED = (
    "*** Begin Patch\n"
    "*** Update File: greet.py\n"
    "@@\n"
    "-    return 'hello ' + name\n"
    "+    return 'hi ' + name\n"
    "*** End Patch\n"
)

passed = 0
failed = 0


def check(label: str, ok: bool, detail: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {label}")
    else:
        failed += 1
        print(f"FAIL {label}{': ' + detail if detail else ''}")


def texts(result) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def exercise(label: str, client: Client, workspace: Path) -> None:
    """The checks every connection gets."""
    check(f"{label}: protocol revision {client.protocol_version}", bool(client.protocol_version))
    listed = await client.list_tools()
    names = {t.name for t in listed.tools}
    check(f"{label}: tools/list has the nine tools", names == EXPECTED_TOOLS, f"got {sorted(names)}")
    for tool in listed.tools:
        schema_ok = isinstance(tool.input_schema, dict) and tool.input_schema.get("type") == "object"
        check(f"{label}: {tool.name} has an inputSchema", schema_ok, repr(tool.input_schema)[:200])
        check(f"{label}: {tool.name} has an outputSchema", isinstance(tool.output_schema, dict))
        check(f"{label}: {tool.name} has a description", bool(tool.description))

    target = workspace / "greet.py"
    applied = await client.call_tool("apply_patch", {"patch": APPLIES})
    doc = applied.structured_content or {}
    check(f"{label}: apply_patch applies (isError false)", applied.is_error is False, str(texts(applied))[:300])
    check(f"{label}: apply_patch structuredContent success", doc.get("success") is True, str(doc)[:300])
    changed = [c.get("path") for c in doc.get("data", {}).get("changedFiles", [])]
    check(f"{label}: apply_patch names greet.py changed", changed == ["greet.py"], str(changed))
    check(f"{label}: the file on disk is patched", target.read_text() == PATCHED, repr(target.read_text()))

    before = target.read_bytes()
    refused = await client.call_tool("apply_patch", {"patch": REFUSED})
    doc = refused.structured_content or {}
    reason = texts(refused)[0] if texts(refused) else ""
    check(f"{label}: a refused apply_patch is isError", refused.is_error is True)
    check(f"{label}: its text says why", "greet.py" in reason and "context not found" in reason, reason[:300])
    check(
        f"{label}: its structuredContent is the failure document",
        doc.get("success") is False and doc.get("error", {}).get("kind") == "patch_apply_error",
        str(doc)[:300],
    )
    check(f"{label}: the refused edit changed nothing", target.read_bytes() == before)

    read = await client.call_tool("workspace.read_file", {"path": "greet.py"})
    doc = read.structured_content or {}
    check(f"{label}: workspace.read_file succeeds", read.is_error is False, str(texts(read))[:300])
    check(
        f"{label}: workspace.read_file returns the content",
        doc.get("file", {}).get("content") == PATCHED,
        str(doc)[:300],
    )


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="mcp-python-"))
    (root / "greet.py").write_text(ORIGINAL)
    return root


async def over_stdio(binary: str, mode: str) -> None:
    root = workspace()
    params = StdioServerParameters(command=binary, args=["mcp", "--root", str(root)])
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        await exercise(f"stdio ({mode})", client, root)


class Warnings(logging.Handler):
    """The SDK's log records at WARNING and above, kept."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


async def over_http(binary: str, mode: str = "auto") -> None:
    root = workspace()
    server = subprocess.Popen(
        [binary, "mcp", "--root", str(root), "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline() if server.stderr else ""
        found = re.search(r"listening on (http://\S+)", line)
        check("http: the server says where it listens", bool(found), line.strip())
        if not found:
            return
        label = "http" if mode == "auto" else f"http ({mode})"
        warnings = Warnings()
        logging.getLogger("mcp").addHandler(warnings)
        try:
            async with Client(found.group(1), mode=mode, read_timeout_seconds=30) as client:
                await exercise(label, client, root)
        finally:
            logging.getLogger("mcp").removeHandler(warnings)
        # Closing a session-based client DELETEs its session: the SDK warns
        # unless the answer is 200 or 204.
        check(f"{label}: the SDK logged no warning (session closed cleanly)", not warnings.records, "; ".join(warnings.records))
    finally:
        server.terminate()
        server.wait(timeout=10)


async def read_only(binary: str) -> None:
    root = workspace()
    params = StdioServerParameters(command=binary, args=["mcp", "--root", str(root), "--read-only"])
    async with Client(params, read_timeout_seconds=30) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        check("--read-only lists only the tools that never write", names == READ_ONLY_TOOLS, str(sorted(names)))


async def main(binary: str) -> None:
    for step in (
        lambda: over_stdio(binary, "legacy"),
        lambda: over_stdio(binary, "auto"),
        lambda: over_http(binary),
        lambda: over_http(binary, "legacy"),
        lambda: read_only(binary),
    ):
        try:
            await step()
        except Exception as e:  # a connection that broke is a failed check, and the others still run
            check("connection", False, f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: mcp-python-client.py PATCHSPEC_BINARY")
    asyncio.run(main(os.path.abspath(sys.argv[1])))
    print(f"mcp-python: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
