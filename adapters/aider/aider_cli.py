#!/usr/bin/env python3
"""aider's PatchCoder (PyPI aider-chat, aider/coders/patch_coder.py) as an
envelope CLI, for adapters/envelope-cli/adapter.py (which runs it in the
sandbox).

Reads the envelope on stdin and does what aider does with a model reply in
its `patch` edit format, in the current directory (the repository root):
`get_edits()` parses the reply (the file's own parser, which reads the files
it names and matches context with fuzz), then `apply_edits(edits)` writes
the files. Both are PatchCoder's own methods, loaded from the installed
patch_coder.py. What they need from aider's `Coder` base class is stubbed,
the smallest honest stub (README.md lists it):

  * `root` = the current directory; `abs_root_path(path)` as aider's
    (`Path(root) / path`, resolved);
  * `partial_response_content` = the envelope (the model's reply);
  * `io.read_text` / `io.write_text` as aider's InputOutput with its
    defaults (encoding utf-8, line endings "platform": text mode, so a
    read turns CRLF into LF and a write writes LF); `tool_output`,
    `tool_warning`, `tool_error` print to stderr.

Not run: `prepare_to_edit` (the confirmation prompts, the git commit of
dirty files) and everything around the model. patch_coder.py imports
`.base_coder` (the Coder class, thousands of lines and most of aider's
dependencies) and `.patch_prompts` (prompt text); both are stub modules here.

Exit status: 0 when both steps ran without an error (also when get_edits
found nothing to apply, as aider then reports nothing to the model); 1 with
the message aider reflects to the model when either raised ValueError (how
PatchCoder reports every failure); any other exception is a crash (a
traceback, exit 70).
"""

import importlib.util
import os
import sys
import types
from pathlib import Path

CRASH_EXIT = 70


def patch_coder_path():
    spec = importlib.util.find_spec("aider")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("aider_cli.py: aider-chat is not installed in this interpreter")
    return os.path.join(list(spec.submodule_search_locations)[0], "coders", "patch_coder.py")


class StubIO:
    """aider.io.InputOutput's file methods with its defaults; messages to stderr."""

    encoding = "utf-8"
    newline = None  # line_endings="platform"

    def read_text(self, filename, silent=False):
        try:
            with open(str(filename), "r", encoding=self.encoding) as f:
                return f.read()
        except FileNotFoundError:
            self.tool_error("%s: file not found error" % filename)
        except IsADirectoryError:
            self.tool_error("%s: is a directory" % filename)
        except OSError as err:
            self.tool_error("%s: unable to read: %s" % (filename, err))
        except UnicodeError as e:
            self.tool_error("%s: %s" % (filename, e))
        return None

    def write_text(self, filename, content):
        with open(str(filename), "w", encoding=self.encoding, newline=self.newline) as f:
            f.write(content)

    def tool_output(self, *messages, **_):
        sys.stderr.write(" ".join(str(m) for m in messages) + "\n")

    tool_warning = tool_output
    tool_error = tool_output


def stub_coder_class():
    class Coder:
        """What PatchCoder uses of aider's Coder base class, nothing more."""

        def __init__(self, root, reply):
            self.root = root
            self.io = StubIO()
            self.partial_response_content = reply
            self.abs_root_path_cache = {}

        def abs_root_path(self, path):
            # aider's: Path(self.root) / path, then utils.safe_abs_path (resolve).
            return str((Path(self.root) / path).resolve())

    return Coder


def load_patch_coder(path):
    """patch_coder.py as module aider.coders.patch_coder, its two relative
    imports answered by stubs (aider's own package __init__ is not run)."""
    for name in ("aider", "aider.coders"):
        pkg = types.ModuleType(name)
        pkg.__path__ = []
        sys.modules[name] = pkg
    base = types.ModuleType("aider.coders.base_coder")
    base.Coder = stub_coder_class()
    prompts = types.ModuleType("aider.coders.patch_prompts")
    prompts.PatchPrompts = type("PatchPrompts", (), {})
    sys.modules[base.__name__] = base
    sys.modules[prompts.__name__] = prompts
    spec = importlib.util.spec_from_file_location("aider.coders.patch_coder", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run(patch_coder, root, reply):
    """(exit status, message) for one reply applied in `root`."""
    coder = patch_coder.PatchCoder(root, reply)
    try:
        edits = coder.get_edits()
        coder.apply_edits(edits)
    except ValueError as err:
        return 1, str(err.args[0]) if err.args else "ValueError"
    return 0, "applied %d edit(s)" % len(edits)


def main(argv):
    path = patch_coder_path()
    if argv == ["--version"]:
        from importlib.metadata import version
        print(version("aider-chat"))
        return 0
    reply = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    status, message = run(load_patch_coder(path), os.getcwd(), reply)
    (sys.stdout if status == 0 else sys.stderr).write(message + "\n")
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit:
        raise
    except BaseException:
        import traceback
        traceback.print_exc()
        sys.exit(CRASH_EXIT)
