"""The oneshot side of the patchspec protocol, shared by every adapter here.

docs/protocol.md, transport `oneshot`: one message on stdin (HELLO,
TOOL_CALL or BYE), at most one answer on stdout. An adapter supplies its
HELLO and one function that applies an apply_patch envelope in a workspace;
this module does the rest, the same way for all of them:

  * HELLO -> the adapter's HELLO (tools, unsupported tags, implementation);
  * TOOL_CALL -> `handle(patch, workspace_root)`, whose return value is the
    success document; a `Refusal` becomes the failure document
    `{"success": false, "error": {"message", "source", ...}}` (no error
    `kind`: the implementations here report none, so judge with
    `--judge outcome`); a `Crash` becomes no answer at all (exit 70), which
    the runner reports as a crash, never as a refusal;
  * a call for another tool, or without a string `params.patch`, is refused
    with `"source": "adapter"` before `handle` runs.

Python 3.8+, standard library only.
"""

import json
import os
import sys
import time

# One TOOL_RESULT builder for the adapters and the Python executor kit: the kit's.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from patchspec.executor import tool_result  # noqa: E402

PROTOCOL_VERSION = 1
# Exit status when the implementation crashed (no answer on stdout).
CRASH_EXIT = 70
# Exit status for a message the adapter cannot read.
USAGE_EXIT = 2


class Refusal(Exception):
    """The call is refused: `source` says who refused (the implementation,
    the adapter, the file system); `fields` are extra members of `error`."""

    def __init__(self, message, source, **fields):
        super().__init__(message)
        self.message = message
        self.source = source
        self.fields = fields

    def document(self):
        error = {"message": self.message, "source": self.source}
        error.update((k, v) for k, v in self.fields.items() if v is not None)
        return {"success": False, "error": error}


class Crash(Exception):
    """The implementation crashed: the runner must see no answer."""


class ProtocolError(ValueError):
    """A message the adapter cannot answer (not one JSON object, no toolCallId)."""


def hello(name, version, unsupported_tags, language=None, homepage=None):
    """A HELLO for an adapter that serves `apply_patch` only."""
    impl = {"name": name, "version": version}
    if language:
        impl["language"] = language
    if homepage:
        impl["homepage"] = homepage
    return {
        "type": "HELLO",
        "protocolVersion": PROTOCOL_VERSION,
        "implementation": impl,
        "tools": ["apply_patch"],
        "unsupportedTags": list(unsupported_tags),
        "privatePaths": [],
    }


def answer_call(msg, handle):
    """The TOOL_RESULT for one TOOL_CALL message; raises Crash or ProtocolError."""
    started = time.monotonic()
    call_id = msg.get("toolCallId")
    if not isinstance(call_id, str):
        raise ProtocolError("TOOL_CALL without a string toolCallId")
    try:
        if msg.get("toolName") != "apply_patch":
            raise Refusal("the adapter only serves apply_patch, not %r" % msg.get("toolName"), "adapter")
        params = msg.get("params")
        patch = params.get("patch") if isinstance(params, dict) else None
        if not isinstance(patch, str):
            raise Refusal("params.patch is not a string: nothing to hand to the implementation", "adapter")
        root = msg.get("workspaceRoot")
        if not isinstance(root, str) or not root:
            raise Refusal("TOOL_CALL without a workspaceRoot", "adapter")
        document = handle(patch, root)
    except Refusal as r:
        document = r.document()
    return tool_result(call_id, document, started)


def serve(hello_message, handle, stdin=None, stdout=None, stderr=None):
    """Answer the one message on `stdin`; returns the process exit status.

    `hello_message` is the HELLO (or a function returning it, called only for
    a HELLO); `handle(patch, workspace_root)` applies a patch."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        msg = json.loads(stdin.read().decode("utf-8"))
    except ValueError as e:
        stderr.write("adapter: input is not one JSON message: %s\n" % e)
        return USAGE_EXIT
    kind = msg.get("type") if isinstance(msg, dict) else None
    if kind == "HELLO":
        answer = hello_message() if callable(hello_message) else hello_message
    elif kind == "TOOL_CALL":
        try:
            answer = answer_call(msg, handle)
        except ProtocolError as e:
            stderr.write("adapter: %s\n" % e)
            return USAGE_EXIT
        except Crash as e:
            stderr.write("adapter: the implementation crashed: %s\n" % e)
            return CRASH_EXIT
    elif kind == "BYE":
        return 0
    else:
        stderr.write("adapter: unexpected message type %r\n" % kind)
        return USAGE_EXIT
    stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    stdout.flush()
    return 0
