#!/usr/bin/env python3
"""Success-path cost of the journal and the lock: whole `patchspec apply`
processes, two binaries compared on the same edit: by default 100 MB x
10,000 hunks; `--size 4000 --hunks 1` is the small 1-file apply.

One file of unique ~40-byte lines (`--size` bytes); a forward envelope that
changes one line in each of `--hunks` evenly spread places (one context line
either side) and its inverse. Each round runs, for each binary in turn (order alternating
between rounds), `apply --expect-sha` of the forward patch then of the
inverse, so every run does the same work on the same bytes. Reported: the
median and the best wall time per apply for each binary, and their ratio.

Usage: scripts/commit-cost.py --before OLD_BIN --after NEW_BIN [--rounds 10] [--work /dev/shm/cost]
       [--size BYTES] [--hunks N]
"""

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import time

SIZE = 100 * 1000 * 1000
HUNKS = 10_000


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--work", default="/dev/shm/patchspec-cost")
    ap.add_argument("--disk", help="put the workspace here instead (a real disk: fsync costs)")
    ap.add_argument("--size", type=int, default=SIZE, help="the file's size in bytes")
    ap.add_argument("--hunks", type=int, default=HUNKS, help="how many hunks the envelope has")
    args = ap.parse_args()
    work = args.disk or args.work
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    line = "let value_%09d = compute(%09d);\n"
    n = args.size // len(line % (0, 0))
    lines = [line % (i, i) for i in range(n)]
    step = n // args.hunks
    fwd = ["*** Begin Patch", "*** Update File: big.rs"]
    inv = ["*** Begin Patch", "*** Update File: big.rs"]
    edited = list(lines)
    for h in range(args.hunks):
        at = h * step + step // 2
        new = "let value_%09d = changed(%09d);\n" % (at, at)
        edited[at] = new
        for out, old_, new_ in ((fwd, lines[at], new), (inv, new, lines[at])):
            out += ["@@", " " + lines[at - 1].rstrip("\n"), "-" + old_.rstrip("\n"),
                    "+" + new_.rstrip("\n"), " " + lines[at + 1].rstrip("\n")]
    fwd.append("*** End Patch")
    inv.append("*** End Patch")
    original = "".join(lines).encode()
    changed = "".join(edited).encode()
    shas = {"fwd": hashlib.sha256(original).hexdigest(), "inv": hashlib.sha256(changed).hexdigest()}
    ws = os.path.join(work, "ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "big.rs"), "wb") as f:
        f.write(original)
    patches = {}
    for name, text in (("fwd", fwd), ("inv", inv)):
        patches[name] = os.path.join(work, name + ".patch")
        with open(patches[name], "w") as f:
            f.write("\n".join(text) + "\n")
    bins = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    times = {"before": [], "after": []}

    def apply(binary, which):
        t = time.monotonic()
        r = subprocess.run([binary, "apply", "--root", ws, "--expect-sha", "big.rs=" + shas[which], patches[which]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.monotonic() - t
        if r.returncode != 0:
            sys.exit("%s failed: %s" % (binary, r.stderr.decode()))
        return dt

    # One warm-up pair per binary (page cache, first-run effects).
    for b in bins.values():
        apply(b, "fwd")
        apply(b, "inv")
    for r in range(args.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for name in order:
            times[name].append(apply(bins[name], "fwd"))
            times[name].append(apply(bins[name], "inv"))
    for name in ("before", "after"):
        t = times[name]
        print("%-6s median %.1f ms  best %.1f ms  (%d applies)" % (name, 1000 * statistics.median(t), 1000 * min(t), len(t)))
    ratio_med = statistics.median(times["after"]) / statistics.median(times["before"])
    ratio_best = min(times["after"]) / min(times["before"])
    print("after / before: median %.3fx  best %.3fx" % (ratio_med, ratio_best))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
