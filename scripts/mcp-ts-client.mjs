// `patchspec mcp` driven by the official TypeScript MCP SDK
// (npm `@modelcontextprotocol/sdk`, the version pinned in
// scripts/mcp-ts-client.sh): the most used client SDK, from another
// ecosystem than the server's. Run by scripts/mcp-ts-client.sh, which
// installs the SDK and copies this file beside it; usage:
//
//   node mcp-ts-client.mjs PATCHSPEC_BINARY
//
// First the MCP Inspector's CLI (also pinned): an integer and a boolean
// optional member typed from the inputSchema. Then over stdio and over
// Streamable HTTP (`--listen 127.0.0.1:0`), each on a
// fresh workspace: list the tools (the nine names, titles, schemas, and no
// output from the SDK while it compiles their schemas), call every tool
// (the SDK validates each success's structuredContent against the tool's
// outputSchema and throws when it does not fit), a refused edit (isError,
// the reason, the file unchanged), an unknown tool (-32602). Then the HTTP
// hardening with fetch: a foreign Origin (403, nothing written), another
// path (404), DELETE of an unknown session (404), a body over the limit
// (413 with a JSON-RPC error), a malformed body (400 with its id); and
// over stdio, malformed messages with ids, each answered once. Traffic
// goes to 127.0.0.1 only. Prints one line per check and `mcp-ts: N passed,
// N failed`; exits 1 if any check failed.

import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const binary = process.argv[2];
const EXPECTED = [
  "apply_patch",
  "workspace_write_patch",
  "workspace_create_file",
  "workspace.read_file",
  "get_patch_change",
  "read_file",
  "grep_file",
  "apply_change",
  "call_chain",
];
const ORIGINAL = "alpha\nbeta\n";
const APPLIES = "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n*** End Patch\n";
const REFUSED = "*** Begin Patch\n*** Update File: a.txt\n@@\n-gamma\n+GAMMA\n*** End Patch\n";
const LIMIT = 16 * 1024 * 1024;

let passed = 0;
let failed = 0;
function check(label, ok, detail = "") {
  if (ok) {
    passed += 1;
    console.log(`ok   ${label}`);
  } else {
    failed += 1;
    console.log(`FAIL ${label}${detail ? ": " + detail : ""}`);
  }
}

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), "patchspec-mcp-ts-"));
  writeFileSync(join(dir, "a.txt"), ORIGINAL);
  writeFileSync(join(dir, "b.txt"), "one\ntwo\n");
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "A.java"), "class A {\n  void run() { helper(); }\n  void helper() {}\n}\n");
  return dir;
}

/// Run `f` with everything the process would print on stderr (and
/// console.warn/error) captured; [result, captured text].
async function quietly(f) {
  const captured = [];
  const write = process.stderr.write.bind(process.stderr);
  const warn = console.warn;
  const error = console.error;
  process.stderr.write = (chunk, ...rest) => {
    captured.push(String(chunk));
    return true;
  };
  console.warn = (...args) => captured.push(args.join(" "));
  console.error = (...args) => captured.push(args.join(" "));
  try {
    return [await f(), captured.join("")];
  } finally {
    process.stderr.write = write;
    console.warn = warn;
    console.error = error;
  }
}

const sha256 = async (text) => {
  const { createHash } = await import("node:crypto");
  return createHash("sha256").update(text).digest("hex");
};

