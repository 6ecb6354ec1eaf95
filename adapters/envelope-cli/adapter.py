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

Sandbox (--sandbox): a CLI under test may write anywhere its user can (an
absolute path, a symlink out of the workspace), and the runner only watches
the case directory (the workspace and the sentinel beside it). So the CLI is
confined, and what it did outside the case directory is recorded in the case
directory's `outside/sandbox-writes.txt`, where the runner reports it as a
write outside the workspace:

  overlay  (as root, with unshare and overlayfs): the CLI runs chrooted in a
           private mount namespace whose root is an overlay of `/` with a
           scratch upper layer, /dev /proc /sys and the case directory bound
           in. Its writes elsewhere succeed, in the scratch layer only, and
           are listed exactly (the scratch layer is then thrown away).
  bwrap    (bubblewrap): `/` read-only except the case directory. A blocked
           write fails with EROFS; it is recorded only when the CLI's
           message shows the OS error ("Read-only file system", "os error 30").
  none     unconfined.
  auto     (default) overlay when running as root and it can be set up,
           else bwrap when on PATH, else none.
"""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

PROTOCOL_VERSION = 1
# The JSON parameter layer of the tool (expectedSha256ByPath, atomic:false,
# malformed params) has no equivalent on a CLI's command line.
DEFAULT_UNSUPPORTED_TAGS = ["stale", "partial", "params"]
# Bound on what is copied from the CLI's output into the result document.
OUTPUT_LIMIT = 4000
# What a write blocked by the read-only sandbox looks like in any language.
EROFS_MARKERS = ("Read-only file system", "os error 30", "EROFS")
WRITES_NOTE = "sandbox-writes.txt"
# Exit status of the overlay wrapper when it could not set itself up (the CLI
# has not run then, so the call is retried under bwrap).
OVERLAY_SETUP_FAILED = 197
OVERLAY_SCRIPT = r"""
S="$1"; CASE="$2"; CWD="$3"; shift 3
fail() { echo "patchspec-overlay: $1" >&2; exit 197; }
mount -t overlay patchspec-overlay -o "lowerdir=/,upperdir=$S/up,workdir=$S/work" "$S/root" || fail "mount overlay"
for m in /dev /proc /sys; do mount --rbind "$m" "$S/root$m" || fail "bind $m"; done
mount --rbind "$CASE" "$S/root$CASE" || fail "bind the case directory"
exec chroot "$S/root" /bin/sh -c 'cd "$1" || exit 197; shift; exec "$@"' sh "$CWD" "$@"
"""


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
    p.add_argument("--sandbox", choices=["auto", "overlay", "bwrap", "none"], default="auto",
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


def choose_sandbox(wanted):
    if wanted == "bwrap" and not shutil.which("bwrap"):
        sys.stderr.write("adapter: --sandbox bwrap, but bwrap is not on PATH (Debian: apt-get install bubblewrap)\n")
        sys.exit(70)
    if wanted != "auto":
        return wanted
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("chroot"):
        return "overlay"
    return "bwrap" if shutil.which("bwrap") else "none"


def run(args, argv, stdin, cwd):
    try:
        return subprocess.run(argv, input=stdin, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=args.cli_timeout)
    except OSError as e:
        sys.stderr.write("adapter: cannot start %s: %s\n" % (argv[0], e))
        sys.exit(70)
    except subprocess.TimeoutExpired:
        sys.stderr.write("adapter: %s did not finish within %.0fs\n" % (argv[0], args.cli_timeout))
        sys.exit(70)


def run_overlay(args, cli, stdin, cwd, case_dir):
    """Run the CLI in an overlay of `/`; returns (process, writes outside the
    case directory), or (None, []) when the overlay could not be set up."""
    scratch = tempfile.mkdtemp(prefix="patchspec-overlay-")
    try:
        for d in ("up", "work", "root"):
            os.mkdir(os.path.join(scratch, d))
        argv = ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", OVERLAY_SCRIPT,
                "sh", scratch, case_dir, cwd] + cli
        proc = run(args, argv, stdin, cwd)
        if proc.returncode == OVERLAY_SETUP_FAILED and b"patchspec-overlay:" in proc.stderr:
            return None, []
        return proc, overlay_writes(os.path.join(scratch, "up"), case_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def overlay_writes(up, case_dir):
    """What the upper layer holds: every file, link, whiteout (a deletion) or
    new directory, outside the case directory and the bound mounts."""
    keep_dirs = {"/", "/dev", "/proc", "/sys"}
    parts = case_dir.strip("/").split("/")
    keep_dirs.update("/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1))
    writes = []
    for dirpath, dirnames, filenames in os.walk(up):
        rel = "/" + os.path.relpath(dirpath, up).replace(os.sep, "/") if dirpath != up else "/"
        rel = rel.replace("//", "/")
        for name in sorted(dirnames):
            path = (rel.rstrip("/") + "/" + name)
            if path not in keep_dirs and not os.path.isdir(path):
                writes.append(path + "/ (directory created)")
        for name in sorted(filenames):
            path = rel.rstrip("/") + "/" + name
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                writes.append(path + " (symlink)")
            elif stat.S_ISCHR(os.lstat(full).st_mode):
                writes.append(path + " (deleted)")
            elif os.path.lexists(path):
                writes.append(path + " (modified)")
            else:
                writes.append(path + " (created)")
        dirnames[:] = [d for d in dirnames if (rel.rstrip("/") + "/" + d) not in ("/dev", "/proc", "/sys")]
    return writes


def record_writes(case_dir, mode, writes):
    note = os.path.join(case_dir, "outside", WRITES_NOTE)
    text = "sandbox (%s): the CLI wrote outside the case directory; those writes were contained:\n%s\n" % (
        mode, "\n".join("  " + w for w in writes))
    try:
        with open(note, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        sys.stderr.write("adapter: cannot record the writes in %s: %s\n" % (note, e))
    sys.stderr.write("adapter: " + text)


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
    cwd = os.path.abspath(msg.get("workspaceRoot") or os.getcwd())
    case_dir = os.path.dirname(cwd)
    cli = list(args.cli)
    stdin = patch.encode("utf-8", "surrogatepass")
    if args.input == "arg":
        cli.append(patch)
        stdin = b""
    mode = choose_sandbox(args.sandbox)
    proc, writes = None, []
    if mode == "overlay":
        proc, writes = run_overlay(args, cli, stdin, cwd, case_dir)
        if proc is None:
            mode = "bwrap" if shutil.which("bwrap") else "none"
            if args.sandbox == "overlay":
                sys.stderr.write("adapter: --sandbox overlay could not be set up\n")
                sys.exit(70)
    if proc is None:
        argv = cli
        if mode == "bwrap":
            argv = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                    "--bind", case_dir, case_dir, "--chdir", cwd, "--die-with-parent", "--"] + cli
        proc = run(args, argv, stdin, cwd)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    # The CLI's own output, for the reader of a failing case; never judged.
    sys.stderr.write(err)
    if proc.returncode < 0:
        sys.stderr.write("adapter: %s was killed by signal %d\n" % (cli[0], -proc.returncode))
        sys.exit(70)
    if mode == "bwrap" and any(m in err or m in out for m in EROFS_MARKERS):
        writes = ["(blocked by the read-only sandbox; the CLI said: %s)" % clip(err or out)]
    if writes:
        record_writes(case_dir, mode, writes)
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
