"""The logic of the cline, aider and zenpatch adapters with stand-ins for
the libraries (no third-party install): aider_cli.py loads patch_coder.py
with its two aider imports stubbed and maps ValueError to a refusal;
zenpatch's host carries the harness's VFS out (writes, deletions, paths
outside refused) and maps its answers."""

import importlib.util
import json
import os
import stat
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTERS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ADAPTERS, "lib"))
import protocol  # noqa: E402


def load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ADAPTERS, rel))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


aider_cli = load("aider_cli", "aider/aider_cli.py")
zenpatch = load("zenpatch_adapter", "zenpatch/adapter.py")

# A stand-in for aider's patch_coder.py: the same two relative imports, a
# PatchCoder that uses what the stub Coder provides.
FAKE_PATCH_CODER = '''
from .base_coder import Coder
from .patch_prompts import PatchPrompts


class PatchCoder(Coder):
    gpt_prompts = PatchPrompts()

    def get_edits(self):
        text = self.partial_response_content
        if "BAD" in text:
            raise ValueError("Error parsing patch content: bad")
        if "BOOM" in text:
            raise KeyError("not a ValueError")
        return [("a.txt", text)]

    def apply_edits(self, edits):
        for path, text in edits:
            current = self.io.read_text(self.abs_root_path(path)) or ""
            self.io.write_text(self.abs_root_path(path), current + text)
'''


class Aider(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        fake = os.path.join(self.root, "patch_coder.py")
        with open(fake, "w") as f:
            f.write(FAKE_PATCH_CODER)
        self.module = aider_cli.load_patch_coder(fake)
        self.ws = os.path.join(self.root, "ws")
        os.mkdir(self.ws)

    def tearDown(self):
        self.tmp.cleanup()

    def test_patch_coder_loads_on_the_stubs_and_applies(self):
        with open(os.path.join(self.ws, "a.txt"), "wb") as f:
            f.write(b"x\r\n")
        self.assertEqual(aider_cli.run(self.module, self.ws, "y\n"), (0, "applied 1 edit(s)"))
        # aider's InputOutput defaults: text mode, CRLF read as LF, LF written.
        with open(os.path.join(self.ws, "a.txt"), "rb") as f:
            self.assertEqual(f.read(), b"x\ny\n")

    def test_a_value_error_is_the_refusal_and_anything_else_propagates(self):
        self.assertEqual(aider_cli.run(self.module, self.ws, "BAD"), (1, "Error parsing patch content: bad"))
        self.assertFalse(os.path.exists(os.path.join(self.ws, "a.txt")))
        with self.assertRaises(KeyError):
            aider_cli.run(self.module, self.ws, "BOOM")

    def test_abs_root_path_resolves_like_aiders(self):
        coder = self.module.PatchCoder(self.ws, "")
        self.assertEqual(coder.abs_root_path("../x"), os.path.join(os.path.realpath(self.root), "x"))
        self.assertEqual(coder.abs_root_path("/etc/hosts"), "/etc/hosts")


class Zenpatch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ws = os.path.join(self.tmp.name, "ws")
        os.mkdir(self.ws)

    def tearDown(self):
        self.tmp.cleanup()

    def harness(self, answer, status=0):
        """A stand-in harness printing `answer` (a dict) with exit `status`."""
        path = os.path.join(self.tmp.name, "zenpatch-vfs")
        with open(path, "w") as f:
            f.write("#!/bin/sh\ncat >/dev/null\nprintf '%%s\\n' '%s'\nexit %d\n" % (json.dumps(answer), status))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def write(self, rel, data):
        full = os.path.join(self.ws, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)

    def test_the_new_vfs_is_carried_out(self):
        self.write("keep.txt", b"k\n")
        self.write("gone.txt", b"g\n")
        self.write("edit.txt", b"e\n")
        self.write("bin.dat", b"\xff\xfe")
        binary = self.harness({"ok": True, "files": {"keep.txt": "k\n", "edit.txt": "E\n", "new/n.txt": "n"}})
        done = zenpatch.apply(binary, self.ws, "patch")
        self.assertEqual(done["written"], [{"operation": "write", "path": "edit.txt"},
                                           {"operation": "write", "path": "new/n.txt"},
                                           {"operation": "remove", "path": "gone.txt"}])
        self.assertEqual(sorted(os.listdir(self.ws)), ["bin.dat", "edit.txt", "keep.txt", "new"])

    def test_a_path_outside_is_refused_and_nothing_written(self):
        self.write("a.txt", b"a\n")
        binary = self.harness({"ok": True, "files": {"a.txt": "b\n", "../out.txt": "x"}})
        with self.assertRaises(protocol.Refusal):
            zenpatch.apply(binary, self.ws, "patch")
        with open(os.path.join(self.ws, "a.txt"), "rb") as f:
            self.assertEqual(f.read(), b"a\n")
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "out.txt")))

    def test_a_refusal_carries_zenpatchs_message_and_a_dead_harness_is_a_crash(self):
        with self.assertRaises(protocol.Refusal) as r:
            zenpatch.apply(self.harness({"ok": False, "error": "Patch conflict: x"}), self.ws, "patch")
        self.assertEqual(r.exception.message, "Patch conflict: x")
        with self.assertRaises(protocol.Crash):
            zenpatch.apply(self.harness({}, status=101), self.ws, "patch")


if __name__ == "__main__":
    unittest.main()
