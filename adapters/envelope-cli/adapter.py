#!/usr/bin/env python3
"""patchspec oneshot adapter for a codex-style envelope CLI.

Any program that takes an apply_patch envelope on stdin (or as its single
argument), applies it to its current directory, and says with its exit code
whether it applied, can be checked by `patchspec check` / `patchspec matrix`
through this adapter:

    adapter.py [OPTIONS] -- CLI [CLI-ARG...]

The protocol (HELLO, TOOL_CALL -> TOOL_RESULT) is adapters/lib/protocol.py,
the confinement adapters/lib/sandbox.py; what this adapter adds, and nothing
more:
  * runs CLI with cwd = workspaceRoot and the envelope (params.patch) on its
    stdin (--input stdin, default) or as its one extra argument (--input arg),
    confined by the sandbox (--sandbox, default auto);
  * exit status 0 -> success true; any other exit status -> success false;
    killed by a signal, not startable or not finishing -> no answer (a crash,
    as the runner should see it);
  * the result document is {"success": true, "exitCode", "stdout"} or
    {"success": false, "error": {"message", "exitCode", "source"}}: no error
    `kind`, because a CLI reports none; use `--judge outcome`.
It never touches the workspace itself.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import protocol  # noqa: E402
import sandbox  # noqa: E402

# The JSON parameter layer of the tool (expectedSha256ByPath, atomic:false,
# malformed params) has no equivalent on a CLI's command line.
DEFAULT_UNSUPPORTED_TAGS = ["stale", "partial", "params"]


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
    p.add_argument("--sandbox", choices=sandbox.MODES, default="auto",
                   help="confine the CLI and record its writes outside the case directory "
                        "(auto: overlay as root, else bwrap when on PATH, else none)")
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
    return protocol.hello(args.name or os.path.basename(args.cli[0]), args.version, tags,
                          language=args.language, homepage=args.homepage)


def apply(args, patch, root, stderr=sys.stderr):
    """Run the CLI on `patch` in `root`; the success document or a Refusal."""
    cwd = os.path.abspath(root)
    case_dir = os.path.dirname(cwd)
    cli = list(args.cli)
    stdin = patch.encode("utf-8", "surrogatepass")
    if args.input == "arg":
        cli.append(patch)
        stdin = b""
    try:
        proc, mode, writes = sandbox.run_confined(cli, stdin, cwd, case_dir, args.sandbox, args.cli_timeout)
    except sandbox.SandboxUnavailable as e:
        raise protocol.Crash(str(e))
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    # The CLI's own output, for the reader of a failing case; never judged.
    stderr.write(err)
    if proc.returncode < 0:
        raise protocol.Crash("%s was killed by signal %d" % (cli[0], -proc.returncode))
    if writes:
        sandbox.record_writes(case_dir, mode, writes, stderr)
    if proc.returncode == 0:
        return {"success": True, "exitCode": 0, "stdout": sandbox.clip(out)}
    message = sandbox.clip(err) or sandbox.clip(out) or "exit status %d, no message" % proc.returncode
    raise protocol.Refusal(message, "implementation", exitCode=proc.returncode)


def main(argv):
    args = parse_args(argv)
    return protocol.serve(lambda: hello(args), lambda patch, root: apply(args, patch, root))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
