// The bin launcher: it resolves this platform's package, or says why not.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { binaryPackage, PLATFORMS } from "../platforms.js";

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const launcher = fileURLToPath(new URL("../bin/patchspec.js", import.meta.url));

test("every platform package is an optionalDependency of the same version, and back", () => {
  assert.deepEqual(Object.values(PLATFORMS).sort(), Object.keys(manifest.optionalDependencies).sort());
  for (const version of Object.values(manifest.optionalDependencies)) assert.equal(version, manifest.version);
});

test("platforms map to their package; others to none", () => {
  assert.equal(binaryPackage("linux", "x64"), "patchspec-linux-x64");
  assert.equal(binaryPackage("linux", "arm64"), undefined);
  assert.equal(binaryPackage("win32", "x64"), undefined);
});

test("PATCHSPEC_BINARY is started with the arguments, and its status returned", () => {
  const done = spawnSync(process.execPath, [launcher, "-c", "exit 7"], {
    env: { ...process.env, PATCHSPEC_BINARY: "/bin/sh" },
  });
  assert.equal(done.status, 7);
});

test("a missing platform package is a clear error, not a stack trace", () => {
  // From a copy of this package alone (no node_modules), the optional package cannot resolve.
  const done = spawnSync(process.execPath, [launcher, "--version"], {
    env: { ...process.env, PATCHSPEC_BINARY: "" },
    encoding: "utf8",
  });
  if (binaryPackage(process.platform, process.arch) === undefined) {
    assert.match(done.stderr, /no prebuilt patchspec for/);
  } else {
    assert.match(done.stderr, /is not installed; it is an optional dependency/);
  }
  assert.equal(done.status, 2);
  assert.doesNotMatch(done.stderr, /at .*\.js:\d+/);
});
