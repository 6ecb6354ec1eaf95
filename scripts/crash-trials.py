#!/usr/bin/env python3
"""Kill trials for `patchspec apply`: does a killed apply ever leave a mixed tree?

A 20-file patch (8 updates, 3 deletes, 4 moves with an edit, 5 adds) over
files of 5-20 MB is applied, and the process is SIGKILLed:
  - `random` trials: at a uniformly random moment of the whole run
    (0 .. 1.2 x the measured uncontended run time);
  - `strace:<calls>` trials (when strace is installed): by strace's fault
    injection at the N-th rename syscall, for every N (`-e
    inject=...:signal=SIGKILL:when=N`); --inject-calls adds other groups
    (hard links, unlinks, fsyncs, mkdirs), each killed at every invocation.
Then, unless --no-recover, `patchspec recover --root DIR` runs, and the
visible tree (everything outside .patchspec/) is classified:
  pre    exactly the pre-state,   post   exactly the post-state,
  mixed  anything else (some files new, some old, a move half done);
and counted: partial files (content neither the pre- nor the post-image of
its path), leftover temp files (`*.apply-patch.tmp` anywhere outside
.patchspec/), and leftover journal folders (.patchspec/txn/*).

Trees are built with hard links (`cp -al`) from one base: the engine never
writes a file in place (temp file + rename), so the base stays intact.

Usage: scripts/crash-trials.py --bin target/release/patchspec --random 200 --rename-rounds 1
       [--inject-calls 'rename,renameat,renameat2;linkat;unlinkat;fsync;mkdirat']
       [--no-recover] [--reapply-every 10] [--work /dev/shm/crash] [--seed 1] [--json out.json]
"""

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

N_UPDATE, N_DELETE, N_MOVE, N_ADD = 8, 3, 4, 5
MB = 1 << 20


def lines_of(k, size):
    line = ("file %02d line %%09d " % k) + "x" * 40 + "\n"
    n = size // (len(line % 0))
    return [line % i for i in range(n)]


def build_base(base, rng):
    if os.path.exists(base):
        shutil.rmtree(base)
    for d in ("src", "moved", "added"):
        os.makedirs(os.path.join(base, d))
    names = []
    for k in range(N_UPDATE + N_DELETE + N_MOVE):
        size = rng.randint(5, 20) * MB
        name = "src/f%02d.txt" % k
        with open(os.path.join(base, name), "w") as f:
            f.writelines(lines_of(k, size))
        names.append(name)
    return names


def patch_text(names):
    out = ["*** Begin Patch"]
    k = 0

    def edit(k, name):
        # One hunk near the top: line 3 changes.
        return [
            "@@",
            " file %02d line %09d %s" % (k, 2, "x" * 40),
            "-file %02d line %09d %s" % (k, 3, "x" * 40),
            "+file %02d line %09d CHANGED" % (k, 3),
        ]

    for i in range(N_UPDATE):
        out.append("*** Update File: %s" % names[k])
        out += edit(k, names[k])
        k += 1
    for i in range(N_DELETE):
        out.append("*** Delete File: %s" % names[k])
        k += 1
    for i in range(N_MOVE):
        out.append("*** Update File: %s" % names[k])
        out.append("*** Move to: moved/m%02d.txt" % k)
        out += edit(k, names[k])
        k += 1
    for i in range(N_ADD):
        out.append("*** Add File: added/a%02d.txt" % i)
        out += ["+added %d line %d" % (i, j) for j in range(2000)]
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def visible(root):
    """path -> (dev, inode, size) of every visible file (outside .patchspec)."""
    out = {}
    for d, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(d, root)
        if rel_dir == ".patchspec" or rel_dir.startswith(".patchspec/"):
            dirs[:] = []
            continue
        for f in files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            out[os.path.normpath(os.path.relpath(p, root))] = (st.st_dev, st.st_ino, st.st_size)
    return out


