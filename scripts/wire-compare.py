#!/usr/bin/env python3
"""Prove a refactor left the wire unchanged: run `patchspec check --report
json` over the same corpus with two builds, on every transport, and compare
the reports case by case once run-to-run noise is taken out
(docs/ci.md, "Checking that a refactor leaves the wire unchanged").

    scripts/wire-compare.py --before BIN_A --after BIN_B [--corpus DIR]
                            [--transport T]... [--out DIR] [--jobs N] [--show N]
    scripts/wire-compare.py --self-test

Each binary is both the runner and the executor of its own runs (BIN check
... -- BIN exec). The transports, named as `--transport` takes them:

    in-process          BIN check                      (the built-in engine)
    oneshot             BIN check -- BIN exec
    session             BIN check --transport session -- BIN exec --session
    websocket           BIN check --transport websocket  (the runner's plugin)
    websocket-external  BIN check --transport websocket -- BIN exec --connect {url}
    mcp                 BIN check --transport mcp -- BIN mcp --root {root}

Every transport that `BIN check -h` offers must have a row here: one it
does not know stops the script (exit 2) instead of going unchecked.

A record is a case's whole `case` line of the report: its outcome, the
result document as the executor answered it, the diagnosis (error kind,
message, mismatches, files and outside changes) and the executor's stderr.
The header and the footer are compared too. What is taken out as noise, and
why (everything else must be equal, member order included):

- `durationMs` (case and footer): wall time, never the same twice;
- ids the run draws, renamed in order of first appearance within a record:
  the runner's call ids, `CASE#N` with N a counter shared by the workers
  (so which case gets which number depends on scheduling), become
  `<call-1>`, `<call-2>`, ..., as do `patchspec mcp`'s own (`call-` + 16
  random hex digits); the patch store's ids (`batch-`, `fp-`, `chg-` + 32
  random hex digits) `<batch-1>`, `<fp-1>`, `<chg-1>`, ...;
  an id the record repeats keeps its name, so one a document should repeat
  and does not is still a difference;
- `recordedAtMs` (the store's wall clock at recording) becomes `<clock>`;
- the absolute paths of the run's folders: each case's workspace
  (`WORK/patchspec-run-XXXXXX/cases/N/ws`, N the order cases started in,
  under a fresh `--work-dir` WORK per run) becomes `<workspace>` (a path
  inside it keeps its tail), the run folder `<run-dir>`, WORK `<work-dir>`,
  and the binary's own path (the executor's argv in the header) `<bin>`;
- in the header's WebSocket plugin command, the URL's port (ephemeral) and
  `sessionId` (`patchspec-PID-MILLISECONDS`: the runner's pid and clock);
- the order of the case lines: workers finish in any order, so records are
  matched by case id; of an id's several lines (`amended`), the last one is
  the record, as the report's format says.

Member order is kept: the runner's JSON keeps the order of the answer it
parsed. Whitespace and escaping of an executor's raw answer are not in the
report (the runner parses it), so they are not compared.

Per transport it prints `T: N records, M differ` and, for the first
`--show` differing cases, a unified diff of the two normalised records.
Exit 0 only when every transport has 0 differences (and equal headers,
footers and exit codes); 1 when one differs; 2 on usage or a run that
wrote no report. `--out DIR` keeps the raw reports, the runners' stderr and
the normalised records (default: a temporary folder, removed). The case
workspaces go to /dev/shm when it is writable, as `check`'s own default.
"""
import argparse
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Transport name -> (check's own arguments, the executor argv after `--`).
# "{bin}" is the binary under test; "{url}" and "{root}" are left for the
# runner to fill in, as `check` documents.
TRANSPORTS = {
    "in-process": ([], []),
    "oneshot": (["--transport", "oneshot"], ["{bin}", "exec"]),
    "session": (["--transport", "session"], ["{bin}", "exec", "--session"]),
    "websocket": (["--transport", "websocket"], []),
    "websocket-external": (
        ["--transport", "websocket"],
        ["{bin}", "exec", "--connect", "{url}"],
    ),
    "mcp": (["--transport", "mcp"], ["{bin}", "mcp", "--root", "{root}"]),
}

# The values `check --transport` takes, and the rows of TRANSPORTS that run
# each (in-process is chosen by giving no executor, not by a value).
TRANSPORT_VALUES = {
    "oneshot": ["oneshot"],
    "session": ["session"],
    "websocket": ["websocket", "websocket-external"],
    "mcp": ["mcp"],
}

# Members whose integer value is a wall-clock reading.
CLOCK_MEMBERS = {"recordedAtMs"}
CLOCK = "<clock>"
WORKSPACE = "<workspace>"
WORK_DIR = "<work-dir>"
RUN_DIR = "<run-dir>"
BIN = "<bin>"


def usage_error(message):
    """Stop with exit code 2: nothing was compared."""
    print(f"wire-compare: {message}", file=sys.stderr)
    raise SystemExit(2)


def offered_transports(binary):
    """The `--transport` values `BIN check -h` lists."""
    try:
        text = subprocess.run(
            [binary, "check", "-h"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        usage_error(f"`{binary} check -h` did not run: {e}")
    match = re.search(r"--transport <[^>]*>.*\[possible values: ([^\]]*)\]", text)
    if not match:
        usage_error(f"`{binary} check -h` names no --transport values")
    return [v.strip() for v in match.group(1).split(",")]


class Noise:
    """One run's own paths and addresses, replaced by placeholders; and the
    drawn ids and clock readings (`Ids`, `CLOCK_MEMBERS`)."""

    def __init__(self, work_dir, binary):
        def spellings(path):
            """The path as given and as resolved, the longer first."""
            both = {path.rstrip("/"), os.path.realpath(path).rstrip("/")}
            return "|".join(re.escape(p) for p in sorted(both, key=len, reverse=True))

        # The runner makes one folder per run under the work folder
        # (`patchspec-run-XXXXXX`) and each case's workspace in it as
        # `cases/N/ws`, N the order in which cases were started; the rest of
        # the path (a file inside the workspace) is kept.
        work = f"(?:{spellings(work_dir)})"
        run_dir = work + r"/[^/\"\\\s]+"
        self.paths = [
            (re.compile(run_dir + r"/cases/[0-9]+/ws"), WORKSPACE),
            (re.compile(run_dir), RUN_DIR),
            (re.compile(work), WORK_DIR),
            (re.compile(spellings(binary)), BIN),
            # The WebSocket backend's URL in the header's plugin command: an
            # ephemeral port, and a session id of the runner's pid and clock.
            (re.compile(r"(ws://[^/\s\"]+):[0-9]+/"), r"\1:<port>/"),
            (re.compile(r"sessionId=patchspec-[0-9]+-[0-9]+"), "sessionId=<session>"),
        ]

    def text(self, s, ids):
        s = ids.rename(s)
        for pattern, name in self.paths:
            s = pattern.sub(name, s)
        return s

    def value(self, v, ids, key=None):
        """`v` with the run's noise replaced in every string, keys included."""
        if key in CLOCK_MEMBERS and isinstance(v, int):
            return CLOCK
        if isinstance(v, str):
            return self.text(v, ids)
        if isinstance(v, list):
            return [self.value(x, ids) for x in v]
        if isinstance(v, dict):
            return {self.text(k, ids): self.value(x, ids, k) for k, x in v.items()}
        return v


class Ids:
    """Renames one record's drawn ids, in order of first appearance: the
    runner's call ids (`CASE#N`, N a counter shared by the workers) and
    `patchspec mcp`'s become `<call-1>`, `<call-2>`, …, and the store's random ids (`batch-`, `fp-`,
    `chg-` + 32 hex digits) `<batch-1>`, `<fp-1>`, …. The same id keeps its
    name wherever it appears in the record, so an id that a result should
    repeat and does not is still a difference."""

    def __init__(self, case_id):
        drawn = [re.escape(case_id) + r"#[0-9]+"] if case_id else []
        drawn.append(r"\b(?:batch|fp|chg)-[0-9a-f]{32}\b")
        # `patchspec mcp` names its calls itself: `call-` + 16 random hex.
        drawn.append(r"\bcall-[0-9a-f]{16}\b")
        self.pattern = re.compile("|".join(f"(?:{d})" for d in drawn))
        self.names = {}

    def _name(self, match):
        drawn = match.group(0)
        if drawn not in self.names:
            kind = "call" if "#" in drawn else drawn.split("-", 1)[0]
            n = sum(1 for v in self.names.values() if v.startswith(f"<{kind}-")) + 1
            self.names[drawn] = f"<{kind}-{n}>"
        return self.names[drawn]

    def rename(self, s):
        return self.pattern.sub(self._name, s)


def normalise(lines, noise):
    """(header, {id: case record}, footer) of a report's lines, noise out."""
    header, footer, cases = None, None, {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"line {n} is not JSON: {e}") from None
        kind = record.get("type")
        record.pop("durationMs", None)
        if kind == "case":
            cases[record["id"]] = noise.value(record, Ids(record["id"]))
        elif kind == "header":
            header = noise.value(record, Ids(None))
        elif kind == "footer":
            footer = noise.value(record, Ids(None))
        else:
            raise ValueError(f"line {n} has an unknown type {kind!r}")
    if header is None or footer is None:
        raise ValueError("the report has no header or no footer line (a run cut short?)")
    return header, cases, footer


def render(record):
    """The normalised record as compared: member order kept, one member a line."""
    return json.dumps(record, indent=1, ensure_ascii=False)


def diff(a, b, name_a="before", name_b="after", limit=40):
    lines = list(
        difflib.unified_diff(
            render(a).splitlines(), render(b).splitlines(), name_a, name_b, n=1, lineterm=""
        )
    )
    if len(lines) > limit:
        lines = lines[:limit] + [f"... {len(lines) - limit} more diff lines"]
    return lines


def compare(before, after):
    """The differing case ids, and whether header and footer are equal."""
    (h_a, cases_a, f_a), (h_b, cases_b, f_b) = before, after
    ids = sorted(set(cases_a) | set(cases_b))
    differing = [i for i in ids if render(cases_a.get(i)) != render(cases_b.get(i))]
    return ids, differing, render(h_a) == render(h_b), render(f_a) == render(f_b)


def work_base():
    """Where the case workspaces go: /dev/shm when writable, as `check`
    itself chooses (the engine fsyncs every commit), else the system's."""
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def run_check(binary, transport, corpus, jobs, out_dir, side):
    """Run one report; returns (exit code, report lines, Noise, what ran)."""
    check_args, executor = TRANSPORTS[transport]
    work = tempfile.mkdtemp(prefix=f"wire-compare-{transport}-{side}-", dir=work_base())
    report = os.path.join(out_dir, f"{transport}.{side}.jsonl")
    argv = [binary, "check", "--corpus", corpus, "--work-dir", work, "-j", str(jobs)]
    argv += check_args + ["--report", "json", "--report-file", report]
    if executor:
        argv += ["--"] + [binary if a == "{bin}" else a for a in executor]
    with open(os.path.join(out_dir, f"{transport}.{side}.stderr"), "w") as err:
        started = time.monotonic()
        try:
            code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=err).returncode
        finally:
            seconds = time.monotonic() - started
            shutil.rmtree(work, ignore_errors=True)
    if not os.path.exists(report):
        usage_error(
            f"{transport} ({side}) wrote no report (exit {code}); see {err.name}\n  "
            + " ".join(argv)
        )
    with open(report, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return code, lines, Noise(work, binary), f"exit {code}, {seconds:.0f} s: " + " ".join(argv)


def compare_transport(transport, args, out_dir):
    """Run both sides of one transport, print its verdict; True when equal."""
    sides = {}
    for side, binary in (("before", args.before), ("after", args.after)):
        code, lines, noise, ran = run_check(
            binary, transport, args.corpus, args.jobs, out_dir, side
        )
        print(f"  {side}: {ran}", flush=True)
        try:
            sides[side] = (code, normalise(lines, noise))
        except ValueError as e:
            usage_error(f"{transport} ({side}): {e}")
        with open(os.path.join(out_dir, f"{transport}.{side}.normalised.json"), "w") as f:
            h, cases, foot = sides[side][1]
            json.dump(
                {"header": h, "cases": [cases[i] for i in sorted(cases)], "footer": foot},
                f, indent=1, ensure_ascii=False,
            )
    (code_a, before), (code_b, after) = sides["before"], sides["after"]
    ids, differing, header_equal, footer_equal = compare(before, after)
    print(f"{transport}: {len(ids)} records, {len(differing)} differ", flush=True)
    for i in differing[: args.show]:
        print(f"  differs: {i}")
        for line in diff(before[1].get(i), after[1].get(i)):
            print("    " + line)
    if len(differing) > args.show:
        print(f"  ... and {len(differing) - args.show} more: " + ", ".join(differing[args.show:]))
    equal = not differing
    for what, same, a, b in (
        ("header", header_equal, before[0], after[0]),
        ("footer", footer_equal, before[2], after[2]),
    ):
        if not same:
            equal = False
            print(f"  the {what} differs:")
            for line in diff(a, b):
                print("    " + line)
    if code_a != code_b:
        equal = False
        print(f"  the exit codes differ: before {code_a}, after {code_b}")
    return equal


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--before", help="the binary before the change")
    parser.add_argument("--after", help="the binary after the change")
    parser.add_argument(
        "--corpus",
        help="the corpus folder both run (default: the corpus/ of this checkout)",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"),
    )
    parser.add_argument(
        "--transport", action="append", choices=sorted(TRANSPORTS),
        help="only this transport (repeatable; default: every one)",
    )
    parser.add_argument("--out", help="keep the reports here (a new or empty folder)")
    parser.add_argument("--jobs", type=int, default=2, help="check's -j (default 2)")
    parser.add_argument("--show", type=int, default=5, help="differing cases shown per transport")
    parser.add_argument("--self-test", action="store_true", help="check this script, then exit")
    args = parser.parse_args(argv)
    if args.self_test:
        return self_test()
    if not args.before or not args.after:
        parser.error("--before and --after are required")
    args.before, args.after = (os.path.abspath(b) for b in (args.before, args.after))
    args.corpus = os.path.realpath(args.corpus)
    for b in (args.before, args.after):
        for value in offered_transports(b):
            if value not in TRANSPORT_VALUES:
                usage_error(
                    f"{b} offers --transport {value}, which this script cannot run: "
                    "add it to TRANSPORTS"
                )
    transports = args.transport or list(TRANSPORTS)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        if os.listdir(args.out):
            parser.error(f"--out {args.out} is not empty")
        out_dir = os.path.abspath(args.out)
    else:
        out_dir = tempfile.mkdtemp(prefix="wire-compare-")
    print(f"corpus {args.corpus}\nbefore {args.before}\nafter  {args.after}", flush=True)
    try:
        results = {t: compare_transport(t, args, out_dir) for t in transports}
    finally:
        if not args.out:
            shutil.rmtree(out_dir, ignore_errors=True)
    differing = [t for t, equal in results.items() if not equal]
    print(
        f"wire-compare: {len(results) - len(differing)} of {len(results)} transports equal"
        + (f"; differing: {', '.join(differing)}" if differing else "")
    )
    return 1 if differing else 0


def fake_report(work, binary, seed, plant=None):
    """A report as `check --report json` writes one, with its run's noise
    drawn from `seed`; `plant` changes one thing that is not noise."""
    rng = random.Random(seed)
    run = f"{work}/patchspec-run-{rng.randrange(16**6):06X}"
    ids = {k: f"{k}-{rng.getrandbits(128):032x}" for k in ("batch", "fp", "chg")}
    ws = [f"{run}/cases/{n}/ws" for n in rng.sample(range(1, 99), 3)]
    calls = rng.sample(range(1, 999), 3)
    cases = [
        {"type": "case", "id": "apply_patch/a", "outcome": "pass", "durationMs": rng.randrange(500),
         "toolCallId": f"apply_patch/a#{calls[0]}", "errorKind": None, "message": None,
         "result": {"success": False, "error": {
             "kind": "command_failed", "message": f"path \"{ws[0]}/x\" is absolute",
             "details": {"path": f"{ws[0]}/x", "reason": "absolute_path"}}},
         "stderr": "", "amended": False},
        {"type": "case", "id": "get_patch_change/b", "outcome": "pass",
         "durationMs": rng.randrange(500),
         "toolCallId": f"get_patch_change/b#{calls[1]}", "errorKind": None, "message": None,
         "result": {"success": True, "batchId": ids["batch"], "batch": {
             "batchId": ids["batch"], "callId": f"get_patch_change/b#{calls[1] + 1}",
             "mcpCallId": f"call-{rng.getrandbits(64):016x}",
             "recordedAtMs": 1795936958512 + rng.randrange(10**6),
             "files": [{"filePatchId": ids["fp"], "changes": [{"changeId": ids["chg"]}]}]}},
         "stderr": "", "amended": False},
        {"type": "case", "id": "read_file/c", "outcome": "pass", "durationMs": rng.randrange(500),
         "toolCallId": f"read_file/c#{calls[2]}", "errorKind": None, "message": None,
         "result": {"success": True, "content": "one\n"}, "stderr": "", "amended": False},
    ]
    # An amended record: only the last line of an id counts.
    first = dict(cases[2], outcome="fail", amended=False)
    cases[2] = dict(cases[2], amended=True)
    cases.insert(2, first)
    if plant == "message":
        cases[0]["result"]["error"]["message"] += " (changed)"
    elif plant == "reason":
        cases[0]["result"]["error"]["details"]["reason"] = "outside_workspace"
    elif plant == "outcome":
        cases[3]["outcome"] = "fail"
    elif plant == "member-order":
        r = cases[3]["result"]
        cases[3]["result"] = {"content": r["content"], "success": r["success"]}
    elif plant == "id-not-repeated":
        cases[1]["result"]["batch"]["batchId"] = f"batch-{rng.getrandbits(128):032x}"
    elif plant == "missing-case":
        del cases[2:]
    rng.shuffle(cases)
    cases.sort(key=lambda c: c["amended"])  # an amendment comes after its case
    url = (f"ws://127.0.0.1:{rng.randrange(30000, 60000)}/ws/agent/chat?sessionId=patchspec-"
           f"{rng.randrange(99999)}-{rng.getrandbits(40)}&projectKey=patchspec")
    header = {"type": "header", "executor": {"command": [binary, "exec", "--connect", url]},
              "workDir": f"{work} (--work-dir)"}
    footer = {"type": "footer", "totals": {"pass": 3}, "durationMs": rng.randrange(9999)}
    return [json.dumps(r) for r in [header] + cases + [footer]]


FAKE_BINARY = """#!/usr/bin/env python3
import json, os, sys
sys.path.insert(0, {here!r})
wc = __import__("importlib").import_module("wire_compare_self_test")
args = sys.argv[1:]
if args[:2] == ["check", "-h"]:
    values = "oneshot, session, websocket, mcp" + os.environ.get("EXTRA_TRANSPORT", "")
    print("      --transport <TRANSPORT>  Transport [possible values: " + values + "]")
    sys.exit(0)
opt = lambda name: args[args.index(name) + 1]
plant = os.environ.get("PLANT_" + os.path.basename(sys.argv[0])) or None
lines = wc.fake_report(opt("--work-dir"), sys.argv[0], os.getpid(), plant)
with open(opt("--report-file"), "w") as f:
    f.write("\\n".join(lines) + "\\n")
"""


def self_test():
    """The comparison on planted reports: noise alone passes, each real
    change is reported. Prints `self-test: N passed, N failed`."""
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(what)
            print(f"self-test FAILED: {what}: got {got!r}, want {want!r}")

    def normalised(seed, plant=None, work="/tmp/w1", binary="/a/patchspec"):
        return normalise(fake_report(work, binary, seed, plant), Noise(work, binary))

    # Noise alone: other durations, call ids, store ids, clocks, work
    # folders, binaries and case order.
    base = normalised(1)
    ids, differing, header_eq, footer_eq = compare(
        base, normalised(2, work="/dev/shm/other", binary="/b/patchspec")
    )
    expect("noise alone: records", len(ids), 3)
    expect("noise alone: differing", differing, [])
    expect("noise alone: header and footer", (header_eq, footer_eq), (True, True))
    # Each planted change is reported, on its case alone.
    planted = {
        "message": "apply_patch/a",
        "reason": "apply_patch/a",
        "outcome": "read_file/c",
        "member-order": "read_file/c",
        "id-not-repeated": "get_patch_change/b",
        "missing-case": "read_file/c",
    }
    for plant, case in planted.items():
        _, differing, _, _ = compare(base, normalised(3, plant, work="/var/tmp/w2"))
        expect(f"planted {plant}", differing, [case])
    # A diff shows the changed member, not only the case's name.
    before, after = base[1]["apply_patch/a"], normalised(4, "reason")[1]["apply_patch/a"]
    expect("the diff names the changed reason",
           any('"outside_workspace"' in line for line in diff(before, after)), True)
    # The whole command, with two fake binaries: exit 0 on noise, 1 on a plant.
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.abspath(__file__), os.path.join(tmp, "wire_compare_self_test.py"))
        for name in ("before", "after"):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(FAKE_BINARY.format(here=tmp))
            os.chmod(path, 0o755)
        argv = ["--before", os.path.join(tmp, "before"), "--after", os.path.join(tmp, "after"),
                "--corpus", tmp, "--transport", "oneshot", "--transport", "mcp"]

        def command(**env):
            env = dict(os.environ, **env)
            return subprocess.run([sys.executable, os.path.abspath(__file__)] + argv,
                                  capture_output=True, text=True, env=env)

        for plant, want in (("", 0), ("reason", 1)):
            run = command(PLANT_after=plant)
            expect(f"the command, plant {plant!r}: exit", run.returncode, want)
            verdict = f"oneshot: 3 records, {1 if plant else 0} differ"
            expect(f"the command, plant {plant!r}: verdict",
                   verdict in run.stdout.splitlines(), True)
        # A transport the script cannot run is not skipped in silence.
        expect("a transport this script does not know: exit",
               command(EXTRA_TRANSPORT=", carrier-pigeon").returncode, 2)
    checks = 3 + len(planted) + 1 + 4 + 1
    print(f"self-test: {checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
