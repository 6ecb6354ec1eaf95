"""The host side of an in-memory applier: the workspace read into
{relative path: text}, and the applier's answer carried out on disk.
Shared by the adapters whose library never touches the disk itself
(codex-apply-patch-pypi's in-memory column, zenpatch).

The host decides path safety: a result path that is absolute or climbs out
with `..` is refused before anything is written, so a refusal changes
nothing. Python 3.8+, standard library only.
"""

import os

from protocol import Refusal


def read_workspace(root):
    """{relative path: text} of the UTF-8 regular files under root (symlinks not followed)."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            with open(full, "rb") as f:
                raw = f.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            files[os.path.relpath(full, root).replace(os.sep, "/")] = text
    return files


def inside(root, path):
    """The absolute path for a workspace-relative `path`, or None when it is not one."""
    if not path or os.path.isabs(path) or path.startswith("\\") or (len(path) > 1 and path[1] == ":"):
        return None
    norm = os.path.normpath(path)
    if norm in (".", "..") or norm.startswith(".." + os.sep):
        return None
    return os.path.join(root, norm)


def write_back(root, before, written, deleted):
    """Carry the library's answer out in the workspace: write every file of
    `written` ({path: text}, the files the patch added or changed) whose text
    differs from `before`, then remove every path of `deleted`. Refuses before
    writing anything if one of those paths is not inside the workspace.
    Returns the operations done."""
    for path in list(written) + list(deleted):
        if inside(root, path) is None:
            raise Refusal("the library returned a path outside the workspace: %r (nothing written)" % path, "adapter",
                          path=path)
    done = []
    for path, text in written.items():
        if before.get(path) == text:
            continue
        full = inside(root, path)
        parent = os.path.dirname(full)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(full, "wb") as f:
            f.write(text.encode("utf-8", "surrogatepass"))
        done.append({"operation": "write", "path": path})
    for path in deleted:
        full = inside(root, path)
        if os.path.lexists(full):
            os.remove(full)
            done.append({"operation": "remove", "path": path})
    return done
