"""adapters/lib/protocol.py: the oneshot skeleton every adapter answers with."""

import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import protocol  # noqa: E402

HELLO = protocol.hello("impl", "1.0", ["stale"], language="Python")


def serve(msg, handle):
    out, err = io.StringIO(), io.StringIO()
    raw = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
    code = protocol.serve(HELLO, handle, stdin=io.BytesIO(raw), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def call(tool="apply_patch", params=None, root="/w"):
    return {"type": "TOOL_CALL", "toolCallId": "c#1", "toolName": tool,
            "params": {"patch": "P"} if params is None else params, "workspaceRoot": root}


class Protocol(unittest.TestCase):
    def test_hello_is_answered_with_the_adapters_hello(self):
        code, out, _ = serve({"type": "HELLO", "protocolVersion": 1}, None)
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out), {
            "type": "HELLO", "protocolVersion": 1, "tools": ["apply_patch"], "unsupportedTags": ["stale"],
            "implementation": {"name": "impl", "version": "1.0", "language": "Python"}, "privatePaths": []})

    def test_the_handlers_document_is_the_result_as_a_json_string(self):
        seen = []
        code, out, _ = serve(call(), lambda patch, root: seen.append((patch, root)) or {"success": True, "n": 1})
        self.assertEqual(seen, [("P", "/w")])
        data = json.loads(out)["data"]
        self.assertEqual((code, data["toolCallId"], data["success"]), (0, "c#1", True))
        self.assertEqual(json.loads(data["result"]), {"success": True, "n": 1})
        self.assertNotIn("error", data)

    def test_a_refusal_is_a_failure_document_with_its_source_and_fields_and_no_kind(self):
        def handle(patch, root):
            raise protocol.Refusal("no match", "implementation", exitCode=1, path=None)
        _, out, _ = serve(call(), handle)
        data = json.loads(out)["data"]
        self.assertFalse(data["success"])
        self.assertEqual(data["error"], "no match")
        self.assertEqual(json.loads(data["result"]), {
            "success": False, "error": {"message": "no match", "source": "implementation", "exitCode": 1}})

    def test_a_crash_gets_no_answer_and_exit_70(self):
        def handle(patch, root):
            raise protocol.Crash("panicked")
        code, out, err = serve(call(), handle)
        self.assertEqual((code, out), (protocol.CRASH_EXIT, ""))
        self.assertIn("panicked", err)

    def test_other_tools_missing_patch_or_root_are_refused_by_the_adapter_before_the_handler(self):
        def handle(patch, root):
            raise AssertionError("the handler must not run")
        for msg in (call(tool="workspace.read_file"), call(params={"patch": 3}), call(params=[]), call(root="")):
            _, out, _ = serve(msg, handle)
            doc = json.loads(json.loads(out)["data"]["result"])
            self.assertEqual(doc["error"]["source"], "adapter", msg)

    def test_unreadable_messages_exit_2_without_an_answer_and_bye_exits_0(self):
        self.assertEqual(serve(b"not json", None)[:2], (protocol.USAGE_EXIT, ""))
        self.assertEqual(serve({"type": "NOPE"}, None)[:2], (protocol.USAGE_EXIT, ""))
        msg = call()
        del msg["toolCallId"]
        self.assertEqual(serve(msg, None)[:2], (protocol.USAGE_EXIT, ""))
        self.assertEqual(serve({"type": "BYE"}, None)[:2], (0, ""))


if __name__ == "__main__":
    unittest.main()