async function exercise(label, client, root) {
  const started = performance.now();
  const [listed, noise] = await quietly(() => client.listTools());
  const took = performance.now() - started;
  const names = listed.tools.map((t) => t.name);
  check(`${label}: tools/list names the nine tools in order`, JSON.stringify(names) === JSON.stringify(EXPECTED), names.join(","));
  check(`${label}: listTools() prints nothing (standard formats only)`, noise === "", noise.slice(0, 300));
  console.log(`     ${label}: listTools() took ${took.toFixed(1)} ms`);
  check(
    `${label}: every tool has a title, an inputSchema and an outputSchema`,
    listed.tools.every((t) => t.title && t.inputSchema?.type === "object" && t.outputSchema?.type === "object"),
  );
  const idempotent = listed.tools.filter((t) => t.annotations?.idempotentHint).map((t) => t.name);
  check(
    `${label}: idempotentHint on the readers and workspace_create_file`,
    JSON.stringify(idempotent) === JSON.stringify(["workspace_create_file", "workspace.read_file", "get_patch_change", "read_file", "grep_file", "call_chain"]),
    idempotent.join(","),
  );

  // Every tool, through callTool: a success's structuredContent is
  // validated by the SDK against the outputSchema it listed.
  const call = async (name, args) => {
    try {
      return await client.callTool({ name, arguments: args });
    } catch (e) {
      return { thrown: e };
    }
  };
  const ok = (r) => r && !r.thrown && r.isError === false && r.structuredContent?.success === true;
  const describe = (r) => (r?.thrown ? String(r.thrown) : JSON.stringify(r).slice(0, 300));

  let r = await call("apply_patch", { patch: APPLIES });
  check(`${label}: apply_patch applies`, ok(r) && readFileSync(join(root, "a.txt"), "utf8") === "alpha\nBETA\n", describe(r));
  r = await call("apply_patch", { patch: REFUSED });
  check(
    `${label}: a refused apply_patch is isError with its reason, the file unchanged`,
    r.isError === true && r.structuredContent?.success === false && /a\.txt/.test(r.content?.[0]?.text ?? "") && readFileSync(join(root, "a.txt"), "utf8") === "alpha\nBETA\n",
    describe(r),
  );
  r = await call("workspace_write_patch", {
    files: [{ docPath: "b.txt", originalSha256: await sha256("one\ntwo\n"), changes: [{ operation: "replace", startLine: 2, endLine: 2, expectedOriginalLines: ["two"], newLines: ["TWO"] }] }],
  });
  check(`${label}: workspace_write_patch applies`, ok(r) && readFileSync(join(root, "b.txt"), "utf8") === "one\nTWO\n", describe(r));
  r = await call("workspace_create_file", { path: "new.txt", content: "made\n" });
  check(`${label}: workspace_create_file creates`, ok(r) && readFileSync(join(root, "new.txt"), "utf8") === "made\n", describe(r));
  r = await call("workspace_create_file", { path: "new.txt", content: "again\n" });
  check(`${label}: workspace_create_file refuses an existing file`, r.isError === true && readFileSync(join(root, "new.txt"), "utf8") === "made\n", describe(r));
  r = await call("workspace.read_file", { path: "a.txt", maxBytes: 5 });
  check(`${label}: workspace.read_file reads (maxBytes an integer)`, ok(r) && r.structuredContent.file?.content === "alpha", describe(r));
  r = await call("get_patch_change", { batchId: "batch-0123456789abcdef0123456789abcdef" });
  check(`${label}: get_patch_change without a store is a refusal`, r.isError === true && r.structuredContent?.success === false, describe(r));
  r = await call("read_file", { relativePath: "a.txt", start_line: 1, end_line: 1 });
  check(`${label}: read_file reads a window`, ok(r) && r.structuredContent.content === "alpha\n", describe(r));
  r = await call("grep_file", { pattern: "beta", limit: 5 });
  check(`${label}: grep_file searches`, ok(r), describe(r));
  r = await call("apply_change", { relativePath: "a.txt", searchContent: "alpha", replaceContent: "ALPHA" });
  check(`${label}: apply_change edits`, ok(r) && readFileSync(join(root, "a.txt"), "utf8") === "ALPHA\nBETA\n", describe(r));
  r = await call("call_chain", { method: "A.run", direction: "callees", depth: 2 });
  check(`${label}: call_chain follows a call`, ok(r), describe(r));
  r = await call("rm_rf", {});
  check(`${label}: an unknown tool is a -32602 error`, r.thrown?.code === -32602, describe(r));
}

