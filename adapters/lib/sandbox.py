"""Confine an implementation under test, and list what it wrote outside the
case directory. Shared by every adapter that lets an implementation touch
the disk itself (envelope-cli, and through it the codex releases,
codex-apply-patch on disk, apply-patch-py, the agents-core worker).

An implementation under test may write anywhere its user can (an absolute
path, `..`, a symlink out of the workspace), and the runner only watches the
case directory (the workspace and the sentinel directory beside it). So the
program runs confined, and what it did outside the case directory is
recorded in the case directory's `outside/sandbox-writes.txt`, where the
runner reports it as a write outside the workspace (`wrote-outside`):

  overlay  (as root, with unshare, chroot and overlayfs): a private mount
           namespace whose root is an overlay of `/` on a scratch upper
           layer, with /dev /proc /sys and the case directory bound in. Writes
           elsewhere succeed, in the scratch layer only, and are listed
           exactly (created, modified, deleted, symlink, directory); the
           scratch layer is then thrown away.
  bwrap    (bubblewrap): `/` read-only except the case directory. A blocked
           write fails with EROFS; it is recorded only when the program's
           message shows the OS error ("Read-only file system", "os error 30").
  none     unconfined.
  auto     overlay when running as root and it can be set up, else bwrap
           when on PATH, else none.

Writes through `..` or symlinks into the sentinel directory are real in
every mode (that directory is the runner's to inspect). Python 3.8+,
standard library only.
"""

import os
import shutil
import stat
import subprocess
import tempfile

from protocol import Crash

MODES = ("auto", "overlay", "bwrap", "none")
# What a write blocked by the read-only sandbox looks like in any language.
EROFS_MARKERS = ("Read-only file system", "os error 30", "EROFS")
WRITES_NOTE = "sandbox-writes.txt"
# Bound on what is quoted from a program's output.
OUTPUT_LIMIT = 4000
# Exit status of the overlay wrapper when it could not set itself up (the
# program has not run then, so the call is retried under bwrap or unconfined).
OVERLAY_SETUP_FAILED = 197
OVERLAY_SCRIPT = r"""
S="$1"; CASE="$2"; CWD="$3"; shift 3
fail() { echo "patchspec-overlay: $1" >&2; exit 197; }
mount -t overlay patchspec-overlay -o "lowerdir=/,upperdir=$S/up,workdir=$S/work" "$S/root" || fail "mount overlay"
for m in /dev /proc /sys; do mount --rbind "$m" "$S/root$m" || fail "bind $m"; done
mount --rbind "$CASE" "$S/root$CASE" || fail "bind the case directory"
exec chroot "$S/root" /bin/sh -c 'cd "$1" || exit 197; shift; exec "$@"' sh "$CWD" "$@"
"""


class SandboxUnavailable(Exception):
    """The sandbox asked for explicitly cannot be used here."""


def clip(text):
    text = text.strip()
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + "\n[... cut by the adapter]"
    return text


def choose(wanted):
    """The mode to try first for `wanted` (one of MODES)."""
    if wanted == "bwrap" and not shutil.which("bwrap"):
        raise SandboxUnavailable("--sandbox bwrap, but bwrap is not on PATH (Debian: apt-get install bubblewrap)")
    if wanted != "auto":
        return wanted
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("chroot"):
        return "overlay"
    return "bwrap" if shutil.which("bwrap") else "none"


def bwrap_argv(argv, cwd, case_dir):
    return [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--bind", case_dir, case_dir, "--chdir", cwd, "--die-with-parent", "--"] + list(argv)


def overlay_argv(argv, cwd, case_dir, scratch):
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", OVERLAY_SCRIPT,
            "sh", scratch, case_dir, cwd] + list(argv)


def execute(argv, stdin, cwd, timeout):
    """Run argv; a program that cannot start or does not finish is a Crash."""
    try:
        return subprocess.run(argv, input=stdin, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)
    except OSError as e:
        raise Crash("cannot start %s: %s" % (argv[0], e))
    except subprocess.TimeoutExpired:
        raise Crash("%s did not finish within %.0fs" % (argv[0], timeout))


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
            path = rel.rstrip("/") + "/" + name
            if os.path.islink(os.path.join(dirpath, name)):
                # os.walk lists a symlink to a directory with the directories.
                writes.append(path + " (symlink)")
            elif path not in keep_dirs and not os.path.isdir(path):
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


def run_overlay(argv, stdin, cwd, case_dir, timeout):
    """(process, writes outside the case directory), or (None, []) when the
    overlay could not be set up."""
    scratch = tempfile.mkdtemp(prefix="patchspec-overlay-")
    try:
        for d in ("up", "work", "root"):
            os.mkdir(os.path.join(scratch, d))
        proc = execute(overlay_argv(argv, cwd, case_dir, scratch), stdin, cwd, timeout)
        if proc.returncode == OVERLAY_SETUP_FAILED and b"patchspec-overlay:" in proc.stderr:
            return None, []
        return proc, overlay_writes(os.path.join(scratch, "up"), case_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_confined(argv, stdin, cwd, case_dir, wanted="auto", timeout=60.0):
    """Run `argv` in `cwd` confined by `wanted`; returns (process, mode used,
    writes outside `case_dir`). Falls back from overlay to bwrap to none under
    `auto`; raises SandboxUnavailable when an explicit mode cannot be used."""
    mode = choose(wanted)
    if mode == "overlay":
        proc, writes = run_overlay(argv, stdin, cwd, case_dir, timeout)
        if proc is not None:
            return proc, mode, writes
        if wanted == "overlay":
            raise SandboxUnavailable("--sandbox overlay could not be set up")
        mode = "bwrap" if shutil.which("bwrap") else "none"
    if mode == "bwrap":
        proc = execute(bwrap_argv(argv, cwd, case_dir), stdin, cwd, timeout)
        said = proc.stderr.decode("utf-8", "replace") + proc.stdout.decode("utf-8", "replace")
        writes = []
        if any(m in said for m in EROFS_MARKERS):
            writes = ["(blocked by the read-only sandbox; the program said: %s)" % clip(said)]
        return proc, mode, writes
    return execute(argv, stdin, cwd, timeout), "none", []


def record_writes(case_dir, mode, writes, stderr):
    """Note the writes in `case_dir/outside/sandbox-writes.txt` (the runner
    reports them) and on stderr (the reader of the cell sees them)."""
    text = "sandbox (%s): the program wrote outside the case directory; those writes were contained:\n%s\n" % (
        mode, "\n".join("  " + w for w in writes))
    note = os.path.join(case_dir, "outside", WRITES_NOTE)
    try:
        with open(note, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        stderr.write("adapter: cannot record the writes in %s: %s\n" % (note, e))
    stderr.write("adapter: " + text)
