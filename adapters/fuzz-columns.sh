#!/usr/bin/env bash
# Differential fuzzing of every compliance column: `patchspec fuzz --judge
# outcome --transport oneshot` over each installed adapter with one fixed
# seed and budget, each found disagreement shrunk and written as a case,
# then the found cases replayed as a corpus (`patchspec matrix`) so that
# each gets the same reading as the corpus cases (departure, drift), and
# fuzz_report.py says per column which found case maps to a corpus case the
# column already fails the same way, and which does not.
#
#   adapters/fuzz-columns.sh            # target/column-fuzz/{COLUMN.json, COLUMN/found/…, report.md}
#
# Environment: SEED (default 2026), RUNS (calls per column, default 300),
# SHRINK_CHECKS (per found case, default 60), JOBS (default: the cores),
# PATCHSPEC (the runner, default target/release/patchspec), COMPLIANCE (the
# compliance run whose outcome matrix the found cases are mapped against,
# default target/compliance). Install the columns first (adapters/compliance.sh
# does); a column that is not installed is listed as not fuzzed.
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${SEED:-2026}
runs=${RUNS:-300}
shrink=${SHRINK_CHECKS:-60}
jobs=${JOBS:-$(nproc)}
bin=${PATCHSPEC:-target/release/patchspec}
compliance=${COMPLIANCE:-target/compliance}
out=target/column-fuzz
source adapters/columns.sh
rm -rf "$out"
mkdir -p "$out"
started=$(date +%s)
for col in "${COLUMNS[@]}"; do
  IFS='|' read -r name _ executor <<<"$col"
  s=$(date +%s)
  # shellcheck disable=SC2086 # the executor command is words, as in columns.sh
  set +e
  "$bin" fuzz --judge outcome --transport oneshot --seed "$seed" --runs "$runs" -j "$jobs" \
    --shrink-checks "$shrink" --timeout 60s --report json --out "$out/$name" -- $executor \
    >"$out/$name.json" 2>"$out/$name.log"
  rc=$?
  set -e
  if [ "$rc" -gt 1 ]; then
    echo "fuzz-columns: $name: not fuzzed (patchspec fuzz exit $rc: $(tail -n 1 "$out/$name.log"))"
    rm -f "$out/$name.json"
    continue
  fi
  # The found cases as a corpus: a VERSION file and the schema beside them.
  if [ -d "$out/$name/found" ]; then
    cp corpus/VERSION "$out/$name/VERSION"
    cp -r corpus/schema "$out/$name/schema"
    "$bin" matrix --corpus "$out/$name" --judge outcome --timeout 60s -j "$jobs" --out "$out/$name/matrix" \
      --executor "$name=$executor" >"$out/$name/matrix.log" 2>&1 || true
  fi
  echo "fuzz-columns: $name: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%d calls, %d disagreement(s), %d signature(s)" % (r["calls"], r["disagreements"], len(r["found"])))' "$out/$name.json") in $(( $(date +%s) - s )) s"
done
python3 adapters/fuzz_report.py "$out" "$compliance/outcome/matrix.json" >"$out/report.md"
echo "fuzz-columns: $(( $(date +%s) - started )) s; the report: $out/report.md"
