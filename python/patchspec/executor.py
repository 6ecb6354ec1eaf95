"""Write a patchspec executor in Python: one function per tool, then `serve`.

    from patchspec.executor import serve

    def read_file(params, workspace_root, session):
        ...  # return the tool's result document (a dict)

    serve({"workspace.read_file": read_file}, name="my-tools", version="1.0")

The kit speaks the line protocol of docs/protocol.md, oneshot and session
alike: it reads one JSON message per line until end of input or BYE,
answers HELLO with a HELLO declaring exactly the tools given, and answers
each TOOL_CALL with the TOOL_RESULT of the tool's function. A function takes
`(params, workspace_root)` or `(params, workspace_root, session)` (the
call's `session` object: `activeFiles`, `limits`, ...) and returns the
result document; `success` in it sets the TOOL_RESULT's. An exception
becomes the failure document of a `command_failed` error (reason
`internal_error`), never a crash. While the kit runs, file descriptor 1 is
the protocol's alone: `print`, `sys.stdout` and child processes write to
stderr instead.

Cost: one message is read, parsed and answered at a time; the kit holds
no more than the current line and its answer.

Python 3.8+, standard library only.
"""

import inspect
import json
import os
import sys
import time

__all__ = ["serve", "answer", "tool_result", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = 1
# Exit status for input that is not a protocol message (the runner sees no answer).
USAGE_EXIT = 2


def _wants_session(function):
    """Does `function` take a third positional argument (the session)?"""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [
        p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    return variadic or len(positional) >= 3


def _hello(tools, name, version, language, unsupported_tags, private_paths):
    implementation = {"name": name, "version": version, "language": language}
    return {
        "type": "HELLO",
        "protocolVersion": PROTOCOL_VERSION,
        "implementation": implementation,
        "tools": list(tools),
        "unsupportedTags": list(unsupported_tags),
        "privatePaths": list(private_paths),
    }


def _command_failed(message):
    return {
        "success": False,
        "error": {"kind": "command_failed", "reason": "internal_error", "message": message},
    }


def _error_message(document):
    """The one-line message of a failure document, whatever its tool's shape."""
    error = document.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    errors = document.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], str):
        return errors[0]
    return document.get("errorCode") or "the tool failed"


def _result(call_id, tool, message, tools, started):
    """The TOOL_RESULT of one TOOL_CALL: the tool's document, or command_failed."""
    function, wants_session = tools.get(tool, (None, False))
    if function is None:
        document = _command_failed("this executor does not implement %r" % (tool,))
    else:
        params = message.get("params")
        root = message.get("workspaceRoot")
        try:
            if wants_session:
                document = function(params, root, message.get("session") or {})
            else:
                document = function(params, root)
            if not isinstance(document, dict):
                raise TypeError(
                    "%s returned %s, not a result document (dict)" % (tool, type(document).__name__)
                )
        except Exception as e:  # the contract: an exception is a result, not a crash
            document = _command_failed("%s: %s: %s" % (tool, type(e).__name__, e))
    return tool_result(call_id, document, started)


def tool_result(call_id, document, started):
    """The TOOL_RESULT carrying `document` (JSON-encoded, as the protocol
    wants) for the call `call_id`, begun at `started` (time.monotonic())."""
    success = document.get("success") is True
    data = {
        "toolCallId": call_id,
        "success": success,
        "result": json.dumps(document, ensure_ascii=False),
        "executionTime": round((time.monotonic() - started) * 1000),
    }
    if not success:
        data["error"] = _error_message(document)
    return {"type": "TOOL_RESULT", "data": data}


def answer(line, tools, hello):
    """The answer to one protocol line: a message dict, None for BYE, or
    raises ValueError for a line that is not a HELLO, TOOL_CALL or BYE.
    `tools` maps a wire name to `(function, takes_session)`."""
    started = time.monotonic()
    message = json.loads(line)
    kind = message.get("type") if isinstance(message, dict) else None
    if kind == "HELLO":
        return hello
    if kind == "BYE":
        return None
    if kind == "TOOL_CALL":
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str):
            raise ValueError("TOOL_CALL without a string toolCallId")
        return _result(call_id, message.get("toolName"), message, tools, started)
    raise ValueError("not a HELLO, TOOL_CALL or BYE: type %r" % (kind,))


def serve(
    tools,
    name="patchspec-python-executor",
    version="0",
    unsupported_tags=(),
    private_paths=(),
    stdin=None,
    stdout=None,
):
    """Serve `tools` ({wire name: function}) until end of input or BYE; exits
    the process (status 0, or 2 after a line it cannot answer) unless
    `stdin`/`stdout` are given, when it returns the status instead."""
    if not tools:
        raise ValueError("serve() needs at least one tool: the HELLO declares exactly these")
    wrapped = {tool: (function, _wants_session(function)) for tool, function in tools.items()}
    hello = _hello(wrapped, name, version, "Python", unsupported_tags, private_paths)
    standalone = stdin is None and stdout is None
    if standalone:
        stdin = sys.stdin
        stdout = _take_stdout()
    status = 0
    for line in stdin:
        if not line.strip():
            continue
        try:
            reply = answer(line, wrapped, hello)
        except ValueError as e:
            sys.stderr.write("patchspec.executor: cannot answer this line: %s\n" % e)
            status = USAGE_EXIT
            break
        if reply is None:
            break
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        stdout.flush()
    if standalone:
        stdout.close()
        sys.exit(status)
    return status


def _take_stdout():
    """The protocol's own stream on the real stdout; fd 1 (so `print`, C
    code and child processes) goes to stderr from now on."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol
