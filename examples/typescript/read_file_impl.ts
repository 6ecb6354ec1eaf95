// A small correct `workspace.read_file` (docs/tools.md), for the kit's examples.
// Cost: one walk of the path's segments (at most 40 symlinks followed) and one read.
import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";

import type { ResultDocument, Session } from "patchspec/executor";

const MAX_LINKS = 40;

const fail = (errorCode: string, message: string): ResultDocument => ({ success: false, errorCode, errors: [message] });

const segments = (path: string): string[] => path.split("/").filter((s) => s !== "" && s !== ".");

/** The file's absolute path, or undefined when the path leaves the workspace. */
function resolve(root: string, path: string): string | undefined {
  if (path.startsWith("/") || path.includes("\\") || path.includes("\0") || path[1] === ":") return undefined;
  const pending = segments(path);
  const done: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === "..") {
      if (done.pop() === undefined) return undefined;
      continue;
    }
    const here = join(root, ...done, segment);
    let isLink = false;
    try {
      isLink = lstatSync(here).isSymbolicLink();
    } catch {
      // nothing there: NOT_FOUND when read
    }
    if (isLink) {
      const target = readlinkSync(here);
      links += 1;
      if (links > MAX_LINKS || target.startsWith("/")) return undefined;
      pending.unshift(...segments(target));
      continue;
    }
    done.push(segment);
  }
  return join(root, ...done);
}

const decoder = new TextDecoder("utf-8", { fatal: true });
function isUtf8(bytes: Uint8Array): boolean {
  try {
    decoder.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** At most maxBytes of data; a UTF-8 character the cut falls inside is left out whole. */
function cut(data: Buffer, maxBytes: number | undefined): [Buffer, boolean] {
  if (maxBytes === undefined || maxBytes >= data.length) return [data, false];
  let part = data.subarray(0, maxBytes);
  if (!isUtf8(data)) return [part, true]; // not UTF-8: cut anywhere
  while (part.length > 0 && !isUtf8(part)) part = part.subarray(0, part.length - 1);
  return [part, true];
}

export function readFile(params: unknown, workspaceRoot: string, session: Session): ResultDocument {
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    return fail("INVALID_ARGUMENT", "params must be an object.");
  }
  const { path, maxBytes } = params as { path?: unknown; maxBytes?: unknown };
  if (typeof path !== "string" || path.trim() === "") return fail("INVALID_ARGUMENT", "path must be a non-empty string.");
  if (maxBytes != null && !(typeof maxBytes === "number" && Number.isInteger(maxBytes) && maxBytes >= 1)) {
    return fail("INVALID_ARGUMENT", "maxBytes must be a positive integer.");
  }
  if (Object.hasOwn(session.activeFiles ?? {}, path)) {
    return fail("ALREADY_IN_CONTEXT", `File '${path}' is already present in activeFiles for this session; reuse that content.`);
  }
  const full = resolve(workspaceRoot, path);
  if (full === undefined) return fail("INVALID_ARGUMENT", `Path '${path}' leaves the workspace.`);
  let data: Buffer;
  try {
    if (!statSync(full).isFile()) throw new Error("not a regular file");
    data = readFileSync(full);
  } catch {
    return fail("NOT_FOUND", `File '${path}' is not available in activeFiles or the workspace. Ask the user to upload it if needed.`);
  }
  const [part, isTruncated] = cut(data, maxBytes ?? undefined);
  const file: Record<string, unknown> = {
    path,
    sizeBytes: data.length,
    content: part.toString("utf8"),
    isTruncated,
    sha256: createHash("sha256").update(data).digest("hex"),
  };
  if (!isUtf8(part)) file.encoding = "utf-8-lossy";
  return { success: true, file };
}