async function overStdio() {
  const root = workspace();
  const transport = new StdioClientTransport({ command: binary, args: ["mcp", "--root", root], stderr: "ignore" });
  const client = new Client({ name: "patchspec-ci", version: "1" });
  await client.connect(transport);
  await exercise("stdio", client, root);
  await client.close();
}

/// `patchspec mcp --listen 127.0.0.1:0` on a fresh workspace: [child, base URL, root].
async function httpServer(extra = []) {
  const root = workspace();
  const child = spawn(binary, ["mcp", "--root", root, "--listen", "127.0.0.1:0", ...extra], { stdio: ["ignore", "ignore", "pipe"] });
  const first = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`patchspec mcp exited ${code}`)));
  });
  const url = first.replace("patchspec mcp: listening on ", "").trim();
  return [child, url, root];
}

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ci", version: "1" } } };

/// The JSON-RPC message of a response body (JSON, or an SSE event's data).
function message(text) {
  const data = text.split("\n").find((l) => l.startsWith("data:") && l.includes("{"));
  return JSON.parse(data ? data.slice(5) : text);
}

async function overHttp() {
  const [child, url, root] = await httpServer();
  try {
    const client = new Client({ name: "patchspec-ci", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    await exercise("http", client, root);
    const session = transport.sessionId;

    // Hardening, with plain fetch.
    let res = await fetch(url, { method: "POST", headers: { ...HEADERS, origin: "http://evil.example" }, body: JSON.stringify(INIT) });
    check("http: a foreign Origin is 403", res.status === 403, String(res.status));
    res = await fetch(url, {
      method: "POST",
      headers: { ...HEADERS, origin: "http://evil.example", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "workspace_create_file", arguments: { path: "evil.txt", content: "x" } } }),
    });
    let written = true;
    try {
      readFileSync(join(root, "evil.txt"));
    } catch {
      written = false;
    }
    check("http: a call with a foreign Origin is 403 and writes nothing", res.status === 403 && !written, String(res.status));
    res = await fetch(url, { method: "POST", headers: { ...HEADERS, origin: "http://localhost:5173" }, body: JSON.stringify(INIT) });
    check("http: a loopback Origin is served", res.status === 200, String(res.status));
    for (const path of ["/", "/foo", "/MCP", "/mcp/x"]) {
      res = await fetch(new URL(path, url), { method: "POST", headers: HEADERS, body: JSON.stringify(INIT) });
      check(`http: POST ${path} is 404`, res.status === 404, String(res.status));
    }
    res = await fetch(url, { method: "DELETE", headers: { "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-11-25" } });
    check("http: DELETE of an unknown session is 404", res.status === 404, String(res.status));
    res = await fetch(url, { method: "POST", headers: HEADERS, body: '{"jsonrpc":"2.0","id":41,"method":"initialize","params":{,}}' });
    let body = await res.text();
    check("http: a malformed body is 400 with a -32700 error and its id", res.status === 400 && message(body).id === 41 && message(body).error?.code === -32700, `${res.status} ${body}`);
    res = await fetch(url, { method: "POST", headers: HEADERS, body: '{"jsonrpc":"2.0","id":42,"method":"initialize","params":{"n":1e400}}' });
    body = await res.text();
    check("http: a body serde cannot type (1e400) is answered with its id", res.status === 400 && message(body).id === 42 && message(body).error?.code === -32602, `${res.status} ${body}`);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 43, method: "tools/call", params: { name: "workspace_create_file", arguments: { path: "big.txt", content: "a".repeat(LIMIT) } } });
    res = await fetch(url, { method: "POST", headers: { ...HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }, body: big });
    body = await res.text();
    check(
      "http: a body over 16 MiB is 413 with a -32600 error naming the limit",
      res.status === 413 && message(body).error?.code === -32600 && message(body).error.message.includes(String(LIMIT)),
      `${res.status} ${body.slice(0, 200)}`,
    );
    // The SDK ends its session with a DELETE: accepted once, then unknown.
    let ended = true;
    try {
      await transport.terminateSession();
    } catch (e) {
      ended = String(e);
    }
    check("http: the SDK's session DELETE is accepted", ended === true, String(ended));
    await client.close();
    res = await fetch(url, { method: "DELETE", headers: { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } });
    check("http: DELETE of an ended session is 404", res.status === 404, String(res.status));
  } finally {
    child.kill();
  }
}

