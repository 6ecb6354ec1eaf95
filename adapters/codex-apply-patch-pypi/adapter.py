#!/usr/bin/env python3
"""patchspec oneshot adapter for `codex_apply_patch.apply_patch_in_memory`
(PyPI codex-apply-patch): the library's in-memory mode, with the adapter as
the host that reads the workspace and writes the answer back.

`apply_patch_in_memory(patch, files)` takes the patch and a dict
{path: text} and returns {added, modified, deleted, files}, where `files`
holds the new text of the files the patch added or changed (a move's
destination among them) and `deleted` the paths it deleted. A move's source
is in neither: 0.4.0 does not tell its host to remove it. Per TOOL_CALL the adapter (README.md says it exactly):

  1. reads every regular file under workspaceRoot that is UTF-8 text into
     `files`, keyed by its workspace-relative path with `/` (other files are
     left out: the library cannot hold bytes);
  2. calls apply_patch_in_memory(patch, files); a RuntimeError (its way of
     refusing) is a refusal, a panic is a crash;
  3. refuses, writing nothing, when the result names a path outside the
     workspace (absolute, or `..`): in-memory mode hands path safety to its
     host, and this host checks;
  4. carries the answer out: writes every file of `files` whose text
     differs from the input (creating parent directories), then removes every
     path of `deleted`. Nothing is written before the library has answered,
     so a refusal changes nothing.

The protocol is adapters/lib/protocol.py. No error `kind`: use --judge outcome.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import protocol  # noqa: E402
from protocol import Refusal  # noqa: E402
from memory_host import read_workspace, write_back  # noqa: E402,F401

DISTRIBUTION = "codex-apply-patch"
# stale/partial/params: no expectedSha256ByPath, no atomic:false, no JSON
# parameters in the library. paths/symlink: in memory there is no file
# system; path safety is the host's (this adapter's), so those cases would
# measure the adapter.
UNSUPPORTED_TAGS = ["stale", "partial", "params", "paths", "symlink"]


def distribution_version():
    try:
        from importlib.metadata import version
        return version(DISTRIBUTION)
    except Exception:  # metadata missing: report it, do not guess
        return "unknown"


def apply(apply_patch_in_memory, root, patch):
    before = read_workspace(root)
    try:
        result = apply_patch_in_memory(patch, dict(before))
    except Exception as e:
        raise Refusal("%s: %s" % (type(e).__name__, str(e).strip() or "(no message)"), "implementation")
    except BaseException as e:  # pyo3_runtime.PanicException derives from BaseException
        if type(e).__name__ == "PanicException":
            raise protocol.Crash("panic: %s" % e)
        raise
    try:
        done = write_back(root, before, dict(result.files), list(result.deleted))
    except OSError as e:
        raise Refusal("writing the result back: %s" % e, "filesystem")
    return {"success": True, "added": list(result.added), "modified": list(result.modified),
            "deleted": list(result.deleted), "written": done}


def hello():
    return protocol.hello("codex-apply-patch apply_patch_in_memory", distribution_version(), UNSUPPORTED_TAGS,
                          language="Rust (PyO3)", homepage="https://pypi.org/project/codex-apply-patch/")


def main(argv):
    if argv:
        sys.stderr.write("usage: adapter.py < MESSAGE\n")
        return protocol.USAGE_EXIT

    def handle(patch, root):
        from codex_apply_patch import apply_patch_in_memory
        return apply(apply_patch_in_memory, root, patch)

    return protocol.serve(hello, handle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
