#!/usr/bin/env python3
"""The differential-fuzzing report of adapters/fuzz-columns.sh, in Markdown.

    fuzz_report.py FUZZ_DIR COMPLIANCE_OUTCOME_MATRIX_JSON

FUZZ_DIR holds, per column, `COLUMN.json` (`patchspec fuzz --report json`)
and `COLUMN/matrix/matrix.json` (the found cases replayed as a corpus).
Each found case (one per signature) is read like a corpus case (its
departure, its drift, its hazards: compliance_report.hazards_of) and
*maps* to the corpus cases the column fails with the same reading: the same
departure, the same drift kinds, the same hazards. A found case that maps
to none is new beyond the corpus (a candidate corpus case or
clarification, to be judged by hand: the mapping is a shortlist, not a
proof). Python 3.8+, standard library only.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compliance_report import hazards_of  # noqa: E402

# How many mapped corpus cases are named per found case.
SHOWN = 3


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def reading(case, result):
    """What a cell shows, comparable across corpora."""
    if not result:
        return None
    return (result.get("departure"), tuple(result.get("drift") or ()), tuple(hazards_of(case, result)))


def mapped(column, found_reading, corpus):
    return [c["id"] for c in corpus["cases"]
            if c["results"].get(column, {}).get("outcome") in ("fail", "error")
            and reading(c, c["results"][column]) == found_reading]


def report(fuzz_dir, corpus):
    lines = ["| column | calls | disagreements | signatures | new beyond the corpus |", "|---|---:|---:|---:|---:|"]
    details = []
    for name in sorted(f[:-5] for f in os.listdir(fuzz_dir) if f.endswith(".json")):
        r = load(os.path.join(fuzz_dir, name + ".json"))
        matrix_path = os.path.join(fuzz_dir, name, "matrix", "matrix.json")
        replay = {c["id"]: c for c in load(matrix_path)["cases"]} if os.path.exists(matrix_path) else {}
        new = 0
        details.append("**%s** (%s)" % (name, r.get("reproduce", "")))
        details.append("")
        for f in r["found"]:
            case = replay.get(f["id"])
            read = reading(case, case["results"].get(name)) if case else None
            ids = mapped(name, read, corpus) if read else []
            if read is None:
                verdict = "not replayed"
            elif read[0] is None:
                verdict = "passes when replayed (not reproducible)"
            elif ids:
                verdict = "maps to " + ", ".join("`%s`" % x for x in ids[:SHOWN]) + (
                    " (+%d)" % (len(ids) - SHOWN) if len(ids) > SHOWN else "")
            else:
                verdict = "**new**: no corpus case the column fails the same way"
                new += 1
            shown = "departure %s" % read[0] if read else ""
            if read and read[1]:
                shown += ", drift %s" % "+".join(read[1])
            details.append("- `%s` × %d (`%s`; %s): %s" % (f["signature"], f["count"], f["id"], shown, verdict))
        if not r["found"]:
            details.append("- no disagreement")
        details.append("")
        lines.append("| **%s** | %d | %d | %d | %d |" % (name, r["calls"], r["disagreements"], len(r["found"]), new))
    return "\n".join(lines + [""] + details)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: fuzz_report.py FUZZ_DIR COMPLIANCE_OUTCOME_MATRIX_JSON\n")
        return 2
    print(report(argv[0], load(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
