#!/usr/bin/env python3
"""Whole-process apply time against the I/O floor (docs/performance.md,
"The floor"), measured the way issue 21 states its target:
in one run, interleaved, a `sync` before each process, medians.

    scripts/floor-ratio.py CASE_DIR ROUNDS NAME=BIN [NAME=BIN ...]

CASE_DIR is written by `patchspec-benchgen case --size 100MB --hunks 10000
--out CASE_DIR`. Each round runs every BIN's `patchspec apply` once (the
forward and the reverse envelope in turn, each with the `--expect-sha` of
the file it expects, so every run does the same work) and then the floor
(`patchspec-benchgen floor`: read + SHA-256 + write + fsync + rename of the
same file). Prints each one's median, its ratio to the floor's median, and
its fastest run. Criterion's peers bench (benches/peers.sh) runs iterations
back to back without a `sync`; this script is the cold-writeback variant.
"""
import hashlib
import os
import statistics
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    case, rounds = sys.argv[1], int(sys.argv[2])
    tools = [arg.split("=", 1) for arg in sys.argv[3:]]
    here = os.path.dirname(os.path.abspath(__file__))
    benchgen = os.environ.get(
        "PATCHSPEC_BENCHGEN",
        os.path.join(here, "..", "target", "release", "patchspec-benchgen"),
    )
    with open(os.path.join(case, "sha256")) as f:
        digests = f.read().split()
    ws = os.path.join(case, "ws")
    with open(os.path.join(ws, "big.rs"), "rb") as f:
        state = 0 if hashlib.sha256(f.read()).hexdigest() == digests[0] else 1
    times = {name: [] for name, _ in tools}
    times["floor"] = []

    def timed(name, argv):
        subprocess.run(["sync"], check=True)
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True)
        times[name].append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"{name} failed: {done.stderr.decode(errors='replace')}")

    for _ in range(rounds):
        for name, binary in tools:
            envelope = os.path.join(case, ("forward", "reverse")[state] + ".patch")
            timed(name, [binary, "apply", "--root", ws, envelope,
                         "--expect-sha", f"big.rs={digests[state]}"])
            state ^= 1
        timed("floor", [benchgen, "floor", "--dir", ws, "--file", "big.rs"])
    floor = statistics.median(times["floor"])
    print(f"| tool | median | ÷ floor | fastest |  ({rounds} rounds, {case})")
    print("|---|---|---|---|")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"| {name} | {median * 1000:.1f} ms | {median / floor:.2f}x "
              f"| {min(samples) * 1000:.1f} ms |")


if __name__ == "__main__":
    main()
