#!/usr/bin/env python3
"""What SQLite's `synchronous` level costs the patch store per writing call.

A writing call with `--store` makes two store transactions (store/src/lib.rs):
`begin` inserts the commit's pending entry before its first visible change,
and the record inserts the call's row and deletes that entry. This script
makes the same two transactions (`BEGIN IMMEDIATE`, WAL, the store's row
sizes) `--calls` times, once per level, on a database in `--dir` (a real
disk: on tmpfs an fsync costs nothing), and prints the median and p95 per
call for each level and their difference.

Usage: scripts/store-sync-cost.py [--dir DIR] [--calls 500] [--levels NORMAL,FULL]
"""

import argparse
import os
import sqlite3
import statistics
import tempfile
import time

SCHEMA = """
CREATE TABLE calls (id INTEGER PRIMARY KEY, call_id TEXT NOT NULL, tool TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL, duration_us INTEGER NOT NULL, success INTEGER NOT NULL,
    params TEXT, result TEXT NOT NULL);
CREATE TABLE pending_commits (transaction_id TEXT PRIMARY KEY, workspace TEXT NOT NULL,
    tool TEXT NOT NULL, call_id TEXT NOT NULL, begun_at_ms INTEGER NOT NULL);
"""


def per_call(path, level, calls):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {level}")
    db.executescript(SCHEMA)
    result = '{"success":true,"changedFiles":["a.txt"]}' + " " * 400
    times = []
    for i in range(calls):
        txn = f"{i:013d}-00000000-0-{i:016x}"
        start = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO pending_commits VALUES (?, ?, ?, ?, ?)", (txn, "/ws", "apply_patch", f"call-{i}", i))
        db.execute("COMMIT")
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO calls (call_id, tool, recorded_at_ms, duration_us, success, params, result) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", (f"call-{i}", "apply_patch", i, 1000, 1, None, result))
        db.execute("DELETE FROM pending_commits WHERE transaction_id = ?", (txn,))
        db.execute("COMMIT")
        times.append(time.perf_counter() - start)
    db.close()
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.getcwd())
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--levels", default="NORMAL,FULL")
    args = ap.parse_args()
    medians = {}
    for level in args.levels.split(","):
        with tempfile.TemporaryDirectory(dir=args.dir) as work:
            times = sorted(per_call(os.path.join(work, "store.db"), level, args.calls))
        median = statistics.median(times) * 1e3
        p95 = times[int(len(times) * 0.95)] * 1e3
        medians[level] = median
        print(f"synchronous={level}: {median:.3f} ms median, {p95:.3f} ms p95 per call ({args.calls} calls, {args.dir})")
    levels = list(medians)
    if len(levels) == 2:
        print(f"{levels[1]} - {levels[0]}: {medians[levels[1]] - medians[levels[0]]:+.3f} ms per call")


if __name__ == "__main__":
    main()
