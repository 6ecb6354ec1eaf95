#!/usr/bin/env python3
"""Nested-root trials: do writers at `--root ws` and `--root ws/sub` lose each other's edits?

Two shapes (docs/security.md, "Nested workspaces"):

  lost-update (--trials, default 100): `ws/sub/big.txt` (about 3 MB, one
      numbered line each). Two `patchspec apply` processes are started and
      made to wait on their standard input, then given their patches at the
      same moment: one with `--root ws` edits line 10 of `sub/big.txt`, one
      with `--root ws/sub` edits the last line of `big.txt`; no stale checks.
      After both exit, every edit reported applied (exit 0) must be in the
      file; one that is not is a lost edit.

  kill-inner (--kill-trials, default 50): an inner-root apply (`--root
      ws/sub`) of a 2-file patch (f1.txt, f2.txt) is SIGKILLed at its 2nd
      rename by strace's fault injection (`-e inject=rename,renameat,
      renameat2:signal=SIGKILL:when=2`), leaving its journal; then an
      outer-root apply (`--root ws`) edits another line of `sub/f1.txt` (its
      exit code recorded); then an inner-root `call workspace.read_file`, an
      inner-root write of an unrelated file (other.txt) and `patchspec
      recover --root ws/sub`. A lost edit is an outer apply that exited 0
      whose edit is not in `sub/f1.txt` at the end. Refusing the outer apply
      (exit 1), or recovering the inner journal before it, is fine. Also
      counted, not judged: runs strace did not kill, and inner transactions
      left mixed at the end (one of f1/f2 with the inner edit, the other
      without).

Every command runs under --timeout (default 60 s); a timeout fails its trial.
A trial passes with 0 lost edits. Prints a summary (trials, edits applied,
refused, lost) and closes with `nested-roots: N passed, N failed`; exit 1 on
any failure.

Usage: scripts/nested-roots.py BIN [--trials 100] [--kill-trials 50]
       [--work /dev/shm/patchspec-nested] [--timeout 60] [--json OUT]
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

MB = 1 << 20
LINE = "line %08d " + "z" * 50 + "\n"


def patch(path, before, old, new):
    return "\n".join(["*** Begin Patch", "*** Update File: " + path, "@@",
                      " " + before, "-" + old, "+" + new, "*** End Patch", ""])


def run(cmd, timeout, stdin=None):
    """(rc or None on timeout, stderr text)."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = p.communicate(stdin, timeout=timeout)
        return p.returncode, err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        return None, err.decode(errors="replace")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def fresh(base, trial):
    if os.path.exists(trial):
        shutil.rmtree(trial)
    # Hard links: the engine never writes a file in place (temp + rename).
    subprocess.run(["cp", "-al", base, trial], check=True)


def lost_update(binary, work, trials, timeout, tally, log):
    base = os.path.join(work, "base-big")
    os.makedirs(os.path.join(base, "sub"))
    n = 3 * MB // len(LINE % 0)
    with open(os.path.join(base, "sub", "big.txt"), "w") as f:
        f.write("".join(LINE % i for i in range(n)))
    line = lambda i: (LINE % i).rstrip("\n")
    outer = patch("sub/big.txt", line(8), line(9), "OUTER EDIT AT LINE 10").encode()
    inner = patch("big.txt", line(n - 2), line(n - 1), "INNER EDIT AT THE LAST LINE").encode()
    trial = os.path.join(work, "trial")
    t = tally.setdefault("lost-update", {"trials": 0, "passed": 0, "applied": 0, "refused": 0,
                                         "lost_edits": 0, "both_exit_0": 0, "timeouts": 0, "refusals": {}})
    for i in range(trials):
        fresh(base, trial)
        ws = trial
        cmds = [([binary, "apply", "-", "--root", ws], outer, "OUTER EDIT AT LINE 10\n"),
                ([binary, "apply", "-", "--root", os.path.join(ws, "sub")], inner, "INNER EDIT AT THE LAST LINE\n")]
        # Both started and waiting on stdin; then both patches given at once.
        procs = [subprocess.Popen(c, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True) for c, _, _ in cmds]
        time.sleep(0.05)
        for p, (_, text, _) in zip(procs, cmds):
            p.stdin.write(text)
        for p in procs:
            p.stdin.close()
        results = []
        deadline = time.monotonic() + timeout
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
                results.append((p.returncode, p.stderr.read().decode(errors="replace")))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                results.append((None, "timeout"))
        final = read(os.path.join(ws, "sub", "big.txt"))
        lost = 0
        for (rc, err), (_, _, marker) in zip(results, cmds):
            if rc == 0:
                t["applied"] += 1
                if marker not in final:
                    lost += 1
            elif rc is None:
                t["timeouts"] += 1
            else:
                t["refused"] += 1
                kind = err.split("]")[0].split("[")[-1] if "error[" in err else err.strip()[:60]
                t["refusals"][kind] = t["refusals"].get(kind, 0) + 1
        t["trials"] += 1
        t["lost_edits"] += lost
        t["both_exit_0"] += all(rc == 0 for rc, _ in results)
        ok = lost == 0 and all(rc is not None for rc, _ in results)
        t["passed"] += ok
        log.append({"shape": "lost-update", "trial": i, "rcs": [rc for rc, _ in results], "lost": lost, "passed": ok})


