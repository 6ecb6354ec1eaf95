#!/usr/bin/env node
// @openai/agents-core's apply_patch as an envelope CLI, for
// adapters/envelope-cli/adapter.py (which runs it in the sandbox).
//
// Reads the envelope on stdin and does, in the current directory (the
// workspace), what the SDK's sandbox `apply_patch` tool does with a freeform
// patch on its local Unix sandbox (README.md says exactly what is the SDK's
// code and what is copied from it):
//   1. split it with the SDK's own parser (parseApplyPatchInput, module-private
//      in dist/sandbox/capabilities/filesystem.js: loaded from that file);
//   2. for each operation in order, as the SDK's applyPatchOperations does:
//      a failure is reported ("Failed to apply patch: ...") and the next
//      operation still runs;
//   3. each operation as UnixLocalSandboxSession.applyPatch and its file
//      worker do it: the path through the SDK's WorkspacePathPolicy (relative
//      to the root, no escape) and then resolved through existing symlinks
//      (refused if that leaves the workspace); create_file = applyDiff('',
//      diff, 'create') written with O_EXCL (never over an existing file),
//      parents created; update_file = applyDiff(text, diff) over the file
//      read as UTF-8 (lossy, as Buffer#toString), written back, or to moveTo
//      (parents created, an existing destination replaced) and the source
//      unlinked; delete_file = unlink.
// Exit 0 when every operation applied, 1 otherwise (the SDK itself never
// fails the tool call: it returns the messages to the model).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

function sdkDir() {
  // The package's exports map hides package.json and dist/: go by the directory.
  const dir = path.join(process.env.AGENTS_CORE_PREFIX || __dirname, 'node_modules', '@openai', 'agents-core');
  if (!fs.existsSync(path.join(dir, 'package.json'))) throw new Error(`@openai/agents-core is not installed in ${dir}`);
  return dir;
}

// A module-private function of an SDK file: the file compiled again with one
// export appended (the same source). Its requires are lazy: a module is loaded
// when the code first touches it, so that the splitter does not load the
// whole SDK it never uses (the file's requires cost 0.35 s of CPU per case;
// lazily, only ./base.js is loaded).
function privateFunction(file, name) {
  const source = fs.readFileSync(file, 'utf8');
  const m = new Module(file, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(path.dirname(file));
  const load = m.require.bind(m);
  m.require = (id) => {
    let real;
    const get = () => (real === undefined ? (real = load(id)) : real);
    return new Proxy({}, {
      get: (_, key) => get()[key],
      has: (_, key) => key in get(),
      ownKeys: () => Reflect.ownKeys(get()),
      getOwnPropertyDescriptor: (_, key) => {
        const d = Object.getOwnPropertyDescriptor(get(), key);
        return d && { ...d, configurable: true };
      },
    });
  };
  m._compile(`${source}\nmodule.exports.__patchspec_${name} = ${name};\n`, file);
  const fn = m.exports[`__patchspec_${name}`];
  if (typeof fn !== 'function') throw new Error(`${file} has no function ${name}`);
  return fn;
}

function loadSdk() {
  const dir = sdkDir();
  return {
    version: JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version,
    applyDiff: require(path.join(dir, 'dist/utils/applyDiff.js')).applyDiff,
    parseApplyPatchInput: privateFunction(path.join(dir, 'dist/sandbox/capabilities/filesystem.js'), 'parseApplyPatchInput'),
    WorkspacePathPolicy: require(path.join(dir, 'dist/sandbox/workspacePaths.js')).WorkspacePathPolicy,
  };
}

// The host path for `p`, or an Error: the SDK's policy, then the worker's
// check that existing symlinks do not lead out of the workspace.
function resolvePath(sdk, root, p) {
  const { path: resolved, workspaceRelativePath } = new sdk.WorkspacePathPolicy({ root }).resolve(p, { forWrite: true });
  if (typeof workspaceRelativePath !== 'string') throw new Error(`Sandbox path "${p}" escapes the workspace root.`);
  let existing = resolved;
  while (true) {
    try { fs.lstatSync(existing); break; } catch (e) {
      if (e.code !== 'ENOENT' && e.code !== 'ENOTDIR') throw e;
      const parent = path.dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  const real = path.join(fs.realpathSync(existing), path.relative(existing, resolved));
  const realRoot = fs.realpathSync(root);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new Error(`Sandbox path "${p}" resolves outside the workspace (through a symlink).`);
  }
  return real;
}

function writeNew(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o666);
  try { fs.writeSync(fd, Buffer.from(text, 'utf8')); } finally { fs.closeSync(fd); }
}

function applyOperation(sdk, root, op) {
  const file = resolvePath(sdk, root, op.path);
  if (op.type === 'create_file') {
    writeNew(file, sdk.applyDiff('', op.diff, 'create'));
  } else if (op.type === 'update_file') {
    const current = fs.readFileSync(file).toString('utf8');
    const next = sdk.applyDiff(current, op.diff);
    const destination = op.moveTo ? resolvePath(sdk, root, op.moveTo) : file;
    if (destination === file) {
      fs.writeFileSync(file, next, 'utf8');
    } else {
      fs.mkdirSync(path.dirname(destination), { recursive: true });
      fs.writeFileSync(destination, next, 'utf8');
      fs.unlinkSync(file);
    }
  } else if (op.type === 'delete_file') {
    fs.unlinkSync(file);
  } else {
    throw new Error('Unsupported apply_patch operation.');
  }
}

// The SDK's applyPatchOperations: every operation runs; the outputs are joined.
function run(sdk, root, input) {
  const parsed = sdk.parseApplyPatchInput(input);
  if (!parsed.ok) return { ok: false, output: parsed.error };
  const outputs = [];
  let failed = 0;
  for (const op of parsed.operations) {
    try {
      applyOperation(sdk, root, op);
      outputs.push(`${op.type} ${op.path}${op.moveTo ? ` -> ${op.moveTo}` : ''}: applied`);
    } catch (e) {
      failed += 1;
      outputs.push(`Failed to apply patch: ${(e && e.message) || String(e)}`);
    }
  }
  return { ok: failed === 0, output: outputs.join('\n') };
}

function main() {
  const sdk = loadSdk();
  if (process.argv[2] === '--version') { process.stdout.write(`${sdk.version}\n`); return 0; }
  const input = fs.readFileSync(0, 'utf8');
  const { ok, output } = run(sdk, process.cwd(), input);
  (ok ? process.stdout : process.stderr).write(`${output}\n`);
  return ok ? 0 : 1;
}

if (require.main === module) process.exitCode = main();
module.exports = { run, resolvePath, applyOperation, privateFunction };
