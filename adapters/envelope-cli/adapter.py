#!/usr/bin/env python3
"""patchspec oneshot adapter for a codex-style envelope CLI.

Any program that takes an apply_patch envelope on stdin (or as its single
argument), applies it to its current directory, and says with its exit code
whether it applied, can be checked by `patchspec check` / `patchspec matrix`
through this adapter:

    adapter.py [OPTIONS] -- CLI [CLI-ARG...]

One TOOL_CALL on stdin, one TOOL_RESULT on stdout (docs/protocol.md,
transport `oneshot`). A HELLO on stdin is answered with a HELLO declaring the
tool `apply_patch` and the tags the CLI cannot support (see README.md).

What the adapter does, and nothing more:
  * runs CLI with cwd = workspaceRoot and the envelope (params.patch) on its
    stdin (--input stdin, default) or as its one extra argument (--input arg);
  * exit status 0 -> success true; any other exit status -> success false;
    killed by a signal or not startable -> no answer (a crash, as the runner
    should see it);
  * the result document is {"success": true, "exitCode", "stdout"} or
    {"success": false, "error": {"message", "exitCode", "source"}}: no error
    `kind`, because a CLI reports none; use `--judge outcome`.
It never touches the workspace itself. Python 3.8+, standard library only.

Sandbox (--sandbox, default auto = bwrap when it is on PATH): a CLI under
test may write anywhere its user can (an absolute path, a symlink out of the
workspace). The runner only watches the case directory (the workspace and
the sentinel beside it), so the CLI is run under bubblewrap with the whole
file system read-only except that case directory. A write the sandbox
blocked fails with EROFS ("Read-only file system"), which can only come from
a write outside the case directory; the adapter then records the attempt in
the case directory's `outside/` folder (`sandbox-blocked-write.txt`, the
CLI's message), where the runner reports it as a write outside the
workspace. Without bwrap (or with --sandbox none) the CLI runs unconfined.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

PROTOCOL_VERSION = 1
# The JSON parameter layer of the tool (expectedSha256ByPath, atomic:false,
# malformed params) has no equivalent on a CLI's command line.
DEFAULT_UNSUPPORTED_TAGS = ["stale", "partial", "params"]
# Bound on what is copied from the CLI's output into the result document.
OUTPUT_LIMIT = 4000
# What a write blocked by the read-only sandbox looks like in any language.
EROFS_MARKERS = ("Read-only file system", "os error 30", "EROFS")
BLOCKED_NOTE = "sandbox-blocked-write.txt"


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="adapter.py",
        description="patchspec oneshot adapter for an envelope CLI (envelope in, exit code out)",
    )
    p.add_argument("--input", choices=["stdin", "arg"], default="stdin",
                   help="how the envelope reaches the CLI (default: stdin)")
    p.add_argument("--name", default=None, help="implementation name for HELLO (default: the CLI's name)")
    p.add_argument("--version", default="unknown", help="implementation version for HELLO")
    p.add_argument("--language", default=None, help="implementation language for HELLO")
    p.add_argument("--homepage", default=None, help="implementation homepage for HELLO")
    p.add_argument("--unsupported-tag", action="append", default=[], metavar="TAG",
                   help="another case tag to declare unsupported (repeatable); "
                        "always declared: " + ", ".join(DEFAULT_UNSUPPORTED_TAGS))
    p.add_argument("--sandbox", choices=["auto", "bwrap", "none"], default="auto",
                   help="confine the CLI with bubblewrap to the case directory (auto: when bwrap is on PATH)")
    p.add_argument("--cli-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="kill the CLI after this long (the runner's own timeout usually comes first)")
    p.add_argument("cli", nargs=argparse.REMAINDER, help="-- CLI [ARG...]")
    args = p.parse_args(argv)
    if args.cli and args.cli[0] == "--":
        args.cli = args.cli[1:]
    if not args.cli:
        p.error("no CLI given: adapter.py [OPTIONS] -- CLI [ARG...]")
    return args


def hello(args):
    tags = list(DEFAULT_UNSUPPORTED_TAGS)
    tags += [t for t in args.unsupported_tag if t not in tags]
    impl = {
        "name": args.name or os.path.basename(args.cli[0]),
        "version": args.version,
    }
    if args.language:
        impl["language"] = args.language
    if args.homepage:
        impl["homepage"] = args.homepage
    return {
        "type": "HELLO",
        "protocolVersion": PROTOCOL_VERSION,
        "implementation": impl,
        "tools": ["apply_patch"],
        "unsupportedTags": tags,
        "privatePaths": [],
    }


def tool_result(call_id, success, doc, started, error=None):
    data = {
        "toolCallId": call_id,
        "success": success,
        "result": json.dumps(doc, ensure_ascii=False),
        "executionTime": round((time.monotonic() - started) * 1000),
    }
    if error is not None:
        data["error"] = error
    return {"type": "TOOL_RESULT", "data": data}


def refuse(call_id, started, message, source, exit_code=None):
    error = {"message": message, "source": source}
    if exit_code is not None:
        error["exitCode"] = exit_code
    return tool_result(call_id, False, {"success": False, "error": error}, started, message)


def clip(text):
    text = text.strip()
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + "\n[... cut by the adapter]"
    return text


def call(args, msg):
    started = time.monotonic()
    call_id = msg.get("toolCallId")
    if not isinstance(call_id, str):
        raise ValueError("TOOL_CALL without a string toolCallId")
    if msg.get("toolName") != "apply_patch":
        return refuse(call_id, started, "the adapter only serves apply_patch, not %r" % msg.get("toolName"), "adapter")
    params = msg.get("params")
    patch = params.get("patch") if isinstance(params, dict) else None
    if not isinstance(patch, str):
        return refuse(call_id, started, "params.patch is not a string: nothing to hand to the CLI", "adapter")
    cwd = msg.get("workspaceRoot") or os.getcwd()
    argv = list(args.cli)
    case_dir = os.path.dirname(os.path.abspath(cwd))
    bwrap = shutil.which("bwrap") if args.sandbox != "none" else None
    if args.sandbox == "bwrap" and bwrap is None:
        sys.stderr.write("adapter: --sandbox bwrap, but bwrap is not on PATH (Debian: apt-get install bubblewrap)\n")
        sys.exit(70)
    if bwrap is not None:
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--bind", case_dir, case_dir, "--chdir", cwd, "--die-with-parent", "--"] + argv
    stdin = patch.encode("utf-8", "surrogatepass")
    if args.input == "arg":
        argv.append(patch)
        stdin = b""
    try:
        proc = subprocess.run(argv, input=stdin, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=args.cli_timeout)
    except OSError as e:
        sys.stderr.write("adapter: cannot start %s: %s\n" % (argv[0], e))
        sys.exit(70)
    except subprocess.TimeoutExpired:
        sys.stderr.write("adapter: %s did not finish within %.0fs\n" % (argv[0], args.cli_timeout))
        sys.exit(70)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    # The CLI's own output, for the reader of a failing case; never judged.
    sys.stderr.write(err)
    if proc.returncode < 0:
        sys.stderr.write("adapter: %s was killed by signal %d\n" % (argv[0], -proc.returncode))
        sys.exit(70)
    if bwrap is not None and any(m in err or m in out for m in EROFS_MARKERS):
        note = os.path.join(case_dir, "outside", BLOCKED_NOTE)
        try:
            with open(note, "a", encoding="utf-8") as f:
                f.write("the sandbox blocked a write outside the case directory; the CLI said:\n%s\n" % (err or out))
        except OSError as e:
            sys.stderr.write("adapter: cannot record the blocked write in %s: %s\n" % (note, e))
        sys.stderr.write("adapter: the sandbox blocked a write outside the case directory (recorded in ../outside/%s)\n" % BLOCKED_NOTE)
    if proc.returncode == 0:
        return tool_result(call_id, True, {"success": True, "exitCode": 0, "stdout": clip(out)}, started)
    message = clip(err) or clip(out) or "exit status %d, no message" % proc.returncode
    return refuse(call_id, started, message, "implementation", proc.returncode)


def main(argv):
    args = parse_args(argv)
    raw = sys.stdin.buffer.read()
    try:
        msg = json.loads(raw.decode("utf-8"))
    except ValueError as e:
        sys.stderr.write("adapter: input is not one JSON message: %s\n" % e)
        return 2
    kind = msg.get("type") if isinstance(msg, dict) else None
    if kind == "HELLO":
        answer = hello(args)
    elif kind == "TOOL_CALL":
        try:
            answer = call(args, msg)
        except ValueError as e:
            sys.stderr.write("adapter: %s\n" % e)
            return 2
    elif kind == "BYE":
        return 0
    else:
        sys.stderr.write("adapter: unexpected message type %r\n" % kind)
        return 2
    sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
