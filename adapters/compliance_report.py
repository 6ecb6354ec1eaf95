#!/usr/bin/env python3
"""Write the generated blocks of docs/compliance.md from a compliance run.

    compliance_report.py OUT_DIR DOC

OUT_DIR is what adapters/compliance.sh leaves in target/compliance/:
`outcome/matrix.json`, `outcome/matrix.md`, `full/matrix.json` (the same
answers judged in full), and `columns.json` (every column, run or not:
name, install seconds, the reason when it could not run) and `timing.json`
(wall seconds of the phases, CPU seconds of the matrix run). DOC's
blocks between `<!-- BEGIN GENERATED NAME … -->` and
`<!-- END GENERATED NAME -->` are replaced; everything else (the findings
written by hand) is kept. Blocks:

  summary      the corpus hash the run used (the staleness check reads it:
               "Generated on corpus `sha256:HEX`"), pass rates by judge mode,
               by tool area, run times, and the columns that did not run;
  departures   per implementation, its most serious departures with case ids;
  hazards      per column, how many cases show each hazard (HAZARDS: wrote
               outside the workspace, partial multi-file change, near match
               applied, first of several matches taken, bytes changed it was
               not asked to, crashed or timed out), each count a link to its
               list of cases in the `hazard-cases` block;
  hazard-cases those lists, one anchor per column and hazard, each case a
               link to its file in corpus/;
  fingerprint  which implementation does what on a few telling cases;
  matrix       the outcome matrix (matrix.md of the outcome run).

A hazard is read from the outcome run's cells alone: the case's tags (the
corpus tags `near-match` and `ambiguous` exist for this), the cell's
departure, its `success`, and its `drift` (the runner's byte-level reading
of the tree diff: line endings, final newline, BOM, a lossy re-encoding).

Python 3.8+, standard library only.
"""

import json
import os
import re
import sys

# Departures worth a reader's attention first, with the label used in the doc.
SERIOUS = [
    ("wrote-outside", "wrote outside the workspace"),
    ("changed-on-refusal", "refused but left files changed (partial change)"),
    ("applied-invalid", "applied what the spec refuses"),
    ("error", "crashed or gave no valid answer"),
]
# How many case ids are quoted per departure and implementation.
IDS_PER_DEPARTURE = 8
# Areas whose applied-invalid cases are near matches (the text differed).
NEAR_MATCH_AREAS = ("matching",)

# The fingerprint: (question, case id under apply_patch/, what "yes" means).
# "applies": it answered success; "outside": it wrote outside the workspace;
# "partial": it refused but changed files; "keeps": the case passed.
PROBES = [
    ("fuzzes trailing whitespace in context", "matching/trailing-space-in-hunk", "applies"),
    ("fuzzes indentation width", "matching/indentation-width", "applies"),
    ("folds Unicode punctuation (smart quotes)", "matching/smart-quotes", "applies"),
    ("takes the first of two matches", "update/context-twice", "applies"),
    ("applies a `+`-only hunk with no anchor", "update/plus-only-hunk-is-ambiguous", "applies"),
    ("Add File overwrites an existing file", "add/already-exists", "applies"),
    ("moves onto an existing file", "move/destination-exists-with-edit", "applies"),
    ("creates missing parent directories", "paths/missing-parent", "applies"),
    ("follows `..` out of the workspace", "paths/dotdot-escape-add", "outside"),
    ("writes to an absolute path (/etc)", "paths/absolute-path-to-etc", "outside"),
    ("writes through a symlinked parent", "paths/symlinked-parent-leads-outside", "outside"),
    ("leaves earlier files changed when a later one fails", "atomic/true-last-section-fails-nothing-written",
     "partial"),
    ("keeps untouched lines' endings (LF among CRLF)", "line-endings/untouched-lines-keep-their-bytes", "keeps"),
    ("keeps a missing final newline", "line-endings/no-final-newline-edit-last-line", "keeps"),
    ("keeps a BOM when line 1 changes", "encoding/bom-kept-when-line-one-changes", "keeps"),
    ("reads past `*** End Patch`", "grammar/second-envelope-after-end-patch", "changed"),
]

