#!/usr/bin/env python3
"""Judges a kit example executor with an installed `patchspec`: the right
one passes every case of its one tool, declared as exactly that tool, exit
0 over the whole corpus; the wrong one fails with a case named. Used by
scripts/wheel-check.sh and npm-check.sh. Prints one `ok`/`FAIL` line per
check; the exit status is the number of failed checks.

  scripts/kit-example-check.py --patchspec 'npx patchspec' \\
      --right 'node dist/read_file_executor.js' --wrong 'node dist/read_file_wrong.js'
"""

import argparse
import json
import shlex
import subprocess
import sys

TOOL = "workspace.read_file"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patchspec", required=True, help="how to start patchspec (split like a shell)")
    parser.add_argument("--right", required=True, help="the correct example executor")
    parser.add_argument("--wrong", required=True, help="the deliberately wrong one")
    args = parser.parse_args()
    patchspec = shlex.split(args.patchspec)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("ok   " if ok else "FAIL ") + what)
        failures += 0 if ok else 1

    for transport in ("oneshot", "session"):
        judge(patchspec, transport, args.right, args.wrong, check)
    return failures


def judge(patchspec, transport, right_command, wrong_command, check):
    """The checks of one transport, each reported through `check(ok, what)`."""
    right = subprocess.run(
        patchspec + ["check", "--transport", transport, "--report", "json", "--"] + shlex.split(right_command),
        capture_output=True,
        text=True,
    )
    lines = [json.loads(line) for line in right.stdout.splitlines() if line.startswith("{")]
    header = next((l for l in lines if l.get("type") == "header"), {})
    cases = [l for l in lines if l.get("type") == "case"]
    mine = [c for c in cases if c["tool"] == TOOL]
    executor = header.get("executor", {})
    check(right.returncode == 0, "the right executor: exit 0 over the whole corpus (%s; exit %d)" % (transport, right.returncode))
    check(executor.get("tools") == [TOOL] and executor.get("declaredBy") == "hello",
          "it declares exactly %s in its HELLO (tools %s, declared by %s)" % (TOOL, executor.get("tools"), executor.get("declaredBy")))
    check(bool(mine) and all(c["outcome"] == "pass" for c in mine),
          "every %s case passes (%d of %d)" % (TOOL, sum(c["outcome"] == "pass" for c in mine), len(mine)))
    check(all(c["outcome"] == "skip" for c in cases if c["tool"] != TOOL),
          "every other tool's case is skipped, none failed or errored")
    if right.returncode != 0:
        sys.stderr.write(right.stderr[-4000:])

    wrong = subprocess.run(
        patchspec + ["check", "--transport", transport, "--tool", TOOL, "--"] + shlex.split(wrong_command),
        capture_output=True,
        text=True,
    )
    named = "FAIL " + TOOL + "/" in wrong.stdout
    check(wrong.returncode == 1 and named, "the wrong executor fails (exit %d) with the case named (%s)" % (wrong.returncode, transport))


if __name__ == "__main__":
    sys.exit(main())
