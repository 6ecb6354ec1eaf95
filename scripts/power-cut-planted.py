#!/usr/bin/env python3
"""Plant each fault of the commit path's durability in turn, run the power-cut
tests (engine/tests/power_cut.rs), and say which of them catch it.

Each fault is a textual edit of engine/src; the file is restored after the
run, whatever happens. Exit 0 when every planted fault is caught by at least
one test; prints one line per fault.

    python3 scripts/power-cut-planted.py            # every fault
    python3 scripts/power-cut-planted.py F1 F2      # some of them
"""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
JOURNAL = ROOT / "engine/src/journal.rs"
COMMIT = ROOT / "engine/src/commit.rs"

FAULTS = {
    "F1": (
        "the commit point's folder fsync dropped",
        JOURNAL,
        "    fs.rename(&intent_path(&dir), &committed_path(&dir))?;\n    fs.sync_dir(&dir)\n",
        "    fs.rename(&intent_path(&dir), &committed_path(&dir))?;\n    Ok(())\n",
    ),
    "F2": (
        "the commit point moved before the touched folders' fsync",
        COMMIT,
        None,  # a swap of two blocks: see plant()
        None,
    ),
    "F3": (
        "the touched folders' fsync dropped",
        COMMIT,
        "        if let Err(e) = fs.sync_dir(&dir) {\n            return Err(abort(\"syncing\", &dir, e, true));\n        }\n",
        "        let _ = &dir;\n",
    ),
    "F4": (
        "the intent's folder fsync dropped",
        JOURNAL,
        "    fs.write_new(&intent_path(&dir), &bytes, None)?;\n    fs.sync_dir(&dir)?;\n",
        "    fs.write_new(&intent_path(&dir), &bytes, None)?;\n",
    ),
    "F5": (
        "the renaming marker's folder fsync dropped",
        JOURNAL,
        "    fs.write_new(&marker_path(&dir), b\"\", None)?;\n    fs.sync_dir(&dir)\n",
        "    fs.write_new(&marker_path(&dir), b\"\", None)?;\n    Ok(())\n",
    ),
    "F6": (
        "undo: the folders renamed out of (journal, trash) not fsync'd",
        JOURNAL,
        "            Step::Update { .. } => dirs.push(&own),\n            Step::Delete { trash, .. } => dirs.push(parent_of(trash)),\n",
        "            Step::Update { .. } => {}\n            Step::Delete { .. } => {}\n",
    ),
    "F7": (
        "undo: a created folder removed without fsyncing it first",
        JOURNAL,
        "sync_if_present(fs, path).and_then(|()| fs.remove_dir(path))",
        "fs.remove_dir(path)",
    ),
    "F8": (
        "recovery: the remains of a cut clean-up left foreign",
        JOURNAL,
        "            Err(_) if is_remains(fs, &name, &dir) && discard(fs, &dir).is_ok() => {",
        "            Err(_) if false && is_remains(fs, &name, &dir) && discard(fs, &dir).is_ok() => {",
    ),
    "F9": (
        "undo: the transaction's trash folders removed without fsyncs",
        JOURNAL,
        "        if sync_if_present(fs, &dir).is_ok() && fs.remove_dir(&dir).is_ok() {",
        "        if fs.remove_dir(&dir).is_ok() {",
    ),
}

PHASE3 = re.compile(r"    // Phase 3: make the renames durable\.\n(.*?\n    }\n)", re.S)
PHASE4 = re.compile(r"    // Phase 4: the commit point.*?\n(    if let Err\(e\) = journal::commit_point.*?\n    }\n)", re.S)


def plant(key):
    _, path, old, new = FAULTS[key]
    text = path.read_text()
    if key == "F2":
        p3, p4 = PHASE3.search(text), PHASE4.search(text)
        if not p3 or not p4:
            raise SystemExit(f"{key}: the commit phases moved; update this script")
        body3, body4 = p3.group(1), p4.group(1)
        planted = text.replace(body3, "@@PHASE3@@").replace(body4, body3).replace("@@PHASE3@@", body4)
    else:
        if old not in text:
            raise SystemExit(f"{key}: the planted line is not in {path.name}; update this script")
        planted = text.replace(old, new, 1)
    path.write_text(planted)
    return text


def main():
    keys = sys.argv[1:] or list(FAULTS)
    uncaught = []
    for key in keys:
        what, path, _, _ = FAULTS[key]
        original = plant(key)
        try:
            run = subprocess.run(
                ["cargo", "test", "-q", "-p", "patchspec-engine", "--test", "power_cut", "--", "--test-threads", "2"],
                cwd=ROOT, capture_output=True, text=True,
            )
        finally:
            path.write_text(original)
        failed = re.findall(r"^    (a_power_cut\w+)$", run.stdout, re.M)
        first = re.search(r"panicked at [^\n]*\n([^\n]*)", run.stdout + run.stderr)
        if run.returncode == 0:
            uncaught.append(key)
            print(f"{key} ({what}): NOT caught")
        else:
            reason = first.group(1)[:160] if first else "see cargo output"
            print(f"{key} ({what}): caught by {', '.join(failed) or 'the build'}: {reason}")
    print(f"{len(keys) - len(uncaught)} caught, {len(uncaught)} not caught")
    return 1 if uncaught else 0


if __name__ == "__main__":
    sys.exit(main())