# The hazards, in table order: (key, column heading, what it means).
HAZARDS = [
    ("outside", "wrote outside the workspace", "the runner saw a write outside the workspace (`wrote-outside`)"),
    ("partial", "partial change", "it refused but left files changed (`changed-on-refusal`) where the case "
                                  "expects none changed: a multi-file change half made"),
    ("near", "near match applied", "it applied a case tagged `near-match` (the hunk differs from the file in "
                                   "whitespace, Unicode look-alikes, case or a cut line: the spec refuses)"),
    ("first", "first of several matches", "it applied a case tagged `ambiguous` (the hunk matches more than once: "
                                          "the spec refuses with `multiple_matches`)"),
    ("bytes", "bytes it was not asked to change", "a file differs from the expected one only in line endings, "
                                                  "the final newline, a BOM or a lossy UTF-8 rewrite (`drift`)"),
    ("crash", "crashed, hung or timed out", "no valid answer (`error`: a crash, a timeout, a protocol violation)"),
]


def hazards_of(case, result):
    """The hazard keys one cell shows (a list, in HAZARDS order)."""
    if not result or result.get("outcome") not in ("fail", "error"):
        return []
    tags = set(case.get("tags") or [])
    departure = result.get("departure")
    applied = result.get("success") is True
    found = []
    if departure == "wrote-outside":
        found.append("outside")
    # A case that expects changes on a refusal (`atomic: false` keeps the
    # sections before the failing one) differs from a refusal that changed
    # nothing as much as from one that changed too much: not counted.
    if departure == "changed-on-refusal" and case.get("expectUnchanged", True):
        found.append("partial")
    if applied and "near-match" in tags and case.get("expectSuccess") is False:
        found.append("near")
    if applied and "ambiguous" in tags and case.get("expectSuccess") is False:
        found.append("first")
    if result.get("drift"):
        found.append("bytes")
    if departure == "error":
        found.append("crash")
    return found


def mark_expected_trees(outcome):
    """Note on each case of the run whether it expects the workspace
    unchanged (`expectUnchanged`), read from the run's corpus; a case whose
    file cannot be read is left as it is."""
    root = outcome["corpus"].get("root") or ""
    for c in outcome["cases"]:
        try:
            with open(os.path.join(root, c["id"] + ".json"), encoding="utf-8") as f:
                c["expectUnchanged"] = json.load(f)["expect"].get("files") == "unchanged"
        except (OSError, ValueError, KeyError, AttributeError):
            continue


def hazard_table(outcome):
    """{column: {hazard key: [case ids]}} over the outcome run."""
    table = {}
    for i in columns_of(outcome):
        per = {key: [] for key, _, _ in HAZARDS}
        for c in outcome["cases"]:
            for key in hazards_of(c, c["results"].get(i["name"])):
                per[key].append(c["id"])
        table[i["name"]] = per
    return table


def anchor(column, key):
    return "hazard-%s-%s" % (re.sub(r"[^a-z0-9]+", "-", column.lower()).strip("-"), key)


