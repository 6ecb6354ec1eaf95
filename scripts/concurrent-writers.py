#!/usr/bin/env python3
"""Concurrent-writer trials: two `patchspec apply` started at once on one workspace.

Shapes (each --trials times):
  lines  two patches editing different lines of one 10 MB file, no stale check:
         each exit 0 must mean its edit is in the final file (else: lost update);
  sha    the same two patches, each with --expect-sha big.txt=<original sha>:
         at most one may succeed (the second must be refused as stale);
         an exit 0 whose edit is missing is a lost update;
  add    two Adds of one path with different contents: at most one may succeed
         ("both succeeded" otherwise), and the file holds the winner's content.

Usage: scripts/concurrent-writers.py --bin target/release/patchspec --trials 100 [--work DIR] [--json out.json]
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

MB = 1 << 20


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--work", default="/dev/shm/patchspec-concurrent")
    ap.add_argument("--json")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    os.makedirs(args.work, exist_ok=True)
    base = os.path.join(args.work, "base")
    if os.path.exists(base):
        shutil.rmtree(base)
    os.makedirs(base)
    line = "line %08d " + "y" * 50 + "\n"
    n = 10 * MB // len(line % 0)
    big = "".join(line % i for i in range(n))
    with open(os.path.join(base, "big.txt"), "w") as f:
        f.write(big)
    sha = hashlib.sha256(big.encode()).hexdigest()

    def edit_patch(at):
        return "\n".join([
            "*** Begin Patch", "*** Update File: big.txt", "@@",
            " " + (line % (at - 1)).rstrip("\n"),
            "-" + (line % at).rstrip("\n"),
            "+EDITED AT %d" % at,
            "*** End Patch", ""])

    def add_patch(who):
        return "\n".join(["*** Begin Patch", "*** Add File: new.txt", "+written by %s" % who,
                          "*** End Patch", ""])

    patches = {}
    for name, text in [("a", edit_patch(1000)), ("b", edit_patch(n - 1000)),
                       ("add-a", add_patch("a")), ("add-b", add_patch("b"))]:
        path = os.path.join(args.work, name + ".patch")
        with open(path, "w") as f:
            f.write(text)
        patches[name] = path
    markers = {"a": "EDITED AT 1000\n", "b": "EDITED AT %d\n" % (n - 1000)}
    trial = os.path.join(args.work, "trial")
    tally = {}

    def run_pair(cmds):
        procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in cmds]
        return [(p.wait(), p.stderr.read().decode(errors="replace")) for p in procs]

    for shape in ["lines", "sha", "add"]:
        t = tally.setdefault(shape, {"trials": 0, "both_ok": 0, "one_ok": 0, "none_ok": 0,
                                     "lost_updates": 0, "double_success": 0, "refusals": {}})
        for _ in range(args.trials):
            if os.path.exists(trial):
                shutil.rmtree(trial)
            subprocess.run(["cp", "-al", base, trial], check=True)
            if shape == "add":
                names = ["add-a", "add-b"]
                extra = []
            else:
                names = ["a", "b"]
                extra = ["--expect-sha", "big.txt=" + sha] if shape == "sha" else []
            results = run_pair([[binary, "apply", "--root", trial] + extra + [patches[x]] for x in names])
            oks = [rc == 0 for rc, _ in results]
            t["trials"] += 1
            t[["none_ok", "one_ok", "both_ok"][sum(oks)]] += 1
            for (rc, err) in results:
                if rc != 0:
                    kind = err.split("]")[0].split("[")[-1] if "error[" in err else err.strip()[:60]
                    t["refusals"][kind] = t["refusals"].get(kind, 0) + 1
            if shape == "add":
                if all(oks):
                    t["double_success"] += 1
                content = open(os.path.join(trial, "new.txt")).read() if os.path.exists(os.path.join(trial, "new.txt")) else None
                for ok, who in zip(oks, ["a", "b"]):
                    if ok and sum(oks) == 1 and content != "written by %s\n" % who:
                        t["lost_updates"] += 1
            else:
                final = open(os.path.join(trial, "big.txt")).read()
                for ok, who in zip(oks, names):
                    if ok and markers[who] not in final:
                        t["lost_updates"] += 1
                if shape == "sha" and all(oks):
                    t["double_success"] += 1
    summary = {"binary": binary, "tally": tally}
    print(json.dumps(summary, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=2)
    shutil.rmtree(trial, ignore_errors=True)
    bad = sum(t["lost_updates"] + t["double_success"] for t in tally.values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
