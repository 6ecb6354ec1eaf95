"""Unit tests of the adapters' own logic, standard library only (no third-party
implementation needed): the protocol mapping of the envelope-CLI adapter,
run against tiny fake CLIs, and the envelope splitting and path checks of
the openai-agents adapter, with a stand-in for apply_diff. The shared
protocol skeleton and the sandbox have their own files (test_protocol.py,
test_sandbox.py); each further adapter too.

    python3 -m unittest discover -s adapters/tests -v
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTERS = os.path.dirname(HERE)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, os.path.join(ADAPTERS, "lib"))
import sandbox  # noqa: E402

agents = load("agents_adapter", os.path.join(ADAPTERS, "openai-agents", "adapter.py"))
ENVELOPE_CLI = os.path.join(ADAPTERS, "envelope-cli", "adapter.py")


class EnvelopeCli(unittest.TestCase):
    """adapter.py --sandbox none -- FAKE: what the runner would see."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.case = self.tmp.name
        self.ws = os.path.join(self.case, "ws")
        os.mkdir(self.ws)
        os.mkdir(os.path.join(self.case, "outside"))

    def tearDown(self):
        self.tmp.cleanup()

    def fake(self, body):
        path = os.path.join(self.case, "fake-cli")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    def run_adapter(self, msg, cli, *extra):
        proc = subprocess.run(
            [sys.executable, ENVELOPE_CLI, "--sandbox", "none"] + list(extra) + ["--", cli],
            input=json.dumps(msg).encode(), cwd=self.ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    def call(self, patch="*** Begin Patch\n*** End Patch\n", tool="apply_patch"):
        return {"type": "TOOL_CALL", "toolCallId": "c#1", "toolName": tool,
                "params": {"patch": patch}, "workspaceRoot": self.ws, "session": {}}

    def answer(self, out):
        msg = json.loads(out)
        self.assertEqual(msg["type"], "TOOL_RESULT")
        self.assertEqual(msg["data"]["toolCallId"], "c#1")
        return msg["data"]["success"], json.loads(msg["data"]["result"])

    def test_exit_zero_is_success_and_the_envelope_arrives_on_stdin_in_the_workspace(self):
        cli = self.fake('cat > received.txt; pwd > cwd.txt; echo "Done."')
        code, out, _ = self.run_adapter(self.call("*** Begin Patch\nX\n*** End Patch\n"), cli)
        self.assertEqual(code, 0)
        success, doc = self.answer(out)
        self.assertTrue(success)
        self.assertEqual(doc, {"success": True, "exitCode": 0, "stdout": "Done."})
        with open(os.path.join(self.ws, "received.txt")) as f:
            self.assertEqual(f.read(), "*** Begin Patch\nX\n*** End Patch\n")
        with open(os.path.join(self.ws, "cwd.txt")) as f:
            self.assertEqual(os.path.realpath(f.read().strip()), os.path.realpath(self.ws))

    def test_nonzero_exit_is_a_refusal_with_the_message_and_no_kind(self):
        cli = self.fake('echo "Failed to find expected lines" >&2; exit 1')
        _, out, _ = self.run_adapter(self.call(), cli)
        success, doc = self.answer(out)
        self.assertFalse(success)
        self.assertEqual(doc, {"success": False, "error": {
            "message": "Failed to find expected lines", "source": "implementation", "exitCode": 1}})
        self.assertNotIn("kind", doc["error"])

    def test_argument_mode_passes_the_envelope_as_the_single_argument(self):
        cli = self.fake('printf "%s" "$1" > arg.txt; [ "$#" = 1 ]')
        _, out, _ = self.run_adapter(self.call("*** Begin Patch\nY\n*** End Patch\n"), cli, "--input", "arg")
        self.assertTrue(self.answer(out)[0])
        with open(os.path.join(self.ws, "arg.txt")) as f:
            self.assertEqual(f.read(), "*** Begin Patch\nY\n*** End Patch\n")

    def test_a_cli_killed_by_a_signal_gets_no_answer(self):
        cli = self.fake("kill -9 $$")
        code, out, err = self.run_adapter(self.call(), cli)
        self.assertEqual(out, "")
        self.assertEqual(code, 70)
        self.assertIn("killed by signal 9", err)

    def test_other_tools_and_bad_params_are_refused_by_the_adapter(self):
        cli = self.fake("exit 0")
        _, out, _ = self.run_adapter(self.call(tool="workspace.read_file"), cli)
        success, doc = self.answer(out)
        self.assertFalse(success)
        self.assertEqual(doc["error"]["source"], "adapter")
        msg = self.call()
        msg["params"] = {"patch": ["not", "a", "string"]}
        _, out, _ = self.run_adapter(msg, cli)
        self.assertEqual(self.answer(out)[1]["error"]["source"], "adapter")

    def test_hello_declares_apply_patch_and_the_tags_a_cli_cannot_take(self):
        cli = self.fake("exit 0")
        _, out, _ = self.run_adapter({"type": "HELLO", "protocolVersion": 1}, cli,
                                     "--name", "fake", "--version", "1.2", "--unsupported-tag", "crlf")
        hello = json.loads(out)
        self.assertEqual(hello["type"], "HELLO")
        self.assertEqual(hello["tools"], ["apply_patch"])
        self.assertEqual(hello["implementation"], {"name": "fake", "version": "1.2"})
        self.assertEqual(hello["unsupportedTags"], ["stale", "partial", "params", "crlf"])


class AgentsSplit(unittest.TestCase):
    def test_sections_by_the_sdk_splitter_rules(self):
        ops = agents.split("*** Begin Patch\r\n*** Add File: a.txt \n+x\n*** Delete File: b.txt\n"
                           "*** Update File: c.txt\n*** Move to: d.txt\n@@\n-1\n+2\n*** End Patch\n")
        self.assertEqual(ops, [("add", "a.txt", None, "+x\n"), ("delete", "b.txt", None, ""),
                               ("update", "c.txt", "d.txt", "@@\n-1\n+2\n")])

    def test_framing_errors_are_the_adapters(self):
        for patch, part in [("*** Update File: a\n*** End Patch\n", "start with"),
                            ("*** Begin Patch\n*** Update File: a\n", "end with"),
                            ("*** Begin Patch\n*** End Patch\n", "no file operation"),
                            ("*** Begin Patch\n*** Move File: a -> b\n*** End Patch\n", "not a file operation header"),
                            ("*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch\n", "lines after its header")]:
            with self.assertRaises(agents.Refusal) as r:
                agents.split(patch)
            self.assertEqual(r.exception.source, "adapter")
            self.assertIn(part, r.exception.message)

    def test_paths_outside_the_workspace_are_refused_before_anything_is_written(self):
        with tempfile.TemporaryDirectory() as root:
            for bad in ["/etc/hosts", "../x", "a/../../x", "C:\\x", "\\\\server\\x"]:
                with self.assertRaises(agents.Refusal, msg=bad):
                    agents.resolve(root, bad, 0)
            self.assertEqual(agents.resolve(root, "a/./b.txt", 0), os.path.join(root, "a", "b.txt"))

    def test_operations_run_in_order_and_earlier_ones_stay_done(self):
        calls = []

        def fake_apply_diff(text, diff, mode="default"):
            calls.append((text, diff, mode))
            if "FAIL" in diff:
                raise ValueError("Invalid Context 0:\nFAIL")
            return "new:" + diff.replace("+", "").strip() if mode == "create" else text.upper()

        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "u.txt"), "w") as f:
                f.write("old\n")
            with self.assertRaises(agents.Refusal) as r:
                agents.apply(fake_apply_diff, root, "*** Begin Patch\n*** Add File: a.txt\n+x\n"
                             "*** Update File: u.txt\n@@\n-FAIL\n*** End Patch\n")
            self.assertEqual(r.exception.source, "apply_diff")
            self.assertEqual(r.exception.fields["applied"], [{"operation": "add", "path": "a.txt"}])
            with open(os.path.join(root, "a.txt")) as f:
                self.assertEqual(f.read(), "new:x")
            self.assertEqual(calls[0], ("", "+x\n", "create"))
            ops = agents.apply(fake_apply_diff, root, "*** Begin Patch\n*** Update File: u.txt\n"
                               "*** Move to: m/v.txt\n@@\n-old\n+new\n*** End Patch\n")
            self.assertEqual(ops, [{"operation": "update", "path": "u.txt", "moveTo": "m/v.txt"}])
            self.assertFalse(os.path.exists(os.path.join(root, "u.txt")))
            with open(os.path.join(root, "m", "v.txt")) as f:
                self.assertEqual(f.read(), "OLD\n")


if __name__ == "__main__":
    unittest.main()
