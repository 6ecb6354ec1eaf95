#!/usr/bin/env python3
"""patchspec oneshot adapter for `agents.apply_diff.apply_diff` (PyPI openai-agents).

`apply_diff(input, diff, mode)` is a per-file function: text in, text out,
no file system. This adapter is the host around it, and README.md lists
exactly what the adapter adds. In short, per TOOL_CALL (docs/protocol.md,
transport `oneshot`):

  1. split params.patch into per-file operations (Add / Delete / Update with
     an optional Move to), by the rules of the SDK's own envelope splitter
     (agents/sandbox/capabilities/tools/apply_patch_tool.py);
  2. check every path: relative, no `..` escape (the SDK's editor checks paths
     too, before writing anything);
  3. run the operations in order, as the SDK's WorkspaceEditor does:
       Update: read the file (UTF-8), new = apply_diff(old, body), write new
               (to the Move to path, then remove the source, for a move);
       Add:    refuse if the path exists, content = apply_diff("", body,
               mode="create"), write it;
       Delete: refuse if the file does not exist, remove it;
     the first failure stops the run; earlier operations stay done (the SDK's
     editor is not atomic across files either).

The answer: {"success": true, "operations": [...]} or {"success": false,
"error": {"message", "source", "operation", "path", "applied"}} where
`source` says who refused: "apply_diff" (it raised ValueError, its way of
refusing), "adapter" (the split, a path check, an existence check) or
"filesystem". Any other exception from apply_diff is a bug in it: the adapter
then dies with the traceback and no answer, which the runner reports as a
crash. No error `kind`: use `--judge outcome`.

Loading: by default the module file agents/apply_diff.py of the installed
distribution is loaded on its own, without running the package's __init__
(which imports the whole SDK and takes seconds, per case). The function is
the same code; `--import-package` uses `from agents.apply_diff import
apply_diff` instead.
"""

import argparse
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from protocol import Refusal  # noqa: E402
import protocol  # noqa: E402

DISTRIBUTION = "openai-agents"
# Cases the adapter declares unsupported (README.md says why).
UNSUPPORTED_TAGS = ["stale", "partial", "params", "paths", "symlink"]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "


def distribution_version():
    try:
        from importlib.metadata import version
        return version(DISTRIBUTION)
    except Exception:  # metadata missing: report it, do not guess
        return "unknown"


