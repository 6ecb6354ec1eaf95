// Write a patchspec executor in JavaScript or TypeScript: one function per
// tool, then `serve`. Types: executor.d.ts. The protocol: docs/protocol.md.
//
//   import { serve } from "patchspec/executor";
//   serve({ "workspace.read_file": (params, workspaceRoot, session) => ({ success: true, ... }) },
//         { name: "my-tools", version: "1.0.0" });
//
// The kit reads one JSON message per line until end of input or BYE (so it
// speaks oneshot and session alike), answers HELLO with a HELLO declaring
// exactly the tools given, and each TOOL_CALL with the TOOL_RESULT of the
// tool's function (which may be async). A thrown error becomes the failure
// document of a `command_failed` error (reason `internal_error`), never a
// crash. From the moment serve() starts, stdout is the protocol's alone:
// console.log and process.stdout.write go to stderr. (A child process given
// `stdio: "inherit"` still writes to the real stdout: give it ["pipe", 2, 2].)
//
// Numbers: JSON.parse alone cannot tell `3.0` from `3`, and the reference
// engine refuses `3.0` where it wants an integer. Where the runtime shows
// the reviver a number's source text (Node 21+; Node 20 with
// --harmony-json-parse-with-source), a number written with a fraction or an
// exponent whose value is whole (`3.0`, `1e2`) arrives as a Number object:
// arithmetic works, while `typeof x === "number"` and Number.isInteger(x)
// are false, so a tool that checks for an integer refuses it as the engine does.
//
// Cost: one message is read, parsed and answered at a time.
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";

export const PROTOCOL_VERSION = 1;
/** Exit status after a line that is not a protocol message. */
export const USAGE_EXIT = 2;

function commandFailed(message) {
  return { success: false, error: { kind: "command_failed", reason: "internal_error", message } };
}

/** The one-line message of a failure document, whatever its tool's shape. */
function errorMessage(document) {
  const { error, errors, errorCode } = document;
  if (error && typeof error === "object" && typeof error.message === "string") return error.message;
  if (typeof error === "string") return error;
  if (Array.isArray(errors) && typeof errors[0] === "string") return errors[0];
  return typeof errorCode === "string" ? errorCode : "the tool failed";
}

async function toolResult(message, tools, started) {
  const tool = message.toolName;
  const fn = Object.hasOwn(tools, tool) ? tools[tool] : undefined;
  let document;
  if (typeof fn !== "function") {
    document = commandFailed(`this executor does not implement ${JSON.stringify(tool)}`);
  } else {
    try {
      document = await fn(message.params, message.workspaceRoot, message.session ?? {});
      if (document === null || typeof document !== "object" || Array.isArray(document)) {
        throw new TypeError(`${tool} returned ${JSON.stringify(document)}, not a result document (object)`);
      }
    } catch (e) {
      const why = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      document = commandFailed(`${tool}: ${why}`);
    }
  }
  const success = document.success === true;
  const data = {
    toolCallId: message.toolCallId,
    success,
    result: JSON.stringify(document),
    executionTime: Math.round(performance.now() - started),
  };
  if (!success) data.error = errorMessage(document);
  return { type: "TOOL_RESULT", data };
}

/** JSON.parse keeping "written as a fraction" on whole numbers (see the top). */
function parse(line) {
  return JSON.parse(line, (_key, value, context) => {
    const source = context?.source;
    if (typeof value === "number" && Number.isInteger(value) && typeof source === "string" && /[.eE]/.test(source)) {
      return new Number(value);
    }
    return value;
  });
}

/**
 * The answer to one protocol line: a message, null for BYE; throws an
 * Error for a line that is not a HELLO, TOOL_CALL or BYE.
 */
export async function answer(line, tools, hello) {
  const started = performance.now();
  const message = parse(line);
  const kind = message !== null && typeof message === "object" ? message.type : undefined;
  if (kind === "HELLO") return hello;
  if (kind === "BYE") return null;
  if (kind === "TOOL_CALL") {
    if (typeof message.toolCallId !== "string") throw new Error("TOOL_CALL without a string toolCallId");
    return toolResult(message, tools, started);
  }
  throw new Error(`not a HELLO, TOOL_CALL or BYE: type ${JSON.stringify(kind)}`);
}

/** The HELLO declaring exactly `tools`. */
export function hello(tools, options = {}) {
  return {
    type: "HELLO",
    protocolVersion: PROTOCOL_VERSION,
    implementation: {
      name: options.name ?? "patchspec-node-executor",
      version: options.version ?? "0",
      language: options.language ?? "TypeScript",
    },
    tools: Object.keys(tools),
    unsupportedTags: [...(options.unsupportedTags ?? [])],
    privatePaths: [...(options.privatePaths ?? [])],
  };
}

/** stdout for the protocol alone: what else writes to it goes to stderr. */
function takeStdout() {
  process.stdout.write = process.stderr.write.bind(process.stderr);
  return (text) => {
    let buffer = Buffer.from(text);
    while (buffer.length > 0) {
      try {
        buffer = buffer.subarray(writeSync(1, buffer));
      } catch (e) {
        if (e.code !== "EAGAIN") throw e;
      }
    }
  };
}

/**
 * Serve `tools` ({wire name: function}) until end of input or BYE. With no
 * `input`/`output` it reads stdin, writes stdout and sets process.exitCode;
 * it always resolves to the exit status (0, or 2 after a line it cannot answer).
 */
export async function serve(tools, options = {}) {
  if (Object.keys(tools).length === 0) {
    throw new Error("serve() needs at least one tool: the HELLO declares exactly these");
  }
  const standalone = options.input === undefined && options.output === undefined;
  const input = options.input ?? createInterface({ input: process.stdin, crlfDelay: Infinity });
  const output = options.output ?? takeStdout();
  const greeting = hello(tools, options);
  let status = 0;
  for await (const line of input) {
    if (line.trim() === "") continue;
    let reply;
    try {
      reply = await answer(line, tools, greeting);
    } catch (e) {
      process.stderr.write(`patchspec/executor: cannot answer this line: ${e.message}\n`);
      status = USAGE_EXIT;
      break;
    }
    if (reply === null) break;
    output(`${JSON.stringify(reply)}\n`);
  }
  if (standalone) {
    input.close();
    process.exitCode = status;
  }
  return status;
}