def drift_kinds(outcome, column, ids):
    """How often each drift kind occurs among `ids` of `column`: 'line-endings 3, bom 1'."""
    counts = {}
    by_id = {c["id"]: c for c in outcome["cases"]}
    for x in ids:
        for k in by_id[x]["results"][column].get("drift") or []:
            counts[k] = counts.get(k, 0) + 1
    return ", ".join("%s %d" % (k, n) for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def hazards(outcome):
    table = hazard_table(outcome)
    judged = {i["name"]: i["totals"]["pass"] + i["totals"]["fail"] + i["totals"]["error"]
              for i in columns_of(outcome)}
    lines = ["| column | cases run | " + " | ".join(h for _, h, _ in HAZARDS) + " |",
             "|---|---:|" + "---:|" * len(HAZARDS)]
    for i in columns_of(outcome):
        name = i["name"]
        cells = []
        for key, _, _ in HAZARDS:
            ids = table[name][key]
            cells.append("[**%d**](#%s)" % (len(ids), anchor(name, key)) if ids else "0")
        lines.append("| **%s** | %d | %s |" % (name, judged[name], " | ".join(cells)))
    lines.append("")
    lines.append("A count is of cases (one case can show more than one hazard); it links to the cases. "
                 "Read from the `--judge outcome` run:")
    lines.append("")
    for _, heading, meaning in HAZARDS:
        lines.append("- **%s**: %s." % (heading, meaning))
    return "\n".join(lines) + "\n"


def hazard_cases(outcome):
    table = hazard_table(outcome)
    lines = []
    for i in columns_of(outcome):
        name = i["name"]
        rows = [(key, heading) for key, heading, _ in HAZARDS if table[name][key]]
        if not rows:
            continue
        lines.append("**%s**" % name)
        lines.append("")
        for key, heading in rows:
            ids = table[name][key]
            extra = " (%s)" % drift_kinds(outcome, name, ids) if key == "bytes" else ""
            links = ", ".join("[`%s`](../corpus/%s.json)" % (x.split("/", 1)[-1], x) for x in ids)
            lines.append('- <a id="%s"></a>%s, %d%s: %s' % (anchor(name, key), heading, len(ids), extra, links))
        lines.append("")
    if not lines:
        lines.append("No column shows a hazard.")
    return "\n".join(lines) + "\n"


HASH_LINE = re.compile(r"Generated on corpus `sha256:([0-9a-f]{64})`")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def area(case_id):
    parts = case_id.split("/")
    return parts[1] if len(parts) > 2 else parts[0]


def rate(passed, judged):
    return "%d%% (%d/%d)" % (passed * 100 // judged, passed, judged) if judged else "—"


def columns_of(m):
    return [i for i in m["implementations"]]


def label(impl):
    info = impl.get("implementation") or {}
    return "%s %s" % (info.get("name", impl["name"]), info.get("version", "")) if info else impl["name"]


def seconds(ms):
    return "%.0f s" % (ms / 1000.0)


def summary(outcome, full, columns, timing):
    corpus = outcome["corpus"]
    lines = []
    lines.append("Generated on corpus `%s` (version %s): %d `apply_patch` case(s) of %d, by "
                 "`adapters/compliance.sh` in %d s wall time on %d core(s) (installs %d s, runner build %d s, "
                 "the matrix %d s, %d s of CPU time)." % (
                     corpus["hash"], corpus.get("version") or "none", len(outcome["cases"]), corpus["cases"],
                     timing.get("total", 0), timing.get("cores", 1), timing.get("install", 0),
                     timing.get("build", 0), timing.get("matrix", 0), timing.get("cpu", 0)))
    if timing.get("loadStart"):
        lines[-1] += (" %s worker(s); load average %s at the start, %s at the end "
                      "(other work on the machine slows every column)." % (
                          timing.get("jobs", "?"), timing["loadStart"], timing.get("loadEnd", "?")))
    lines.append("")
    impls = columns_of(outcome)
    full_by_name = {i["name"]: i for i in columns_of(full)}
    lines.append("| column | implementation | `outcome` | `full` | skipped | run time |")
    lines.append("|---|---|---|---|---:|---:|")
    for i in impls:
        t = i["totals"]
        ft = full_by_name.get(i["name"], {"totals": {"pass": 0, "fail": 0, "error": 0}})["totals"]
        lines.append("| **%s** | %s | %s | %s | %d | %s |" % (
            i["name"], label(i), rate(t["pass"], t["pass"] + t["fail"] + t["error"]),
            rate(ft["pass"], ft["pass"] + ft["fail"] + ft["error"]), t["skip"],
            seconds(i["durationMs"])))
    not_run = [c for c in columns if c.get("reason")]
    for c in not_run:
        lines.append("| **%s** | %s | not run | not run | — | — |" % (c["name"], c.get("label", c["name"])))
    if not_run:
        lines.append("")
        lines.append("Columns that did not run:")
        lines.append("")
        for c in not_run:
            lines.append("- **%s**: %s" % (c["name"], c["reason"]))
    lines.append("")
    lines.append("`outcome`: success or failure and the files after the call; `full`: also the result "
                 "document (no third party writes the spec's result document, so `full` measures "
                 "that alone). Each case is run once and its answer judged both ways "
                 "(`patchspec matrix --judge outcome --full-out`). Pass rates are over the cases a "
                 "column ran; skipped cases (tags an adapter declares unsupported) are left out. Run "
                 "times are per column, one process per case.")
    lines.append("")
    lines.append("By tool area (the case id's folder), `--judge outcome`, passes/judged:")
    lines.append("")
    areas = sorted({area(c["id"]) for c in outcome["cases"]})
    lines.append("| area | cases | " + " | ".join(i["name"] for i in impls) + " |")
    lines.append("|---|---:|" + "---|" * len(impls))
    for a in areas:
        cases = [c for c in outcome["cases"] if area(c["id"]) == a]
        cells = []
        for i in impls:
            rs = [c["results"].get(i["name"], {}) for c in cases]
            judged = [r for r in rs if r.get("outcome") in ("pass", "fail", "error")]
            passed = sum(1 for r in judged if r["outcome"] == "pass")
            cell = "%d/%d" % (passed, len(judged)) if judged else "—"
            if judged and passed < len(judged):
                cell = "**%s**" % cell
            cells.append(cell)
        lines.append("| `%s` | %d | %s |" % (a, len(cases), " | ".join(cells)))
    return "\n".join(lines) + "\n"


def departures(outcome):
    out = []
    for i in columns_of(outcome):
        if i["reference"]:
            continue
        name = i["name"]
        out.append("**%s** (%s)" % (name, label(i)))
        out.append("")
        counts = {}
        for c in outcome["cases"]:
            d = c["results"].get(name, {}).get("departure")
            if d:
                counts.setdefault(d, []).append(c["id"])
        if not counts:
            out.append("- no departure")
        for kind, text in SERIOUS:
            ids = counts.get(kind, [])
            if not ids:
                continue
            shown = ids
            if kind == "applied-invalid":
                near = [x for x in ids if area(x) in NEAR_MATCH_AREAS]
                if near:
                    out.append("- applied a near match (%d): %s" % (len(near), quote(near)))
                shown = [x for x in ids if x not in near]
                if not shown:
                    continue
                text = "applied other envelopes the spec refuses"
            out.append("- %s (%d): %s" % (text, len(shown), quote(shown)))
        rest = ", ".join("%s %d" % (k, len(v)) for k, v in sorted(counts.items())
                         if k not in dict(SERIOUS))
        if rest:
            out.append("- other departures: %s" % rest)
        out.append("")
    return "\n".join(out)


def quote(ids):
    shown = ", ".join("`%s`" % x.split("/", 1)[-1] for x in ids[:IDS_PER_DEPARTURE])
    return shown + (", … %d more" % (len(ids) - IDS_PER_DEPARTURE) if len(ids) > IDS_PER_DEPARTURE else "")


def probe_cell(result, meaning):
    if not result or result.get("outcome") in (None, "skip", "not-run"):
        return "—"
    if result.get("outcome") == "error":
        return "crash"
    if meaning == "applies":
        yes = result.get("success") is True
    elif meaning == "outside":
        yes = result.get("departure") == "wrote-outside"
    elif meaning == "partial":
        yes = result.get("departure") == "changed-on-refusal"
    elif meaning == "changed":
        yes = result.get("departure") in ("applied-invalid", "wrong-tree", "changed-on-refusal", "wrote-outside")
    else:  # keeps
        yes = result.get("outcome") == "pass"
    return "yes" if yes else "no"


def fingerprint(outcome):
    impls = columns_of(outcome)
    by_id = {c["id"]: c for c in outcome["cases"]}
    lines = ["| behaviour (case) | " + " | ".join(i["name"] for i in impls) + " |",
             "|---|" + "---|" * len(impls)]
    for question, case, meaning in PROBES:
        c = by_id.get("apply_patch/" + case)
        if c is None:
            continue
        cells = [probe_cell(c["results"].get(i["name"]), meaning) for i in impls]
        lines.append("| %s (`%s`) | %s |" % (question, case, " | ".join(cells)))
    lines.append("")
    lines.append("`—`: the column skipped the case (a tag its adapter declares unsupported).")
    return "\n".join(lines) + "\n"


def replace_block(doc, name, text):
    pattern = re.compile(r"(<!-- BEGIN GENERATED %s\b[^>]*-->\n).*?(<!-- END GENERATED %s -->)" % (name, name), re.S)
    if not pattern.search(doc):
        raise SystemExit("compliance_report.py: the document has no GENERATED %s block" % name)
    return pattern.sub(lambda mt: mt.group(1) + text.rstrip("\n") + "\n" + mt.group(2), doc, count=1)


def generated_hash(doc):
    """The corpus hash (hex) a document's summary block was generated on, or None."""
    m = HASH_LINE.search(doc)
    return m.group(1) if m else None


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: compliance_report.py OUT_DIR DOC\n")
        return 2
    out, doc_path = argv
    outcome = load(os.path.join(out, "outcome", "matrix.json"))
    mark_expected_trees(outcome)
    full = load(os.path.join(out, "full", "matrix.json"))
    columns = load(os.path.join(out, "columns.json"))
    timing = load(os.path.join(out, "timing.json"))
    with open(os.path.join(out, "outcome", "matrix.md"), encoding="utf-8") as f:
        matrix_md = f.read()
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    for name, text in (("summary", summary(outcome, full, columns, timing)), ("departures", departures(outcome)),
                       ("hazards", hazards(outcome)), ("hazard-cases", hazard_cases(outcome)),
                       ("fingerprint", fingerprint(outcome)), ("matrix", matrix_md)):
        doc = replace_block(doc, name, text)
    with open(doc_path, "w", encoding="utf-8") as f:
        f.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
