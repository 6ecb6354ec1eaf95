#!/usr/bin/env python3
"""codex_apply_patch.apply_patch (PyPI codex-apply-patch) as an envelope CLI,
for adapters/envelope-cli/adapter.py (which runs it in the sandbox).

Reads the envelope on stdin and calls `apply_patch(patch)` in the current
directory (the library applies relative paths against it). Exit status:

  0  apply_patch returned codex's success summary ("Success. Updated the
     following files: ...", printed on stdout);
  1  apply_patch raised (its message on stderr), or returned anything else:
     on a hunk that does not match or a missing file, 0.4.0 raises nothing
     and returns "" — the only way it tells the caller that nothing applied;
  a signal (SIGABRT) when the Rust code panicked (PyO3's PanicException), so
     that the adapter reports a crash, not a refusal.
"""

import os
import signal
import sys

SUCCESS = "Success. Updated the following files:"


def main():
    import codex_apply_patch

    patch = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    try:
        out = codex_apply_patch.apply_patch(patch)
    except Exception as e:
        sys.stderr.write("%s: %s\n" % (type(e).__name__, str(e).strip() or "(no message)"))
        return 1
    except BaseException as e:  # pyo3_runtime.PanicException derives from BaseException
        if type(e).__name__ != "PanicException":
            raise
        sys.stderr.write("panic: %s\n" % e)
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGABRT)
    if isinstance(out, str) and out.startswith(SUCCESS):
        sys.stdout.write(out)
        return 0
    sys.stderr.write("apply_patch raised nothing but returned %r, not its success summary: nothing applied\n" % out)
    return 1


if __name__ == "__main__":
    sys.exit(main())
