#!/usr/bin/env python3
"""Run the composite GitHub Action (action.yml) locally, step by step, as a
runner would, and check what it does; check the workflows' structure.

    scripts/ci-template-test.py [--patchspec-target DIR]

How a step runs here, as on GitHub: every `run:` step is written to a file
and executed with `bash --noprofile --norc -eo pipefail FILE` (GitHub's
`shell: bash`), in its `working-directory`, with the step's `env:` (its
`${{ … }}` expressions evaluated: `inputs.*`, `github.action_path`,
`runner.os`, `steps.ID.outputs.*`), and `GITHUB_OUTPUT`, `GITHUB_PATH`,
`GITHUB_STEP_SUMMARY`, `GITHUB_WORKSPACE`, `RUNNER_TEMP` and the action's
`PATCHSPEC_CACHE_DIR` (a scratch directory) set. Lines a
step appends to `GITHUB_PATH` are put in front of `PATH` for the next steps;
`GITHUB_OUTPUT` becomes `steps.ID.outputs`. The first failing step fails the
action. A `uses:` step (actions/cache) is not run: its `with:` expressions
are evaluated and checked, and the cache it would restore is the install
directory itself, which persists from one scenario to the next, so the
second scenario takes the cached path.

The install step's `cargo install` builds into CARGO_TARGET_DIR, set to the
repository's `target/` (unless already set) so it reuses a release build.
Scenarios: pinned run of the reference engine (pins computed here
independently: VERSION, and the content hash re-implemented in Python), an
executor found through GITHUB_PATH, a pin that does not hold (exit 2), a
known failure without and with a baseline (needs
target/release/patchspec-test-executor: `cargo build --release -p
patchspec-conformance --features test-bins`), and shards as a job matrix
(the shards' JUnit cases add up to the whole), and the prebuilt installs
(`install: archive` and `wheel`, built by scripts/dist-archive.sh and
build-wheel.sh: nothing compiled at install; a checksum that does not hold
fails). With `shellcheck` on PATH,
every `run:` script is also checked by it.

Prints `ci-templates: N passed, N failed`; exits 1 if any check failed.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import yaml
except ImportError:  # pragma: no cover - reported, not hidden
    sys.exit("ci-template-test: PyYAML is needed (python3 -m pip install pyyaml)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")

passed = 0
failed = 0
CACHE_DIR = [None]


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS  %s" % name)
    else:
        failed += 1
        print("FAIL  %s%s" % (name, ("\n      " + detail.replace("\n", "\n      ")) if detail else ""))


def corpus_hash(corpus):
    """The corpus content hash, as patchspec computes it (docs/pinning.md):
    SHA-256 over the case files (every *.json outside the top-level schema/
    and dot folders) in path order, each as its relative path, NUL, bytes, NUL."""
    files = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        rel_dir = os.path.relpath(dirpath, corpus)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != "schema" and not d.startswith(".")]
            filenames = [f for f in filenames if not f.startswith(".")]
        for f in filenames:
            if f.endswith(".json"):
                rel = os.path.normpath(os.path.join(rel_dir, f))
                files.append(rel)
    files.sort(key=lambda p: [c.encode() for c in p.split("/")])
    h = hashlib.sha256()
    for rel in files:
        h.update(rel.encode() + b"\0")
        with open(os.path.join(corpus, rel), "rb") as fh:
            h.update(fh.read())
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


class Context:
    """What `${{ … }}` can name while the action runs."""

    def __init__(self, action, inputs):
        self.inputs = {}
        for name, spec in (action.get("inputs") or {}).items():
            self.inputs[name] = str(spec.get("default", "")) if spec else ""
        unknown = set(inputs) - set(self.inputs)
        if unknown:
            raise ValueError("inputs the action does not declare: %s" % sorted(unknown))
        self.inputs.update(inputs)
        self.steps = {}

    def value(self, expr):
        parts = expr.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs[parts[1]]
        if expr == "github.action_path":
            return ROOT
        if expr == "runner.os":
            return "Linux"
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        raise ValueError("an expression this test does not know: %s" % expr)

    def eval(self, text):
        return EXPR.sub(lambda m: self.value(m.group(1)), str(text))


def read_outputs(path):
    """GITHUB_OUTPUT: `name=value` lines and `name<<DELIM` … `DELIM` blocks."""
    out = {}
    with open(path) as fh:
        lines = fh.read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:j])
            i = j + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


def run_action(action, inputs, scratch, workspace, log_name):
    """Run the action's steps; return (ok, outputs, step summary text, log)."""
    ctx = Context(action, inputs)
    summary = os.path.join(scratch, "step-summary.md")
    open(summary, "a").close()
    path_prefix = []
    log = []
    ok = True
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", "step %d" % index)
        if "uses" in step:
            with_ = {k: ctx.eval(v) for k, v in (step.get("with") or {}).items()}
            empty = [k for k, v in with_.items() if not v.strip()]
            if empty:
                log.append("%s: uses %s with empty %s" % (name, step["uses"], empty))
                ok = False
                break
            log.append("%s: uses %s %s (not run locally)" % (name, step["uses"], with_))
            continue
        script = os.path.join(scratch, "step-%d.sh" % index)
        with open(script, "w") as fh:
            fh.write(step["run"])
        outputs = os.path.join(scratch, "output-%d" % index)
        github_path = os.path.join(scratch, "path-%d" % index)
        open(outputs, "w").close()
        open(github_path, "w").close()
        env = dict(os.environ)
        # A patchspec already on this machine's PATH must not stand in for
        # the one the action installs: only GITHUB_PATH may provide it.
        inherited = [d for d in env.get("PATH", "").split(os.pathsep)
                     if d and not os.path.exists(os.path.join(d, "patchspec"))]
        env["PATH"] = os.pathsep.join(path_prefix + inherited)
        env.update({
            "GITHUB_OUTPUT": outputs,
            "GITHUB_PATH": github_path,
            "GITHUB_STEP_SUMMARY": summary,
            "GITHUB_WORKSPACE": workspace,
            "GITHUB_ACTION_PATH": ROOT,
            "RUNNER_TEMP": scratch,
            "RUNNER_OS": "Linux",
            # The action's cache directory; HOME stays (cargo and rustup live there).
            "PATCHSPEC_CACHE_DIR": CACHE_DIR[0] or os.path.join(scratch, "..", "cache"),
            "CI": "true",
        })
        env.setdefault("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        for key, value in (step.get("env") or {}).items():
            env[key] = ctx.eval(value)
        cwd = os.path.join(workspace, ctx.eval(step.get("working-directory", ".")))
        if step.get("shell") != "bash":
            log.append("%s: shell is %r, not bash" % (name, step.get("shell")))
            ok = False
            break
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                              cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL)
        text = proc.stdout.decode(errors="replace")
        log.append("== %s (exit %d)\n%s" % (name, proc.returncode, text))
        if "id" in step:
            ctx.steps[step["id"]] = read_outputs(outputs)
        with open(github_path) as fh:
            path_prefix = [p for p in fh.read().splitlines() if p] + path_prefix
        if proc.returncode != 0:
            ok = False
            break
    outs = {k: ctx.eval(v.get("value", "")) for k, v in (action.get("outputs") or {}).items()}
    with open(summary) as fh:
        summary_text = fh.read()
    with open(os.path.join(scratch, "..", log_name + ".log"), "w") as fh:
        fh.write("\n".join(log))
    return ok, outs, summary_text, "\n".join(log)