def kill_inner(binary, work, trials, timeout, tally, log):
    base = os.path.join(work, "base-kill")
    os.makedirs(os.path.join(base, "sub"))
    for name in ("f1.txt", "f2.txt", "other.txt"):
        with open(os.path.join(base, "sub", name), "w") as f:
            f.write("".join("%s line %d\n" % (name, i) for i in range(1, 11)))
    inner = "\n".join(["*** Begin Patch",
                       "*** Update File: f1.txt", "@@", " f1.txt line 2", "-f1.txt line 3", "+INNER f1",
                       "*** Update File: f2.txt", "@@", " f2.txt line 2", "-f2.txt line 3", "+INNER f2",
                       "*** End Patch", ""])
    outer = patch("sub/f1.txt", "f1.txt line 7", "f1.txt line 8", "OUTER f1")
    other = patch("other.txt", "other.txt line 4", "other.txt line 5", "INNER other")
    patches = {}
    for name, text in [("inner", inner), ("outer", outer), ("other", other)]:
        patches[name] = os.path.join(work, name + ".patch")
        with open(patches[name], "w") as f:
            f.write(text)
    trial = os.path.join(work, "trial")
    sub = os.path.join(trial, "sub")
    calls = "rename,renameat,renameat2"
    t = tally.setdefault("kill-inner", {"trials": 0, "passed": 0, "killed": 0, "journal_left": 0,
                                        "outer_applied": 0, "outer_refused": 0, "lost_edits": 0,
                                        "inner_mixed_at_end": 0, "timeouts": 0, "refusals": {}})
    for i in range(trials):
        fresh(base, trial)
        problems = []
        rc, _ = run(["strace", "-f", "-o", "/dev/null", "-e", "trace=" + calls,
                     "-e", "inject=%s:signal=SIGKILL:when=2" % calls,
                     binary, "apply", patches["inner"], "--root", sub], timeout)
        killed = rc not in (0, None)
        t["killed"] += killed
        txn = os.path.join(sub, ".patchspec", "txn")
        t["journal_left"] += bool(os.path.isdir(txn) and os.listdir(txn))
        rc_outer, err = run([binary, "apply", patches["outer"], "--root", trial], timeout)
        if rc_outer == 0:
            t["outer_applied"] += 1
        elif rc_outer is not None:
            t["outer_refused"] += 1
            kind = err.split("]")[0].split("[")[-1] if "error[" in err else err.strip()[:60]
            t["refusals"][kind] = t["refusals"].get(kind, 0) + 1
        rcs = [rc, rc_outer]
        for cmd in ([binary, "call", "workspace.read_file", '{"path":"f1.txt"}', "--root", sub],
                    [binary, "apply", patches["other"], "--root", sub],
                    [binary, "recover", "--root", sub]):
            rcs.append(run(cmd, timeout)[0])
        timeouts = sum(r is None for r in rcs)
        t["timeouts"] += timeouts
        f1, f2 = read(os.path.join(sub, "f1.txt")), read(os.path.join(sub, "f2.txt"))
        lost = int(rc_outer == 0 and "OUTER f1\n" not in f1)
        t["lost_edits"] += lost
        t["inner_mixed_at_end"] += ("INNER f1\n" in f1) != ("INNER f2\n" in f2)
        ok = lost == 0 and timeouts == 0
        t["trials"] += 1
        t["passed"] += ok
        log.append({"shape": "kill-inner", "trial": i, "rcs": rcs, "lost": lost, "passed": ok})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin", metavar="BIN", help="the patchspec binary")
    ap.add_argument("--trials", type=int, default=100, help="lost-update trials (default 100)")
    ap.add_argument("--kill-trials", type=int, default=50, help="kill-inner trials (default 50)")
    ap.add_argument("--work", default="/dev/shm/patchspec-nested", help="scratch folder (emptied first)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds any one command may take")
    ap.add_argument("--json", help="write the tallies and every trial's exit codes here")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    if args.kill_trials and not shutil.which("strace"):
        sys.exit("nested-roots: strace is needed for the kill-inner trials (apt-get install -y strace), "
                 "or pass --kill-trials 0")
    work = os.path.abspath(args.work)
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    # One write first, so that whatever the engine makes once per user (a
    # key, say) exists before any rename is counted by strace.
    warm = os.path.join(work, "warm")
    os.makedirs(warm)
    with open(os.path.join(warm, "w.txt"), "w") as f:
        f.write("a\nb\n")
    with open(os.path.join(work, "warm.patch"), "w") as f:
        f.write(patch("w.txt", "a", "b", "c"))
    run([binary, "apply", os.path.join(work, "warm.patch"), "--root", warm], args.timeout)
    tally, log = {}, []
    started = time.monotonic()
    if args.trials:
        lost_update(binary, work, args.trials, args.timeout, tally, log)
    if args.kill_trials:
        kill_inner(binary, work, args.kill_trials, args.timeout, tally, log)
    summary = {"binary": binary, "seconds": round(time.monotonic() - started, 1), "tally": tally}
    print(json.dumps(summary, indent=2))
    for shape, t in tally.items():
        if shape == "lost-update":
            print("lost-update: %d trials, edits applied %d, refused %d, lost %d (both exit 0 in %d trials)"
                  % (t["trials"], t["applied"], t["refused"], t["lost_edits"], t["both_exit_0"]))
        else:
            print("kill-inner: %d trials (%d killed by strace, %d left a journal), outer applies applied %d, "
                  "refused %d, lost edits %d; inner mixed at the end %d"
                  % (t["trials"], t["killed"], t["journal_left"], t["outer_applied"], t["outer_refused"],
                     t["lost_edits"], t["inner_mixed_at_end"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(summary, trials=log), f, indent=2)
    shutil.rmtree(os.path.join(work, "trial"), ignore_errors=True)
    passed = sum(t["passed"] for t in tally.values())
    failed = sum(t["trials"] for t in tally.values()) - passed
    print("nested-roots: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
