#!/usr/bin/env bash
# Regenerate docs/compliance.md from a real run: install the pinned
# third-party implementations (locally, through their adapters' scripts),
# build the runner, run `patchspec matrix` over the apply_patch corpus in
# both judge modes, and replace the generated blocks of docs/compliance.md
# (between its BEGIN/END GENERATED markers). The hand-written findings
# around them are kept: re-read them against the new tables.
#
#   adapters/compliance.sh            # writes docs/compliance.md, target/compliance/{outcome,full}/
#
# Needs: cargo, node + npm, python3 (venv). The codex CLI runs sandboxed: as
# root in an overlay of / (unshare + overlayfs), else under bubblewrap
# (installed with apt-get when absent and running as root).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

adapters/envelope-cli/install-codex.sh
adapters/openai-agents/install.sh
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y bubblewrap || { apt-get update && apt-get install -y bubblewrap; }
  else
    echo "compliance.sh: bwrap (Debian: bubblewrap) is needed to confine the CLI under test" >&2
    exit 1
  fi
fi
cargo build --release -p patchspec-conformance

out=target/compliance
rm -rf "$out"
for judge in outcome full; do
  start=$(date +%s)
  target/release/patchspec matrix --judge "$judge" --tool apply_patch --timeout 30s \
    --out "$out/$judge" --markdown "$out/$judge/matrix.md" \
    --executor codex=adapters/envelope-cli/codex-apply-patch \
    --executor openai-agents=adapters/openai-agents/openai-agents-apply-diff
  echo $(( $(date +%s) - start )) > "$out/$judge/seconds"
done

python3 - "$root" <<'PY'
import json, os, re, sys
root = sys.argv[1]
out = os.path.join(root, "target", "compliance")
doc_path = os.path.join(root, "docs", "compliance.md")

def load(judge):
    with open(os.path.join(out, judge, "matrix.json"), encoding="utf-8") as f:
        m = json.load(f)
    with open(os.path.join(out, judge, "matrix.md"), encoding="utf-8") as f:
        md = f.read()
    with open(os.path.join(out, judge, "seconds")) as f:
        seconds = int(f.read())
    return m, md, seconds

outcome, outcome_md, outcome_s = load("outcome")
full, _, full_s = load("full")
impls = [i for i in full["implementations"]]

def rate(i):
    t = i["totals"]
    judged = t["pass"] + t["fail"] + t["error"]
    return "%d%% (%d/%d)" % (t["pass"] * 100 // judged, t["pass"], judged) if judged else "—"

full_table = ["| judge | " + " | ".join(i["name"] for i in impls) + " |",
              "|---|" + "---|" * len(impls)]
for judge, m in (("outcome", outcome), ("full", full)):
    full_table.append("| `%s` | %s |" % (judge, " | ".join(rate(i) for i in m["implementations"])))
timing = ("The `outcome` run took %d s and the `full` run %d s (wall time, %d cores, one "
          "worker per core): nearly all of it is the third-party columns, one process per "
          "case (the reference engine runs in-process, in a few seconds)."
          % (outcome_s, full_s, os.cpu_count() or 1))
versions = ", ".join("%s %s" % (i["implementation"]["name"], i["implementation"]["version"])
                     for i in outcome["implementations"] if i.get("implementation") and not i["reference"])
generated = {
    "summary": "Pinned versions: %s. Both judge modes, pass rates over the cases each implementation ran "
               "(skipped cases left out):\n\n%s\n\n%s\n" % (versions, "\n".join(full_table), timing),
    "matrix": outcome_md,
}
with open(doc_path, encoding="utf-8") as f:
    doc = f.read()
for name, text in generated.items():
    pattern = re.compile(r"(<!-- BEGIN GENERATED %s\b[^>]*-->\n).*?(<!-- END GENERATED %s -->)" % (name, name), re.S)
    if not pattern.search(doc):
        sys.exit("compliance.sh: docs/compliance.md has no GENERATED %s block" % name)
    doc = pattern.sub(lambda mt: mt.group(1) + text.rstrip("\n") + "\n" + mt.group(2), doc, count=1)
with open(doc_path, "w", encoding="utf-8") as f:
    f.write(doc)
print("compliance.sh: docs/compliance.md regenerated")
PY
