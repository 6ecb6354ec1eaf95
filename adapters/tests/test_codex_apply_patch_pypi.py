"""adapters/codex-apply-patch-pypi: the in-memory host (read, write back,
path check) with a stand-in for the library, and the on-disk CLI shim's exit
statuses with a fake `codex_apply_patch` module. Standard library only."""

import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(os.path.dirname(HERE), "codex-apply-patch-pypi")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import protocol  # noqa: E402

spec = importlib.util.spec_from_file_location("cap_memory_adapter", os.path.join(DIR, "adapter.py"))
memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(memory)


def result(files, added=(), modified=(), deleted=()):
    return types.SimpleNamespace(files=files, added=list(added), modified=list(modified), deleted=list(deleted))


class InMemoryHost(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        os.makedirs(os.path.join(self.root, "src"))
        self.put("a.txt", b"a\n")
        self.put("src/b.txt", b"b\n")
        self.put("latin1.txt", b"caf\xe9\n")
        os.symlink("a.txt", os.path.join(self.root, "link.txt"))

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, rel, data):
        with open(os.path.join(self.root, rel), "wb") as f:
            f.write(data)

    def get(self, rel):
        with open(os.path.join(self.root, rel), "rb") as f:
            return f.read()

    def test_the_library_sees_the_utf8_regular_files_by_relative_path(self):
        self.assertEqual(memory.read_workspace(self.root), {"a.txt": "a\n", "src/b.txt": "b\n"})

    def test_the_answer_is_carried_out_after_the_library_answered(self):
        seen = []

        def lib(patch, files):
            seen.append((patch, dict(files)))
            # As 0.4.0 answers: only the files the patch wrote, plus the deletions.
            return result({"a.txt": "A\n", "new/c.txt": "c\n"}, added=["new/c.txt"], modified=["a.txt"],
                          deleted=["src/b.txt"])
        self.put("keep.txt", b"untouched\n")
        doc = memory.apply(lib, self.root, "PATCH")
        self.assertEqual(seen, [("PATCH", {"a.txt": "a\n", "keep.txt": "untouched\n", "src/b.txt": "b\n"})])
        self.assertEqual(self.get("a.txt"), b"A\n")
        self.assertEqual(self.get("new/c.txt"), b"c\n")
        self.assertFalse(os.path.exists(os.path.join(self.root, "src", "b.txt")))
        self.assertEqual(self.get("keep.txt"), b"untouched\n", "a file the result does not name stays")
        self.assertEqual(self.get("latin1.txt"), b"caf\xe9\n", "files the library never saw stay")
        self.assertEqual(doc["written"], [{"operation": "write", "path": "a.txt"},
                                          {"operation": "write", "path": "new/c.txt"},
                                          {"operation": "remove", "path": "src/b.txt"}])

    def test_a_library_error_is_a_refusal_that_changes_nothing(self):
        def lib(patch, files):
            raise RuntimeError("")
        with self.assertRaises(protocol.Refusal) as r:
            memory.apply(lib, self.root, "P")
        self.assertEqual(r.exception.source, "implementation")
        self.assertIn("(no message)", r.exception.message)
        self.assertEqual(self.get("a.txt"), b"a\n")

    def test_a_panic_is_a_crash(self):
        PanicException = type("PanicException", (BaseException,), {})

        def lib(patch, files):
            raise PanicException("index out of bounds")
        with self.assertRaises(protocol.Crash):
            memory.apply(lib, self.root, "P")

    def test_a_result_path_outside_the_workspace_is_refused_before_anything_is_written(self):
        for bad, deleted in (("/etc/hosts", []), ("../evil.txt", []), ("a/../../x", []), ("C:x.txt", []),
                             ("ok.txt", ["../sentinel"])):
            def lib(patch, files, bad=bad, deleted=deleted):
                return result({"a.txt": "changed\n", bad: "x\n"}, deleted=deleted)
            with self.assertRaises(protocol.Refusal, msg=bad) as r:
                memory.apply(lib, self.root, "P")
            self.assertEqual(r.exception.source, "adapter")
            self.assertEqual(self.get("a.txt"), b"a\n")


class DiskShim(unittest.TestCase):
    """disk_cli.py with a fake codex_apply_patch first on sys.path."""

    def run_shim(self, body):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "codex_apply_patch.py"), "w") as f:
                f.write("def apply_patch(patch):\n" + "".join("    " + line + "\n" for line in body.split("\n")))
            env = dict(os.environ, PYTHONPATH=tmp)
            proc = subprocess.run([sys.executable, os.path.join(DIR, "disk_cli.py")], input=b"*** Begin Patch\n",
                                  cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    def test_the_success_summary_is_exit_0(self):
        code, out, _ = self.run_shim('return "Success. Updated the following files:\\nM a.txt\\n"')
        self.assertEqual((code, out), (0, "Success. Updated the following files:\nM a.txt\n"))

    def test_an_empty_return_is_a_refusal_because_the_library_raises_nothing(self):
        code, _, err = self.run_shim('return ""')
        self.assertEqual(code, 1)
        self.assertIn("nothing applied", err)

    def test_an_exception_is_a_refusal_with_its_message(self):
        code, _, err = self.run_shim('raise RuntimeError("Invalid patch: bad")')
        self.assertEqual(code, 1)
        self.assertIn("RuntimeError: Invalid patch: bad", err)

    def test_a_panic_kills_the_shim_so_the_adapter_reports_a_crash(self):
        code, _, err = self.run_shim('raise type("PanicException", (BaseException,), {})("boom")')
        self.assertEqual(code, -6)
        self.assertIn("panic: boom", err)


if __name__ == "__main__":
    unittest.main()
