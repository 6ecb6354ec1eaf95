// The TypeScript executor kit: node --test npm/patchspec/test/
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { serve } from "../executor.js";

const HELLO = { type: "HELLO", protocolVersion: 1, runner: { name: "patchspec", version: "0.1.0" } };

function call(tool, params, toolCallId = "c#1", session) {
  return { type: "TOOL_CALL", toolCallId, toolName: tool, params, workspaceRoot: "/ws", ...(session && { session }) };
}

async function run(tools, messages, options = {}) {
  const lines = [];
  const status = await serve(tools, {
    ...options,
    input: messages.map((m) => (typeof m === "string" ? m : JSON.stringify(m))),
    output: (line) => lines.push(line),
  });
  return { status, answers: lines.map((line) => JSON.parse(line)) };
}

const documentOf = (answer) => JSON.parse(answer.data.result);
const echo = (params, workspaceRoot) => ({ success: true, params, root: workspaceRoot });

test("HELLO declares exactly the tools given", async () => {
  const { status, answers } = await run({ "workspace.read_file": echo, apply_patch: echo }, [HELLO], {
    name: "mine",
    version: "2.0",
    unsupportedTags: ["symlink"],
    privatePaths: [".trash"],
  });
  assert.equal(status, 0);
  assert.deepEqual(answers, [
    {
      type: "HELLO",
      protocolVersion: 1,
      implementation: { name: "mine", version: "2.0", language: "TypeScript" },
      tools: ["workspace.read_file", "apply_patch"],
      unsupportedTags: ["symlink"],
      privatePaths: [".trash"],
    },
  ]);
});

test("no tools is refused before serving", async () => {
  await assert.rejects(serve({}, { input: [], output: () => {} }), /at least one tool/);
});

test("session: each call answered in order until BYE", async () => {
  const { status, answers } = await run({ t: echo }, [
    HELLO,
    call("t", { n: 1 }, "a#1"),
    call("t", { n: 2 }, "b#1"),
    { type: "BYE" },
    call("t", { n: 3 }, "after-bye"),
  ]);
  assert.equal(status, 0);
  assert.deepEqual(answers.map((a) => a.type), ["HELLO", "TOOL_RESULT", "TOOL_RESULT"]);
  assert.deepEqual(answers.slice(1).map((a) => a.data.toolCallId), ["a#1", "b#1"]);
  assert.equal(typeof answers[2].data.result, "string", "the document travels JSON-encoded");
  assert.deepEqual(documentOf(answers[2]), { success: true, params: { n: 2 }, root: "/ws" });
});

test("oneshot: one message, then end of input", async () => {
  const { status, answers } = await run({ t: echo }, [call("t", {})]);
  assert.equal(status, 0);
  assert.equal(answers.length, 1);
  assert.equal(answers[0].data.success, true);
});

test("an async tool gets the session", async () => {
  const active = async (params, root, session) => ({ success: true, active: Object.keys(session.activeFiles) });
  const { answers } = await run({ t: active }, [call("t", {}, "c#1", { activeFiles: { "a.txt": "x" } })]);
  assert.deepEqual(documentOf(answers[0]).active, ["a.txt"]);
});

test("a failure document sets success false and the error line", async () => {
  const refuse = () => ({ success: false, errorCode: "NOT_FOUND", errors: ["File 'x' is missing."] });
  const { answers } = await run({ t: refuse }, [call("t", {})]);
  assert.equal(answers[0].data.success, false);
  assert.equal(answers[0].data.error, "File 'x' is missing.");
});

test("a thrown error is a command_failed result and the executor goes on", async () => {
  const boom = () => {
    throw new RangeError("path");
  };
  const { status, answers } = await run({ t: boom }, [call("t", {}), call("t", {}, "c#2")]);
  assert.equal(status, 0);
  const doc = documentOf(answers[0]);
  assert.equal(doc.success, false);
  assert.equal(doc.error.kind, "command_failed");
  assert.equal(doc.error.reason, "internal_error");
  assert.match(doc.error.message, /RangeError: path/);
  assert.equal(answers[1].data.toolCallId, "c#2");
});

test("a rejected promise and a non-object result are command_failed too", async () => {
  const { answers } = await run({ rejects: async () => Promise.reject(new Error("no")), text: () => "done" }, [
    call("rejects", {}),
    call("text", {}, "c#2"),
  ]);
  assert.deepEqual(answers.map((a) => documentOf(a).error.kind), ["command_failed", "command_failed"]);
});

test("an undeclared tool, even an inherited property name, is command_failed", async () => {
  const { answers } = await run({ t: echo }, [call("other", {}), call("toString", {}, "c#2")]);
  for (const answer of answers) assert.equal(documentOf(answer).error.kind, "command_failed");
  assert.match(documentOf(answers[0]).error.message, /"other"/);
});

test("a line that is no message stops with status 2 and answers nothing more", async () => {
  const { status, answers } = await run({ t: echo }, ["not json", HELLO]);
  assert.equal(status, 2);
  assert.deepEqual(answers, []);
  const noId = call("t", {});
  delete noId.toolCallId;
  assert.equal((await run({ t: echo }, [noId])).status, 2);
});

test("console.log in a tool never reaches the protocol", () => {
  const kit = fileURLToPath(new URL("../executor.js", import.meta.url));
  const program = `
    import { serve } from ${JSON.stringify(kit)};
    const noisy = () => { console.log("a log"); process.stdout.write("a write\\n"); return { success: true }; };
    serve({ t: noisy });
  `;
  const input = `${JSON.stringify(HELLO)}\n${JSON.stringify(call("t", {}))}\n`;
  const done = spawnSync(process.execPath, ["--input-type=module", "-e", program], { input, encoding: "utf8" });
  assert.equal(done.status, 0, done.stderr);
  assert.deepEqual(done.stdout.trim().split("\n").map((line) => JSON.parse(line).type), ["HELLO", "TOOL_RESULT"]);
  assert.match(done.stderr, /a log/);
  assert.match(done.stderr, /a write/);
});

test("a whole number written as a fraction is no integer, where the runtime shows its source", async (t) => {
  const sourceShown = JSON.parse("1", (_k, v, context) => (context?.source === undefined ? v : "shown")) === "shown";
  if (!sourceShown) {
    t.skip("this Node shows no source text to JSON.parse revivers (Node 21+, or --harmony-json-parse-with-source)");
    return;
  }
  const kinds = (params) => ({ success: true, kinds: Object.values(params).map((n) => Number.isInteger(n)) });
  const line = '{"type":"TOOL_CALL","toolCallId":"c#1","toolName":"t","params":{"a":3,"b":3.0,"c":1e2,"d":2.5},"workspaceRoot":"/ws"}';
  const { answers } = await run({ t: kinds }, [line]);
  assert.deepEqual(documentOf(answers[0]).kinds, [true, false, false, false]);
});