/// Malformed messages with ids, raw on stdio: each answered exactly once.
async function everyIdAnswered() {
  const root = workspace();
  const child = spawn(binary, ["mcp", "--root", root], { stdio: ["pipe", "pipe", "ignore"] });
  const answers = new Map();
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    const id = JSON.stringify(JSON.parse(line).id);
    answers.set(id, (answers.get(id) ?? 0) + 1);
  });
  const kinds = [
    (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"apply_patch","arguments":{"x":${"[".repeat(200)}${"]".repeat(200)}}}}`,
    (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"apply_patch","arguments":{"n":1e400}}}`,
    (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"apply_patch","arguments":{"s":"\\ud800"}}}`,
    (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{,}}`,
    (id) => `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{"n":1e400}},"id":${id}}`,
    (id) => `{"id":${id},"method":5}`,
  ];
  const init = JSON.stringify(INIT);
  const ids = [];
  let text = init + "\n";
  for (let n = 0; n < 600; n++) {
    const id = 1000 + n;
    ids.push(JSON.stringify(id));
    text += kinds[n % kinds.length](id) + "\n";
  }
  const bytes = Buffer.from(text);
  // Invalid UTF-8 inside a string, with its id before it.
  const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"utf8","method":"ping","params":{"s":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')]);
  ids.push('"utf8"');
  child.stdin.write(Buffer.concat([bytes, bad]));
  const deadline = Date.now() + 30000;
  while (ids.some((id) => !answers.has(id)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  child.stdin.end();
  const missing = ids.filter((id) => !answers.has(id));
  const twice = ids.filter((id) => (answers.get(id) ?? 0) > 1);
  check(`stdio: ${ids.length} malformed messages with ids, each answered once`, missing.length === 0 && twice.length === 0, `${missing.length} unanswered, ${twice.length} twice`);
  child.kill();
}

/// The MCP Inspector's CLI (a generic client: it types each `--tool-arg`
/// from the tool's inputSchema): an integer and a boolean optional member
/// reach the server typed, and it prints nothing on stderr.
async function inspector() {
  const root = workspace();
  const cli = join(process.cwd(), "node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
  const run = (args) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [cli, binary, "mcp", "--root", root, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      child.on("exit", (code) => resolve({ code, out, err }));
    });
  let r = await run(["--method", "tools/call", "--tool-name", "workspace.read_file", "--tool-arg", "path=a.txt", "maxBytes=5"]);
  let result = r.code === 0 ? JSON.parse(r.out) : {};
  check("inspector: maxBytes=5 is sent as an integer", result.isError === false && result.structuredContent?.file?.content === "alpha" && r.err === "", `${r.code} ${r.out.slice(0, 200)} ${r.err.slice(0, 200)}`);
  r = await run(["--method", "tools/call", "--tool-name", "workspace_create_file", "--tool-arg", "path=a.txt", "content=x", "overwrite=true"]);
  result = r.code === 0 ? JSON.parse(r.out) : {};
  check("inspector: overwrite=true is sent as a boolean", result.isError === false && readFileSync(join(root, "a.txt"), "utf8") === "x" && r.err === "", `${r.code} ${r.out.slice(0, 200)} ${r.err.slice(0, 200)}`);
}

try {
  await inspector();
  await overStdio();
  await overHttp();
  await everyIdAnswered();
} catch (e) {
  check("the run completes", false, String(e?.stack ?? e));
}
console.log(`mcp-ts: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
