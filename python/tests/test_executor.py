"""The Python executor kit: python3 -m unittest discover -s python/tests"""

import io
import json
import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from patchspec.executor import serve  # noqa: E402

HELLO = {"type": "HELLO", "protocolVersion": 1, "runner": {"name": "patchspec", "version": "0.1.0"}}


def call(tool, params, call_id="c#1", session=None):
    message = {
        "type": "TOOL_CALL",
        "toolCallId": call_id,
        "toolName": tool,
        "params": params,
        "workspaceRoot": "/ws",
    }
    if session is not None:
        message["session"] = session
    return message


def run(tools, *messages, **options):
    """serve() over the given messages; returns (status, answers)."""
    stdin = io.StringIO("".join(json.dumps(m) + "\n" for m in messages))
    stdout = io.StringIO()
    status = serve(tools, stdin=stdin, stdout=stdout, **options)
    return status, [json.loads(line) for line in stdout.getvalue().splitlines()]


def document(answer):
    return json.loads(answer["data"]["result"])


def echo(params, workspace_root):
    return {"success": True, "params": params, "root": workspace_root}


class Hello(unittest.TestCase):
    def test_declares_exactly_the_tools_given(self):
        status, answers = run(
            {"workspace.read_file": echo, "apply_patch": echo},
            HELLO,
            name="mine",
            version="2.0",
            unsupported_tags=["symlink"],
            private_paths=[".trash"],
        )
        self.assertEqual(status, 0)
        self.assertEqual(len(answers), 1)
        hello = answers[0]
        self.assertEqual(hello["type"], "HELLO")
        self.assertEqual(hello["protocolVersion"], 1)
        self.assertEqual(hello["tools"], ["workspace.read_file", "apply_patch"])
        self.assertEqual(hello["implementation"]["name"], "mine")
        self.assertEqual(hello["implementation"]["version"], "2.0")
        self.assertEqual(hello["unsupportedTags"], ["symlink"])
        self.assertEqual(hello["privatePaths"], [".trash"])

    def test_no_tools_is_refused_before_serving(self):
        with self.assertRaises(ValueError):
            serve({}, stdin=io.StringIO(""), stdout=io.StringIO())


class Calls(unittest.TestCase):
    def test_session_answers_each_call_in_order_until_bye(self):
        status, answers = run(
            {"t": echo},
            HELLO,
            call("t", {"n": 1}, "a#1"),
            call("t", {"n": 2}, "b#1"),
            {"type": "BYE"},
            call("t", {"n": 3}, "after-bye"),
        )
        self.assertEqual(status, 0)
        self.assertEqual([a["type"] for a in answers], ["HELLO", "TOOL_RESULT", "TOOL_RESULT"])
        self.assertEqual([a["data"]["toolCallId"] for a in answers[1:]], ["a#1", "b#1"])
        self.assertEqual(document(answers[2]), {"success": True, "params": {"n": 2}, "root": "/ws"})
        self.assertIsInstance(answers[1]["data"]["result"], str, "the document travels JSON-encoded")

    def test_oneshot_is_one_message_then_end_of_input(self):
        status, answers = run({"t": echo}, call("t", {}))
        self.assertEqual(status, 0)
        self.assertEqual(len(answers), 1)
        self.assertTrue(answers[0]["data"]["success"])

    def test_a_three_argument_function_gets_the_session(self):
        def active(params, workspace_root, session):
            return {"success": True, "active": sorted(session["activeFiles"])}

        _, answers = run({"t": active}, call("t", {}, session={"activeFiles": {"a.txt": "x"}}))
        self.assertEqual(document(answers[0])["active"], ["a.txt"])

    def test_a_failure_document_sets_success_false_and_the_error_line(self):
        def refuse(params, workspace_root):
            return {"success": False, "errorCode": "NOT_FOUND", "errors": ["File 'x' is missing."]}

        _, answers = run({"t": refuse}, call("t", {}))
        self.assertFalse(answers[0]["data"]["success"])
        self.assertEqual(answers[0]["data"]["error"], "File 'x' is missing.")

    def test_an_exception_is_a_command_failed_result(self):
        def boom(params, workspace_root):
            raise KeyError("path")

        status, answers = run({"t": boom}, call("t", {}), call("t", {}, "c#2"))
        self.assertEqual(status, 0, "the executor goes on after an exception")
        doc = document(answers[0])
        self.assertFalse(doc["success"])
        self.assertEqual(doc["error"]["kind"], "command_failed")
        self.assertEqual(doc["error"]["reason"], "internal_error")
        self.assertIn("KeyError", doc["error"]["message"])
        self.assertEqual(answers[1]["data"]["toolCallId"], "c#2")

    def test_a_result_that_is_not_a_dict_is_command_failed(self):
        _, answers = run({"t": lambda params, root: "done"}, call("t", {}))
        self.assertEqual(document(answers[0])["error"]["kind"], "command_failed")

    def test_an_undeclared_tool_is_command_failed(self):
        _, answers = run({"t": echo}, call("other", {}))
        doc = document(answers[0])
        self.assertEqual(doc["error"]["kind"], "command_failed")
        self.assertIn("'other'", doc["error"]["message"])

    def test_a_line_that_is_no_message_stops_with_status_2(self):
        stdin = io.StringIO("not json\n" + json.dumps(HELLO) + "\n")
        stdout = io.StringIO()
        self.assertEqual(serve({"t": echo}, stdin=stdin, stdout=stdout), 2)
        self.assertEqual(stdout.getvalue(), "", "nothing is answered after an unreadable line")

    def test_a_call_without_an_id_stops_with_status_2(self):
        message = call("t", {})
        del message["toolCallId"]
        status, answers = run({"t": echo}, message)
        self.assertEqual((status, answers), (2, []))


class Stdout(unittest.TestCase):
    def test_prints_in_a_tool_never_reach_the_protocol(self):
        program = textwrap.dedent(
            """
            import os, subprocess, sys
            from patchspec.executor import serve

            def noisy(params, workspace_root):
                print("a print")
                sys.stdout.write("a write\\n")
                os.write(1, b"a raw write\\n")
                subprocess.run(["echo", "a child"], check=True)
                return {"success": True}

            print("before serve")
            serve({"t": noisy})
            """
        )
        messages = json.dumps(HELLO) + "\n" + json.dumps(call("t", {})) + "\n"
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."))
        done = subprocess.run(
            [sys.executable, "-c", program], input=messages, capture_output=True, text=True, env=env
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(
            [json.loads(line)["type"] for line in lines if line != "before serve"],
            ["HELLO", "TOOL_RESULT"],
        )
        self.assertNotIn("a print", done.stdout)
        self.assertNotIn("a raw write", done.stdout)
        self.assertNotIn("a child", done.stdout)
        for text in ("a print", "a write", "a raw write", "a child"):
            self.assertIn(text, done.stderr)


if __name__ == "__main__":
    unittest.main()
