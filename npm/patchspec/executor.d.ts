// Types of patchspec/executor (executor.js). Checked by compiling
// examples/typescript against them (scripts/npm-check.sh).

/** The call's `session` object (docs/protocol.md, TOOL_CALL). */
export interface Session {
  /** ActiveFiles: `{docPath: content}`. */
  activeFiles?: Record<string, string>;
  /** Per-call values of configurable limits, e.g. `{createFileMaxBytes: 64}`. */
  limits?: Record<string, number>;
  /** Keep a patch store for this workspace across calls. */
  keepStore?: boolean;
  [member: string]: unknown;
}

/** A tool's result document (docs/tools.md); `success` sets the TOOL_RESULT's. */
export interface ResultDocument {
  success: boolean;
  [member: string]: unknown;
}

/** One tool: the call's params, the workspace's absolute path, the session. */
export type Tool = (
  params: any,
  workspaceRoot: string,
  session: Session,
) => ResultDocument | Promise<ResultDocument>;

/** Wire name (`apply_patch`, `workspace.read_file`, ...) to its function. */
export type Tools = Record<string, Tool>;

export interface ServeOptions {
  /** implementation.name in the HELLO. */
  name?: string;
  /** implementation.version in the HELLO. */
  version?: string;
  /** implementation.language in the HELLO (default "TypeScript"). */
  language?: string;
  /** Case tags this executor does not support: those cases are skipped. */
  unsupportedTags?: readonly string[];
  /** Globs of implementation-private paths, left out of the tree comparison. */
  privatePaths?: readonly string[];
  /** Lines to read instead of stdin (tests). */
  input?: AsyncIterable<string> | Iterable<string>;
  /** Where protocol lines go instead of stdout (tests). */
  output?: (line: string) => void;
}

export interface HelloMessage {
  type: "HELLO";
  protocolVersion: 1;
  implementation: { name: string; version: string; language: string };
  tools: string[];
  unsupportedTags: string[];
  privatePaths: string[];
}

export interface ToolResultMessage {
  type: "TOOL_RESULT";
  data: {
    toolCallId: string;
    success: boolean;
    /** The result document, JSON-encoded. */
    result: string;
    error?: string;
    executionTime: number;
  };
}

export const PROTOCOL_VERSION: 1;
export const USAGE_EXIT: 2;

/** The HELLO declaring exactly `tools`. */
export function hello(tools: Tools, options?: ServeOptions): HelloMessage;

/** The answer to one protocol line; null for BYE; rejects for a line that is no message. */
export function answer(
  line: string,
  tools: Tools,
  hello: HelloMessage,
): Promise<HelloMessage | ToolResultMessage | null>;

/** Serve `tools` until end of input or BYE; resolves to the exit status (0, or 2). */
export function serve(tools: Tools, options?: ServeOptions): Promise<number>;