def digest(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        while True:
            b = f.read(4 * MB)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def hashes(root):
    return {p: digest(os.path.join(root, p)) for p in visible(root)}


def classify(root, pre, post, base_inodes):
    files = visible(root)
    temps = [p for p in files if p.endswith(".apply-patch.tmp")]
    content = {}
    for p, (dev, ino, _size) in files.items():
        if p in temps:
            continue
        # A file still the base's inode is its pre-image, unread.
        content[p] = pre.get(p) if base_inodes.get(p) == (dev, ino) else digest(os.path.join(root, p))
    partial = [p for p, h in content.items() if h != pre.get(p) and h != post.get(p)]
    if content == pre:
        state = "pre"
    elif content == post:
        state = "post"
    else:
        state = "mixed"
    txn = os.path.join(root, ".patchspec", "txn")
    journals = os.listdir(txn) if os.path.isdir(txn) else []
    return state, partial, temps, journals


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--random", type=int, default=100, help="random-moment kill trials")
    ap.add_argument("--rename-rounds", type=int, default=1, help="strace kill at every rename, this many rounds")
    ap.add_argument("--no-recover", action="store_true", help="classify right after the kill (an engine without `recover`)")
    ap.add_argument("--work", default="/dev/shm/patchspec-crash")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--reapply-every", type=int, default=10,
                    help="every K-th trial, re-apply the patch after recovery (pre: must apply; post: already applied)")
    ap.add_argument("--inject-calls", default="rename,renameat,renameat2",
                    help="groups of syscalls strace kills at, ';' between groups, each group on its own "
                         "(e.g. 'rename,renameat,renameat2;linkat;unlinkat;fsync;mkdirat')")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    binary = os.path.abspath(args.bin)
    os.makedirs(args.work, exist_ok=True)
    base = os.path.join(args.work, "base")
    names = build_base(base, rng)
    patch_file = os.path.join(args.work, "change.patch")
    with open(patch_file, "w") as f:
        f.write(patch_text(names))
    pre = hashes(base)
    base_inodes = {p: v[:2] for p, v in visible(base).items()}
    trial = os.path.join(args.work, "trial")

    def fresh():
        if os.path.exists(trial):
            shutil.rmtree(trial)
        subprocess.run(["cp", "-al", base, trial], check=True)

    def apply_cmd():
        return [binary, "apply", "--root", trial, patch_file]

    # The post-state, and the uncontended run time (median of 3).
    times = []
    for _ in range(3):
        fresh()
        t = time.monotonic()
        r = subprocess.run(apply_cmd(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.monotonic() - t)
        if r.returncode != 0:
            sys.exit("the patch does not apply: %s" % r.stderr.decode())
    post = hashes(trial)
    run_time = sorted(times)[1]

    tally = {}

    def record(kind, killed_by, outcome):
        state, partial, temps, journals = outcome
        t = tally.setdefault(kind, {"trials": 0, "killed": 0, "pre": 0, "post": 0, "mixed": 0,
                                    "partial_files": 0, "temp_files": 0, "journals_left": 0,
                                    "recover_failed": 0, "reapply_ok": 0})
        t["trials"] += 1
        t["killed"] += killed_by
        t[state] += 1
        t["partial_files"] += len(partial)
        t["temp_files"] += len(temps)
        t["journals_left"] += len(journals)

    def checkpoint():
        # Written after every trial, so a run cut short still has its figures.
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"binary": binary, "run_time_s": round(run_time, 3),
                           "recover": not args.no_recover, "tally": tally, "partial_run": True}, f, indent=2)

    def after_kill(kind, killed):
        recover_failed = False
        if not args.no_recover:
            r = subprocess.run([binary, "recover", "--root", trial], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            recover_failed = r.returncode != 0
        outcome = classify(trial, pre, post, base_inodes)
        record(kind, killed, outcome)
        tally[kind]["recover_failed"] += int(recover_failed)
        checkpoint()
        if outcome[0] == "mixed":
            print("%s: MIXED partial=%s temps=%d" % (kind, outcome[1][:3], len(outcome[2])), file=sys.stderr)
        # Re-applying the same patch must now succeed (pre) or be refused as already applied (post).
        tally[kind]["trials_since_reapply"] = tally[kind].get("trials_since_reapply", 0) + 1
        if tally[kind]["trials_since_reapply"] < args.reapply_every:
            return
        tally[kind]["trials_since_reapply"] = 0
        tally[kind]["reapplied"] = tally[kind].get("reapplied", 0) + 1
        r = subprocess.run(apply_cmd(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if (outcome[0] == "pre" and r.returncode == 0) or outcome[0] == "post":
            tally[kind]["reapply_ok"] += 1

    for i in range(args.random):
        fresh()
        delay = rng.uniform(0, 1.2 * run_time)
        p = subprocess.Popen(apply_cmd(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        killed = p.poll() is None
        if killed:
            p.send_signal(signal.SIGKILL)
        p.wait()
        after_kill("random", int(killed))

    if args.rename_rounds and shutil.which("strace"):
        # strace counts `when=N` per system call, so each group is injected
        # on its own: N = 1, 2, ... until a run completes unkilled.
        for calls in args.inject_calls.split(";"):
            for _ in range(args.rename_rounds):
                n = 1
                while True:
                    fresh()
                    cmd = ["strace", "-f", "-o", "/dev/null", "-e", "trace=" + calls,
                           "-e", "inject=%s:signal=SIGKILL:when=%d" % (calls, n)] + apply_cmd()
                    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    killed = r.returncode != 0
                    after_kill("strace:" + calls, int(killed))
                    if not killed:
                        break
                    n += 1

    summary = {"binary": binary, "run_time_s": round(run_time, 3), "recover": not args.no_recover,
               "tally": tally}
    print(json.dumps(summary, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    shutil.rmtree(trial, ignore_errors=True)
    bad = sum(t.get("mixed", 0) + t.get("partial_files", 0) + t.get("temp_files", 0) for t in tally.values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
