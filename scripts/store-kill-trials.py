#!/usr/bin/env python3
"""Kill trials for a writing call with a patch store: applied <=> recorded?

`patchspec call apply_patch ... --store S` (a 13-file patch: 8 updates of
files of 0.5-2 MB, 3 deletes, 2 adds) is SIGKILLed:
  - `random` trials: at a uniformly random moment of its run
    (0 .. 1.2 x the measured uncontended run time);
  - `strace:<calls>` trials: by strace's fault injection at the N-th call of
    each group (pwrite64 and the other writes SQLite makes; fsync and
    fdatasync; the renames; unlinkat), for every N until a run completes.
Then the next writing call runs on the same workspace with the same store
(an apply_patch that is refused: it settles what the killed call left
pending), and the trial is checked:
  - the workspace (everything outside .patchspec/) is exactly the pre- or
    the post-state (`mixed` otherwise);
  - the killed call's records (every `calls` row but the last, which is the
    next call's own): `applied-unrecorded` when the workspace is the
    post-state and no record says success; `recorded-unapplied` when it is
    the pre-state and a record says success;
  - no `pending_commits` row is left, `PRAGMA integrity_check` is `ok`, and
    nothing is left in .patchspec/txn.

Usage: scripts/store-kill-trials.py BIN [--random 100] [--calls 'GROUP;GROUP'] [--work DIR] [--seed 1] [--json OUT]
Prints one line per group and the closing `store-kill-trials: N passed, N failed`.
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

DEFAULT_CALLS = "pwrite64,pwritev,write;fsync,fdatasync;rename,renameat,renameat2;unlinkat"


def build_base(base, rng):
    if os.path.exists(base):
        shutil.rmtree(base)
    os.makedirs(os.path.join(base, "src"))
    names = []
    for k in range(11):
        name = "src/f%02d.txt" % k
        lines = rng.randint(10_000, 40_000)
        with open(os.path.join(base, name), "w") as f:
            f.writelines("file %02d line %07d %s\n" % (k, i, "x" * 20) for i in range(lines))
        names.append(name)
    return names


def patch_text(names):
    out = ["*** Begin Patch"]
    for k, name in enumerate(names[:8]):
        out += ["*** Update File: " + name, "@@",
                "-file %02d line %07d %s" % (k, 5, "x" * 20),
                "+file %02d line %07d changed" % (k, 5)]
    for name in names[8:]:
        out.append("*** Delete File: " + name)
    out += ["*** Add File: src/new1.txt", "+one", "*** Add File: src/new2.txt", "+two", "*** End Patch", ""]
    return "\n".join(out)


def tree(root):
    out = {}
    for d, dirs, files in os.walk(root):
        if os.path.relpath(d, root).split(os.sep)[0] == ".patchspec":
            continue
        dirs[:] = [x for x in dirs if not (d == root and x == ".patchspec")]
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as h:
                out[os.path.relpath(p, root)] = hashlib.sha256(h.read()).hexdigest()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin")
    ap.add_argument("--random", type=int, default=100)
    ap.add_argument("--calls", default=DEFAULT_CALLS, help="strace groups, ';' between groups ('' for none)")
    ap.add_argument("--work", default="/dev/shm/patchspec-store-kill")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    binary = os.path.abspath(args.bin)
    os.makedirs(args.work, exist_ok=True)
    base = os.path.join(args.work, "base")
    names = build_base(base, rng)
    params = json.dumps({"patch": patch_text(names)})
    refused = json.dumps({"patch": "*** Begin Patch\n*** Update File: src/f00.txt\n@@\n-no such line\n+x\n*** End Patch\n"})
    trial = os.path.join(args.work, "trial")
    store = os.path.join(args.work, "store.db")
    pre = tree(base)

    def fresh():
        shutil.rmtree(trial, ignore_errors=True)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(store + suffix):
                os.remove(store + suffix)
        subprocess.run(["cp", "-al", base, trial], check=True)

    def call_cmd(p):
        return [binary, "call", "apply_patch", p, "--root", trial, "--store", store]

    times = []
    for _ in range(3):
        fresh()
        t = time.monotonic()
        r = subprocess.run(call_cmd(params), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.monotonic() - t)
        if r.returncode != 0:
            sys.exit("the patch does not apply: %s" % r.stderr.decode())
    post = tree(trial)
    run_time = sorted(times)[1]
    tally = {}
    failures = []

    def check(kind, killed):
        subprocess.run(call_cmd(refused), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        now = tree(trial)
        state = "pre" if now == pre else "post" if now == post else "mixed"
        db = sqlite3.connect(store)
        rows = db.execute("SELECT success, result FROM calls ORDER BY id").fetchall()
        try:
            pending = db.execute("SELECT count(*) FROM pending_commits").fetchone()[0]
        except sqlite3.OperationalError:
            pending = 0  # a store of an engine before schema 3: no pending commits to leave

        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        db.close()
        killed_rows = rows[:-1]
        says_applied = any(ok for ok, _ in killed_rows)
        txn = os.path.join(trial, ".patchspec", "txn")
        left = os.listdir(txn) if os.path.isdir(txn) else []
        t = tally.setdefault(kind, {"trials": 0, "killed": 0, "pre": 0, "post": 0, "mixed": 0,
                                    "applied_unrecorded": 0, "recorded_unapplied": 0, "pending_left": 0,
                                    "corrupt_store": 0, "journals_left": 0, "unrecorded_pre": 0})
        t["trials"] += 1
        t["killed"] += int(killed)
        t[state] += 1
        bad = []
        if state == "post" and not says_applied:
            t["applied_unrecorded"] += 1
            bad.append("applied, not recorded as applied")
        if state == "pre" and says_applied:
            t["recorded_unapplied"] += 1
            bad.append("recorded as applied, not applied")
        if state == "pre" and not killed_rows:
            t["unrecorded_pre"] += 1
        if state == "mixed":
            bad.append("mixed tree")
        if pending:
            t["pending_left"] += 1
            bad.append("%d pending commits left" % pending)
        if integrity != "ok":
            t["corrupt_store"] += 1
            bad.append("integrity_check: " + integrity)
        if left:
            t["journals_left"] += 1
            bad.append("left in .patchspec/txn: %s" % left)
        if bad:
            failures.append((kind, bad, killed_rows))
            print("%s: %s" % (kind, "; ".join(bad)), file=sys.stderr)

    for _ in range(args.random):
        fresh()
        p = subprocess.Popen(call_cmd(params), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 1.2 * run_time))
        killed = p.poll() is None
        if killed:
            p.send_signal(signal.SIGKILL)
        p.wait()
        check("random", killed)

    if args.calls and shutil.which("strace"):
        for calls in args.calls.split(";"):
            n = 1
            while True:
                fresh()
                cmd = ["strace", "-f", "-o", "/dev/null", "-e", "trace=" + calls,
                       "-e", "inject=%s:signal=SIGKILL:when=%d" % (calls, n)] + call_cmd(params)
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                killed = r.returncode != 0
                check("strace:" + calls, killed)
                if not killed:
                    break
                n += 1
    elif args.calls:
        print("strace is not installed: only the random trials ran", file=sys.stderr)

    trials = sum(t["trials"] for t in tally.values())
    for kind, t in tally.items():
        print("%-40s %s" % (kind, " ".join("%s=%d" % kv for kv in t.items())))
    summary = {"binary": binary, "run_time_s": round(run_time, 3), "tally": tally}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    shutil.rmtree(args.work, ignore_errors=True)
    print("store-kill-trials: %d passed, %d failed" % (trials - len(failures), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
