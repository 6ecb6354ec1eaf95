#!/usr/bin/env node
// Starts the `patchspec` binary of this platform's package (an
// optionalDependency, the esbuild/biome pattern: npm installs only the one
// whose `os` and `cpu` fit), with the same arguments, stdio and exit status.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

import { binaryPackage, PLATFORMS } from "../platforms.js";

const require = createRequire(import.meta.url);

function binaryPath() {
  const override = process.env.PATCHSPEC_BINARY;
  if (override) return override;
  const name = binaryPackage(process.platform, process.arch);
  if (name === undefined) {
    fail(
      `no prebuilt patchspec for ${process.platform}-${process.arch}; ` +
        `prebuilt: ${Object.keys(PLATFORMS).join(", ")}. ` +
        "Build it from source with `cargo install --locked --path conformance` in a clone, " +
        "then set PATCHSPEC_BINARY to its path.",
    );
  }
  try {
    return join(dirname(require.resolve(`${name}/package.json`)), "bin", "patchspec");
  } catch {
    fail(
      `the package ${name} (the binary for ${process.platform}-${process.arch}) is not installed; ` +
        "it is an optional dependency of patchspec: reinstall without --no-optional / --omit=optional.",
    );
  }
}

function fail(message) {
  process.stderr.write(`patchspec: ${message}\n`);
  process.exit(2);
}

const binary = binaryPath();
const child = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (child.error) fail(`cannot start ${binary}: ${child.error.message}`);
if (child.signal) process.kill(process.pid, child.signal);
process.exit(child.status ?? 1);
