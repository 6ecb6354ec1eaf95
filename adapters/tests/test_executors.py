"""The executor scripts when their implementation is not installed: exit 3
with what to do (or, for apply-patch-py, the recorded reason it cannot be
installed), never an answer that could be taken for a refusal."""

import os
import shutil
import subprocess
import tempfile
import unittest

ADAPTERS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXECUTORS = [
    "envelope-cli/codex-apply-patch",
    "openai-agents/openai-agents-apply-diff",
    "agents-core/agents-core-apply-patch",
    "codex-apply-patch-pypi/codex-apply-patch-disk",
    "codex-apply-patch-pypi/codex-apply-patch-memory",
    "apply-patch-py/apply-patch-py",
    "cline/cline-apply-patch",
    "aider/aider-patch-coder",
    "zenpatch/zenpatch-apply",
]


class NotInstalled(unittest.TestCase):
    def run_copy(self, rel, extra=None, args=()):
        """Run a copy of the executor in an empty adapter directory."""
        with tempfile.TemporaryDirectory() as tmp:
            here = os.path.join(tmp, os.path.dirname(rel))
            os.makedirs(here)
            script = shutil.copy(os.path.join(ADAPTERS, rel), here)
            for name, text in (extra or {}).items():
                with open(os.path.join(here, name), "w") as f:
                    f.write(text)
            proc = subprocess.run([script] + list(args), input=b'{"type":"HELLO","protocolVersion":1}',
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    def test_every_executor_says_how_to_install_it(self):
        for rel in EXECUTORS:
            code, out, err = self.run_copy(rel)
            self.assertEqual((code, out), (3, ""), rel)
            self.assertIn("install", err, rel)

    def test_apply_patch_py_passes_on_the_reason_it_could_not_be_installed(self):
        code, out, err = self.run_copy("apply-patch-py/apply-patch-py",
                                       {".venv-unavailable": "requires Python >= 3.13\n"})
        self.assertEqual((code, out), (3, ""))
        self.assertIn("requires Python >= 3.13", err)


if __name__ == "__main__":
    unittest.main()