def load_apply_diff(import_package):
    if import_package:
        from agents.apply_diff import apply_diff
        return apply_diff
    spec = importlib.util.find_spec("agents")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the package 'agents' (%s) is not installed in %s" % (DISTRIBUTION, sys.prefix))
    path = os.path.join(list(spec.submodule_search_locations)[0], "apply_diff.py")
    module_spec = importlib.util.spec_from_file_location("agents_apply_diff_standalone", path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError("cannot load %s" % path)
    module = importlib.util.module_from_spec(module_spec)
    # dataclasses looks the module up in sys.modules while creating classes.
    sys.modules[module_spec.name] = module
    module_spec.loader.exec_module(module)
    return module.apply_diff


def split(patch):
    """The envelope as [(kind, path, move_to, body)], by the SDK splitter's rules."""
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines or lines[0] != BEGIN:
        raise Refusal("the envelope must start with '%s'" % BEGIN, "adapter")
    if len(lines) < 2 or lines[-1] != END:
        raise Refusal("the envelope must end with '%s'" % END, "adapter")

    def is_header(line):
        return line.startswith(ADD) or line.startswith(DELETE) or line.startswith(UPDATE)

    ops = []
    i = 1
    last = len(lines) - 1
    while i < last:
        line = lines[i]
        if not is_header(line):
            raise Refusal("not a file operation header: %r" % line, "adapter")
        if line.startswith(ADD):
            kind, path = "add", line[len(ADD):].strip()
        elif line.startswith(DELETE):
            kind, path = "delete", line[len(DELETE):].strip()
        else:
            kind, path = "update", line[len(UPDATE):].strip()
        if not path:
            raise Refusal("a file operation header without a path: %r" % line, "adapter")
        i += 1
        move_to = None
        if kind == "update" and i < last and lines[i].startswith(MOVE):
            move_to = lines[i][len(MOVE):].strip()
            if not move_to:
                raise Refusal("'*** Move to:' without a path", "adapter")
            i += 1
        body = []
        while i < last and not is_header(lines[i]):
            body.append(lines[i])
            i += 1
        if kind == "delete" and body:
            raise Refusal("Delete File %s has lines after its header" % path, "adapter")
        ops.append((kind, path, move_to, "\n".join(body) + ("\n" if body else "")))
    if not ops:
        raise Refusal("the envelope has no file operation", "adapter")
    return ops


def resolve(root, path, index):
    """A workspace path for `path`, or a refusal (absolute, or `..` escaping)."""
    if os.path.isabs(path) or path.startswith("\\") or (len(path) > 1 and path[1] == ":"):
        raise Refusal("absolute path refused: %r" % path, "adapter", operation=index, path=path)
    norm = os.path.normpath(path)
    if norm == ".." or norm.startswith(".." + os.sep) or norm == ".":
        raise Refusal("path escapes the workspace: %r" % path, "adapter", operation=index, path=path)
    return os.path.join(root, norm)


def write(path, text):
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8", "surrogatepass"))


def apply(apply_diff, root, patch):
    ops = split(patch)
    targets = []
    for index, (kind, path, move_to, body) in enumerate(ops):
        src = resolve(root, path, index)
        dst = resolve(root, move_to, index) if move_to is not None else None
        targets.append((kind, path, move_to, body, src, dst))
    applied = []
    for index, (kind, path, move_to, body, src, dst) in enumerate(targets):
        try:
            if kind == "delete":
                if not os.path.isfile(src):
                    raise Refusal("Delete File: %s does not exist" % path, "adapter", operation=index, path=path)
                os.remove(src)
            elif kind == "add":
                if os.path.lexists(src):
                    raise Refusal("Add File: %s already exists" % path, "adapter", operation=index, path=path)
                try:
                    text = apply_diff("", body, mode="create")
                except ValueError as e:
                    raise Refusal("%s: %s" % (type(e).__name__, e), "apply_diff", operation=index, path=path)
                write(src, text)
            else:
                try:
                    with open(src, "rb") as f:
                        raw = f.read()
                except OSError as e:
                    raise Refusal("Update File: cannot read %s: %s" % (path, e.strerror or e), "filesystem", operation=index, path=path)
                try:
                    old = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise Refusal("Update File: %s is not UTF-8 (%s)" % (path, e.reason), "adapter", operation=index, path=path)
                try:
                    new = apply_diff(old, body)
                except ValueError as e:
                    raise Refusal("%s: %s" % (type(e).__name__, e), "apply_diff", operation=index, path=path)
                if dst is None or os.path.normpath(dst) == os.path.normpath(src):
                    write(src, new)
                else:
                    write(dst, new)
                    os.remove(src)
        except OSError as e:
            raise Refusal("%s %s: %s" % (kind, path, e.strerror or e), "filesystem", operation=index, path=path)
        except Refusal as r:
            r.fields["applied"] = list(applied)
            raise
        entry = {"operation": kind, "path": path}
        if move_to is not None:
            entry["moveTo"] = move_to
        applied.append(entry)
    return applied


def handle(args, patch, root):
    return {"success": True, "operations": apply(load_apply_diff(args.import_package), root, patch)}


def hello():
    return protocol.hello("openai-agents apply_diff", distribution_version(), UNSUPPORTED_TAGS,
                          language="Python", homepage="https://pypi.org/project/openai-agents/")


def main(argv):
    p = argparse.ArgumentParser(prog="adapter.py", description=__doc__.split("\n")[0])
    p.add_argument("--import-package", action="store_true",
                   help="import agents.apply_diff through the package (slow: imports the whole SDK)")
    args = p.parse_args(argv)
    return protocol.serve(hello, lambda patch, root: handle(args, patch, root))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
