"""A small correct `workspace.read_file` (docs/tools.md), for the kit's examples.

Cost: one walk of the path's segments (at most 40 symlinks followed) and
one read of the file.
"""

import hashlib
import os
import stat

MAX_LINKS = 40


def _fail(code, message):
    return {"success": False, "errorCode": code, "errors": [message]}


def _resolve(root, path):
    """The file's absolute path, or None when the path leaves the workspace."""
    if path.startswith("/") or "\\" in path or "\0" in path or (len(path) > 1 and path[1] == ":"):
        return None
    pending = [s for s in path.split("/") if s not in ("", ".")]
    done = []  # segments below the root, symlinks resolved
    links = 0
    while pending:
        segment = pending.pop(0)
        if segment == "..":
            if not done:
                return None
            done.pop()
            continue
        here = os.path.join(root, *done, segment)
        if os.path.islink(here):
            links += 1
            target = os.readlink(here)
            if links > MAX_LINKS or target.startswith("/"):
                return None
            pending[:0] = [s for s in target.split("/") if s not in ("", ".")]
            continue
        done.append(segment)
    return os.path.join(root, *done)


def _cut(data, max_bytes):
    """At most max_bytes of data; a UTF-8 character the cut falls inside is left out."""
    if max_bytes is None or max_bytes >= len(data):
        return data, False
    part = data[:max_bytes]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return part, True  # not UTF-8: cut anywhere
    while part and not _decodes(part):
        part = part[:-1]
    return part, True


def _decodes(data):
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def read_file(params, workspace_root, session):
    """The `workspace.read_file` result document for one call."""
    if not isinstance(params, dict):
        return _fail("INVALID_ARGUMENT", "params must be an object.")
    path, max_bytes = params.get("path"), params.get("maxBytes")
    if not isinstance(path, str) or not path.strip():
        return _fail("INVALID_ARGUMENT", "path must be a non-empty string.")
    if max_bytes is not None and (type(max_bytes) is not int or max_bytes < 1):
        return _fail("INVALID_ARGUMENT", "maxBytes must be a positive integer.")
    if path in (session.get("activeFiles") or {}):
        return _fail(
            "ALREADY_IN_CONTEXT",
            "File '%s' is already present in activeFiles for this session; reuse that content." % path,
        )
    full = _resolve(workspace_root, path)
    if full is None:
        return _fail("INVALID_ARGUMENT", "Path '%s' leaves the workspace." % path)
    try:
        if not stat.S_ISREG(os.stat(full).st_mode):
            raise FileNotFoundError(full)
        with open(full, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return _fail(
            "NOT_FOUND",
            "File '%s' is not available in activeFiles or the workspace. Ask the user to upload it if needed." % path,
        )
    part, truncated = _cut(data, max_bytes)
    file = {
        "path": path,
        "sizeBytes": len(data),
        "content": part.decode("utf-8", errors="replace"),
        "isTruncated": truncated,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if not _decodes(part):
        file["encoding"] = "utf-8-lossy"
    return {"success": True, "file": file}