def junit_cases(path):
    try:
        return [tc.get("name") for tc in ET.parse(path).getroot().iter("testcase")]
    except (OSError, ET.ParseError):
        return None


def structure(action):
    """Static checks of action.yml."""
    check("action: runs.using is composite", action.get("runs", {}).get("using") == "composite")
    steps = action["runs"]["steps"]
    ids = []
    declared = set((action.get("inputs") or {}).keys())
    for step in steps:
        name = step.get("name", "?")
        text = yaml.safe_dump(step)
        for expr in EXPR.findall(text):
            parts = expr.split(".")
            if parts[0] == "inputs":
                check("action: %s names a declared input (%s)" % (name, expr), parts[1] in declared)
            if parts[0] == "steps":
                check("action: %s names an earlier step (%s)" % (name, expr), parts[1] in ids)
        if "run" in step:
            check("action: %s has shell: bash" % name, step.get("shell") == "bash")
            check("action: %s passes inputs through env, not into the script" % name,
                  not EXPR.search(step["run"]), "a ${{ }} inside run: is script injection")
        if "id" in step:
            ids.append(step["id"])
    for out, spec in (action.get("outputs") or {}).items():
        for expr in EXPR.findall(spec.get("value", "")):
            check("action: output %s names a step (%s)" % (out, expr), expr.split(".")[1] in ids)
    if shutil.which("shellcheck"):
        for step in steps:
            if "run" in step:
                proc = subprocess.run(["shellcheck", "-s", "bash", "-"], input=step["run"].encode(),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                check("action: shellcheck %s" % step.get("name"), proc.returncode == 0,
                      proc.stdout.decode(errors="replace"))
    else:
        print("note: shellcheck not on PATH; the run: scripts are not linted")


def workflows():
    wf_dir = os.path.join(ROOT, ".github", "workflows")
    names = sorted(os.listdir(wf_dir)) if os.path.isdir(wf_dir) else []
    check("workflows: .github/workflows has workflow files", bool(names))
    runs_ci = False
    uses_action = False
    for n in names:
        with open(os.path.join(wf_dir, n)) as fh:
            wf = yaml.safe_load(fh)
        # PyYAML reads the key `on` as the boolean True (YAML 1.1).
        check("workflows: %s has triggers and jobs" % n, (True in wf or "on" in wf) and bool(wf.get("jobs")))
        for job in wf.get("jobs", {}).values():
            for step in job.get("steps", []):
                runs_ci |= ".ci/run" in str(step.get("run", ""))
                uses_action |= step.get("uses") == "./"
    check("workflows: one runs .ci/run", runs_ci)
    check("workflows: one uses the action itself (uses: ./)", uses_action)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--cache-dir", help="the action's cache directory (default: a fresh scratch one, "
                    "so the first scenario installs); reuse one to start from a cache hit")
    args = ap.parse_args()
    CACHE_DIR[0] = os.path.abspath(args.cache_dir) if args.cache_dir else None
    with open(os.path.join(ROOT, "action.yml")) as fh:
        action = yaml.safe_load(fh)
    structure(action)
    workflows()

    base = tempfile.mkdtemp(prefix="patchspec-action-")
    counter = [0]

    def scenario(name, inputs, files=None):
        counter[0] += 1
        scratch = os.path.join(base, "s%d" % counter[0])
        workspace = os.path.join(scratch, "ws")
        os.makedirs(workspace)
        for rel, content in (files or {}).items():
            with open(os.path.join(workspace, rel), "w") as fh:
                fh.write(content)
        result = run_action(action, inputs, scratch, workspace, "s%d" % counter[0])
        return result + (workspace,)

    with open(os.path.join(ROOT, "corpus", "VERSION")) as fh:
        version = fh.read().strip()
    pin = corpus_hash(os.path.join(ROOT, "corpus"))

    # 1. The reference engine, pinned, one tool: installs, checks, reports.
    ok, outs, summary, log, ws = scenario("pinned", {
        "corpus-version": version, "corpus-hash": pin, "args": "--tool workspace.read_file"})
    check("pinned reference run: the action succeeds", ok, log[-3000:])
    check("pinned reference run: exit-code output 0", outs.get("exit-code") == "0", str(outs))
    cases = junit_cases(os.path.join(ws, outs.get("junit") or "patchspec-junit.xml"))
    check("pinned reference run: JUnit written with test cases", bool(cases), str(cases)[:200])
    check("pinned reference run: the Markdown report is in the job summary",
          "patchspec conformance" in summary and pin.split(":")[1][:16] in summary, summary[:500])

    # 2. An executor found through GITHUB_PATH; the binary now comes from the cache.
    ok, outs, summary, log, ws = scenario("path", {
        "executor": "patchspec exec", "args": "--run apply_patch/add/**"})
    check("executor on GITHUB_PATH: the action succeeds", ok, log[-3000:])
    check("executor on GITHUB_PATH: the second run takes the cached binary", "patchspec: cached in" in log, log[-2000:])
    check("executor on GITHUB_PATH: the report names the executor", "patchspec exec" in summary or "oneshot" in summary, summary[:500])

    # 3. A pin that does not hold: exit 2 before any case, and the action fails.
    ok, outs, summary, log, ws = scenario("bad-pin", {"corpus-version": "9.9.9", "args": "--tool workspace.read_file"})
    check("wrong pin: the action fails", not ok)
    check("wrong pin: exit-code output 2", outs.get("exit-code") == "2", str(outs) + "\n" + log[-2000:])
    check("wrong pin: the job summary says why there is no report", "before writing a report" in summary or "9.9.9" in summary, summary)

    # 4. A known failure: red without the baseline, green with it.
    test_executor = next((p for p in (os.path.join(ROOT, "target", kind, "patchspec-test-executor")
                                      for kind in ("release", "debug")) if os.path.exists(p)),
                         os.path.join(ROOT, "target", "release", "patchspec-test-executor"))
    case = "apply_patch/add/adds-file-with-final-newline"
    if os.path.exists(test_executor):
        refuser = "%s --hello --tool apply_patch --always refuse" % test_executor
        ok, outs, summary, log, ws = scenario("no-baseline", {"executor": refuser, "args": "--run " + case})
        check("known failure without a baseline: the action fails", not ok, log[-2000:])
        baseline = json.dumps([{"id": case, "outcome": "fail", "reason": "refuses everything"}])
        ok, outs, summary, log, ws = scenario("baseline", {
            "executor": refuser, "args": "--run " + case, "baseline": "known-failures.json"},
            files={"known-failures.json": baseline})
        check("known failure with a baseline: the action succeeds", ok, log[-3000:])
        check("known failure with a baseline: exit-code output 0", outs.get("exit-code") == "0", str(outs))
    else:
        check("baseline scenarios: %s is built" % os.path.relpath(test_executor, ROOT), False,
              "cargo build --release -p patchspec-conformance --features test-bins")

    # 5. Shards as a job matrix: the shards' cases add up to the whole, once each.
    shards = []
    for i in (1, 2):
        ok, outs, summary, log, ws = scenario("shard", {"shard": "%d/2" % i, "args": "--tool workspace_create_file"})
        check("shard %d/2: the action succeeds" % i, ok, log[-2000:])
        shards.append(junit_cases(os.path.join(ws, "patchspec-junit.xml")) or [])
    ok, outs, summary, log, ws = scenario("unsharded", {"args": "--tool workspace_create_file"})
    whole = junit_cases(os.path.join(ws, "patchspec-junit.xml")) or []
    check("shards: both non-empty, disjoint, and together the unsharded run",
          all(shards) and sorted(shards[0] + shards[1]) == sorted(whole) and whole,
          "%d + %d vs %d" % (len(shards[0]), len(shards[1]), len(whole)))

    # 6. Prebuilt installs: the release archive (checksum verified) and the
    # wheel, built here by the packaging scripts; neither compiles.
    dist = os.path.join(base, "dist")
    built = {}
    for kind, script in (("archive", "dist-archive.sh"), ("wheel", "build-wheel.sh")):
        proc = subprocess.run([os.path.join(ROOT, "scripts", script), dist], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        check("%s: scripts/%s builds it" % (kind, script), proc.returncode == 0, proc.stderr[-2000:])
        built[kind] = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else None
    for kind, package in built.items():
        if not package:
            continue
        ok, outs, summary, log, ws = scenario("install-" + kind, {
            "install": kind, "package": package, "args": "--tool workspace.read_file"})
        check("install %s: the action succeeds" % kind, ok, log[-3000:])
        check("install %s: exit-code output 0" % kind, outs.get("exit-code") == "0", str(outs))
        check("install %s: nothing is compiled" % kind, "cargo install" not in log and "Compiling" not in log, log[-2000:])
    if built.get("archive"):
        tampered = os.path.join(base, "tampered", os.path.basename(built["archive"]))
        os.makedirs(os.path.dirname(tampered))
        shutil.copy(built["archive"], tampered)
        with open(tampered + ".sha256", "w") as fh:
            fh.write("0" * 64 + "  " + os.path.basename(tampered) + "\n")
        ok, outs, summary, log, ws = scenario("install-tampered", {"install": "archive", "package": tampered})
        check("install archive: a checksum that does not match fails the action", not ok, log[-2000:])
    ok, outs, summary, log, ws = scenario("install-no-package", {"install": "wheel"})
    check("install wheel without package: the action fails, saying so",
          not ok and "needs package" in log, log[-2000:])

    if args.keep:
        print("scratch kept in %s" % base)
    else:
        shutil.rmtree(base, ignore_errors=True)
    print("ci-templates: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
