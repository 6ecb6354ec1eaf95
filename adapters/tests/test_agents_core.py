"""adapters/agents-core/agents-core-cli.js against a stand-in SDK (a fake
node_modules/@openai/agents-core with the three files the CLI loads), so the
adapter's own logic is tested without npm: the SDK's private splitter loaded
from its file, operations in order with a failure not stopping the next,
create never over an existing file, moves, and the path checks (the policy's,
then symlinks). Needs node (skipped without it)."""

import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join(os.path.dirname(HERE), "agents-core", "agents-core-cli.js")

FAKE = {
    "package.json": '{"name": "@openai/agents-core", "version": "9.9.9"}',
    # applyDiff stand-in: create = the "+" lines; update = replace "-x" by "+y" lines, or throw.
    "dist/utils/applyDiff.js": r"""
exports.applyDiff = function (input, diff, mode) {
  const lines = diff.split('\n').filter((l) => l);
  if (mode === 'create') return lines.map((l) => l.slice(1) + '\n').join('');
  let out = input;
  for (const l of lines) {
    if (l.startsWith('-')) { if (!out.includes(l.slice(1))) throw new Error('Invalid Context: ' + l.slice(1)); out = out.replace(l.slice(1) + '\n', ''); }
    if (l.startsWith('+')) out += l.slice(1) + '\n';
  }
  return out;
};
""",
    # The splitter is module-private, as in the SDK: one op per "*** Op: path" line.
    "dist/sandbox/capabilities/filesystem.js": r"""
function parseApplyPatchInput(raw) {
  const lines = raw.split('\n').filter((l) => l);
  if (lines[0] !== '*** Begin Patch') return { ok: false, error: 'must start with *** Begin Patch' };
  const ops = [];
  for (const l of lines.slice(1, -1)) {
    const m = /^\*\*\* (Add|Update|Delete|Move) File: (\S+)(?: -> (\S+))?$/.exec(l);
    if (m) { ops.push({ type: { Add: 'create_file', Update: 'update_file', Delete: 'delete_file', Move: 'update_file' }[m[1]], path: m[2], diff: '', moveTo: m[3] }); continue; }
    ops[ops.length - 1].diff += l + '\n';
  }
  return { ok: true, operations: ops };
}
exports.filesystem = function () {};
""",
    "dist/sandbox/workspacePaths.js": r"""
const path = require('node:path');
class WorkspacePathPolicy {
  constructor({ root }) { this.root = root; }
  resolve(p) {
    const full = path.resolve(this.root, p);
    const rel = path.relative(this.root, full);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`Sandbox path "${p}" escapes the workspace root.`);
    return { path: full, workspaceRelativePath: rel };
  }
}
exports.WorkspacePathPolicy = WorkspacePathPolicy;
""",
}


@unittest.skipUnless(shutil.which("node"), "node is not on PATH")
class AgentsCoreCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.prefix = os.path.join(self.tmp.name, "prefix")
        for rel, text in FAKE.items():
            full = os.path.join(self.prefix, "node_modules", "@openai", "agents-core", rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        self.ws = os.path.join(self.tmp.name, "ws")
        os.makedirs(self.ws)
        self.outside = os.path.join(self.tmp.name, "outside")
        os.makedirs(self.outside)
        self.put("a.txt", "x\n")

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, rel, text):
        full = os.path.join(self.ws, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def get(self, rel):
        with open(os.path.join(self.ws, rel)) as f:
            return f.read()

    def run_cli(self, *ops):
        patch = "*** Begin Patch\n" + "".join(ops) + "*** End Patch\n"
        proc = subprocess.run(["node", CLI], input=patch.encode(), cwd=self.ws, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=dict(os.environ, AGENTS_CORE_PREFIX=self.prefix))
        return proc.returncode, proc.stdout.decode() + proc.stderr.decode()

    def test_the_version_comes_from_the_installed_package(self):
        out = subprocess.run(["node", CLI, "--version"], stdout=subprocess.PIPE,
                             env=dict(os.environ, AGENTS_CORE_PREFIX=self.prefix)).stdout.decode()
        self.assertEqual(out, "9.9.9\n")

    def test_operations_run_in_order_and_a_failure_does_not_stop_the_next(self):
        code, out = self.run_cli("*** Update File: a.txt\n-x\n+y\n", "*** Update File: a.txt\n-missing\n+z\n",
                                 "*** Add File: new/b.txt\n+b\n")
        self.assertEqual(code, 1)
        self.assertIn("Failed to apply patch: Invalid Context: missing", out)
        self.assertEqual(self.get("a.txt"), "y\n")
        self.assertEqual(self.get("new/b.txt"), "b\n", "the SDK goes on after a failed operation")

    def test_all_applied_is_exit_0_and_a_split_error_applies_nothing(self):
        self.assertEqual(self.run_cli("*** Update File: a.txt\n-x\n+y\n")[0], 0)
        proc = subprocess.run(["node", CLI], input=b"garbage\n", cwd=self.ws, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=dict(os.environ, AGENTS_CORE_PREFIX=self.prefix))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("must start with", proc.stderr.decode())

    def test_create_never_overwrites_and_delete_of_a_missing_file_fails(self):
        code, out = self.run_cli("*** Add File: a.txt\n+new\n")
        self.assertEqual((code, self.get("a.txt")), (1, "x\n"))
        self.assertIn("EEXIST", out)
        self.assertEqual(self.run_cli("*** Delete File: nope.txt\n")[0], 1)

    def test_a_move_writes_the_destination_and_unlinks_the_source(self):
        code, _ = self.run_cli("*** Move File: a.txt -> d/m.txt\n-x\n+y\n")
        self.assertEqual(code, 0)
        self.assertEqual(self.get("d/m.txt"), "y\n")
        self.assertFalse(os.path.exists(os.path.join(self.ws, "a.txt")))

    def test_escapes_are_refused_by_the_policy_and_through_symlinks(self):
        os.symlink(self.outside, os.path.join(self.ws, "link"))
        for target in ("../evil.txt", "/etc/evil.txt", "link/evil.txt"):
            code, out = self.run_cli("*** Add File: %s\n+x\n" % target)
            self.assertEqual(code, 1, target)
            self.assertIn("Failed to apply patch", out)
        self.assertEqual(os.listdir(self.outside), [])


if __name__ == "__main__":
    unittest.main()
