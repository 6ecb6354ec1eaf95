// Cline's apply_patch executor as an envelope CLI, for
// adapters/envelope-cli/adapter.py (which runs it in the sandbox).
//
// Reads the envelope on stdin and hands it, unchanged, to the executor that
// @cline/core exports for its agents' apply_patch tool:
// `createApplyPatchExecutor()` (default options: UTF-8, restrictToCwd true),
// called as the SDK's tool runtime calls it, `executor({input}, cwd, context)`
// with cwd = the current directory (the workspace). Everything after that is
// the SDK's: parsing (optional sentinels, shell-wrapper stripping), fuzzy
// matching, and the file writes themselves.
// Exit 0 with the executor's answer on stdout when it resolved; exit 1 with
// its message on stderr when it threw (the SDK hands that message to the
// model as the tool's error).
//
// Loading the SDK is most of a call's cost (it imports its whole agent
// runtime), so the V8 code it compiles is cached in COMPILE_CACHE, filled
// by install.sh: only when that folder exists, because Node writes a cache
// entry for every module not cached yet, and a write there during a case
// would be a write outside the case directory (install.sh checks that a
// call on the warm cache writes nothing).
import fs from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const COMPILE_CACHE = path.join(here, 'node_modules', '.compile-cache');
if (fs.existsSync(COMPILE_CACHE)) {
  module.enableCompileCache(COMPILE_CACHE);
}

async function main() {
  if (process.argv[2] === '--version') {
    // The package's exports map hides package.json: go by the directory.
    const pkg = path.join(here, 'node_modules', '@cline', 'core', 'package.json');
    process.stdout.write(`${JSON.parse(fs.readFileSync(pkg, 'utf8')).version}\n`);
    return 0;
  }
  const { createApplyPatchExecutor } = await import('@cline/core');
  const input = fs.readFileSync(0, 'utf8');
  const executor = createApplyPatchExecutor();
  try {
    const output = await executor({ input }, process.cwd(), {});
    process.stdout.write(`${String(output)}\n`);
    return 0;
  } catch (e) {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    process.stderr.write(`${message}\n`);
    return 1;
  }
}

process.exitCode = await main();
