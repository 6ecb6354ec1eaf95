#!/usr/bin/env python3
"""patchspec oneshot adapter for crates.io `zenpatch` (`zenpatch::apply`):
the library works on an in-memory VFS ({path: text}); the harness binary
`zenpatch-vfs` (src/main.rs, built by install.sh) runs it, and this adapter
is the host that reads the workspace and writes the answer back.

Per TOOL_CALL (README.md says it exactly):
  1. the workspace's regular UTF-8 files become the VFS, keyed by relative
     path with `/` (lib/memory_host.read_workspace: the host every in-memory
     column shares; other files are left out, a VFS holds text only);
  2. `zenpatch-vfs` applies the patch; `{"ok": false}` is a refusal with
     zenpatch's message, a dead harness (a panic: status 101) a crash;
  3. the new VFS is carried out (lib/memory_host.write_back): every file
     whose text changed or that is new is written, every path the VFS lost
     is removed; a path outside the workspace is refused, nothing written.

The protocol is adapters/lib/protocol.py. No error `kind`: use --judge outcome.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import protocol  # noqa: E402
from memory_host import read_workspace, write_back  # noqa: E402
from protocol import Refusal  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# As for cap-memory: no JSON parameters reach the library, and path safety is
# the host's (this adapter's), so the paths/symlink cases would measure it.
UNSUPPORTED_TAGS = ["stale", "partial", "params", "paths", "symlink"]
# Beyond the runner's own timeout, a bound of the adapter's.
HARNESS_TIMEOUT = 60.0


def harness():
    return os.path.join(HERE, ".build", "zenpatch-vfs")


def version():
    try:
        with open(os.path.join(HERE, ".build", "VERSION")) as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def run_harness(binary, patch, files):
    """zenpatch's answer for `patch` over `files`: the new VFS, or a Refusal/Crash."""
    request = json.dumps({"patch": patch, "files": files}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        proc = subprocess.run([binary], input=request, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=HARNESS_TIMEOUT)
    except OSError as e:
        raise protocol.Crash("cannot start %s: %s" % (binary, e))
    except subprocess.TimeoutExpired:
        raise protocol.Crash("zenpatch did not finish within %.0fs" % HARNESS_TIMEOUT)
    if proc.returncode != 0:
        raise protocol.Crash("zenpatch-vfs exited with status %d: %s" % (
            proc.returncode, proc.stderr.decode("utf-8", "replace").strip()[-2000:]))
    answer = json.loads(proc.stdout.decode("utf-8"))
    if not answer.get("ok"):
        raise Refusal(answer.get("error") or "(no message)", "implementation")
    return answer["files"]


def apply(binary, root, patch):
    before = read_workspace(root)
    after = run_harness(binary, patch, before)
    deleted = [path for path in before if path not in after]
    try:
        done = write_back(root, before, after, deleted)
    except OSError as e:
        raise Refusal("writing the result back: %s" % e, "filesystem")
    return {"success": True, "written": done}


def hello():
    return protocol.hello("zenpatch apply", version(), UNSUPPORTED_TAGS, language="Rust",
                          homepage="https://crates.io/crates/zenpatch")


def main(argv):
    if argv:
        sys.stderr.write("usage: adapter.py < MESSAGE\n")
        return protocol.USAGE_EXIT
    return protocol.serve(hello, lambda patch, root: apply(harness(), root, patch))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
