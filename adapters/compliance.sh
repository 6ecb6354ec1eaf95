#!/usr/bin/env bash
# Regenerate docs/compliance.md from a real run, in one command: install the
# pinned third-party implementations (locally, each through its adapter's own
# script, all at once), build the runner, run `patchspec matrix` over the
# apply_patch corpus once, judging each answer in both modes (`--judge
# outcome --full-out`: every case is run once), and replace
# the generated blocks of docs/compliance.md (adapters/compliance_report.py;
# the hand-written findings around them are kept: re-read them against the
# new tables).
#
#   adapters/compliance.sh      # docs/compliance.md, target/compliance/{outcome,full}/ (matrix.html, .json, .md)
#
# Environment: JOBS (workers per matrix run, default: twice the number of cores),
# TIMEOUT (per case, default 60s), PATCHSPEC (a runner binary: skips the build).
# A column whose install fails is not run; the page names it with the reason.
# Needs: cargo, node + npm, python3 (venv); the CLIs run sandboxed (as root
# in an overlay of /, else under bubblewrap, installed with apt-get when absent
# and running as root). Figures: docs/compliance.md, first paragraph.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=target/compliance
# Twice the cores: a oneshot column waits on process starts and mounts more than it computes.
jobs=${JOBS:-$(( $(nproc) * 2 ))}
timeout=${TIMEOUT:-60s}
started=$(date +%s)
# The machine's load when the run starts and ends, written beside the times:
# a run beside other work is slower, and the page says so.
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
now() { date +%s; }
say() { printf 'compliance [%4ds] %s\n' "$(($(now) - started))" "$*"; }

# The columns: adapters/columns.sh (COLUMNS, one "name|install|executor" each).
source adapters/columns.sh

rm -rf "$out"
mkdir -p "$out/install"

# 1. Installs, all at once (network-bound); one log per install command.
say "installing ${#COLUMNS[@]} columns' implementations (logs: $out/install/)"
declare -A pid_of log_of
for col in "${COLUMNS[@]}"; do
  IFS='|' read -r name install _ <<<"$col"
  [ -n "${pid_of[$install]:-}" ] && continue
  log="$out/install/$(echo "$install" | tr -c 'A-Za-z0-9.\n' '_').log"
  log_of[$install]=$log
  ( s=$(now); set +e; $install >"$log" 2>&1; rc=$?; echo "$rc $(($(now) - s))" >"$log.status" ) &
  pid_of[$install]=$!
done
if ! command -v bwrap >/dev/null && [ "$(id -u)" = 0 ]; then
  # The fallback sandbox (the overlay needs root; bwrap does not).
  DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap >"$out/install/bubblewrap.log" 2>&1 \
    || { apt-get update >>"$out/install/bubblewrap.log" 2>&1 && apt-get install -y bubblewrap >>"$out/install/bubblewrap.log" 2>&1; } \
    || say "bubblewrap not installed (see $out/install/bubblewrap.log); the overlay sandbox is used as root"
fi
ready=()
columns_json="["
n=0
for col in "${COLUMNS[@]}"; do
  IFS='|' read -r name install executor <<<"$col"
  n=$((n + 1))
  wait "${pid_of[$install]}" 2>/dev/null || true
  read -r rc secs <"${log_of[$install]}.status"
  reason=
  if [ "$rc" != 0 ]; then
    dir=$(dirname "${install%% *}")
    if [ -f "$dir/.venv-unavailable" ]; then
      reason=$(cat "$dir/.venv-unavailable")
    else
      reason="its install script failed (exit $rc): $(grep -v '^\s*$' "${log_of[$install]}" | tail -n 1)"
    fi
    say "[$n/${#COLUMNS[@]}] $name: NOT RUN: $reason"
  else
    say "[$n/${#COLUMNS[@]}] $name: installed (${secs} s)"
    ready+=(--executor "$name=$executor")
  fi
  columns_json+=$(python3 -c 'import json,sys; print(json.dumps({"name": sys.argv[1], "installSeconds": int(sys.argv[2]), "reason": sys.argv[3] or None}))' "$name" "$secs" "$reason")
  [ "$n" -lt "${#COLUMNS[@]}" ] && columns_json+=","
done
echo "$columns_json]" >"$out/columns.json"
installed_at=$(now)

# 2. The runner.
if [ -z "${PATCHSPEC:-}" ]; then
  say "building the runner (cargo build --release -p patchspec-conformance)"
  cargo build --release -q -p patchspec-conformance
  PATCHSPEC=target/release/patchspec
fi
built_at=$(now)

# 3. One run, both judge modes: each answer is judged in outcome mode and
# again in full (the third-party columns are one process per case, mostly
# waiting on process start and the sandbox's mounts). Its CPU time (user +
# system, every process it started) goes beside the wall times.
say "running $(( ${#ready[@]} / 2 )) third-party column(s) + the reference, judged outcome and full, $jobs worker(s), timeout $timeout"
mkdir -p "$out/outcome" "$out/full"
TIMEFORMAT='%U %S'
{ time "$PATCHSPEC" matrix --judge outcome --full-out "$out/full" --tool apply_patch --timeout "$timeout" -j "$jobs" \
    --out "$out/outcome" --markdown "$out/outcome/matrix.md" "${ready[@]}" 2>&1 | sed -u "s/^/[matrix] /"; } 2>"$out/cpu.txt" \
  || say "the matrix exited non-zero (an unusable column, named on the page)"
cpu=$(tail -n 1 "$out/cpu.txt" | awk '{printf "%d", $1 + $2}')
for judge in outcome full; do
  [ -f "$out/$judge/matrix.json" ] || { say "the $judge run wrote no matrix.json"; exit 1; }
done
matrix_done=$(now)
cat >"$out/timing.json" <<JSON
{"install": $((installed_at - started)), "build": $((built_at - installed_at)), "matrix": $((matrix_done - built_at)), "cpu": $cpu, "total": $((matrix_done - started)), "cores": $(nproc), "jobs": $jobs, "loadStart": "$load_start", "loadEnd": "$(cut -d' ' -f1-3 /proc/loadavg)"}
JSON

# 4. The document.
python3 adapters/compliance_report.py "$out" docs/compliance.md
python3 - "$out" <<'PY'
import json, sys
for judge in ("outcome", "full"):
    m = json.load(open("%s/%s/matrix.json" % (sys.argv[1], judge)))
    for i in m["implementations"]:
        t = i["totals"]
        judged = t["pass"] + t["fail"] + t["error"]
        print("compliance: %-8s %-15s %4d/%-4d passed, %3d skipped, %6.1f s" % (
            judge, i["name"], t["pass"], judged, t["skip"], i["durationMs"] / 1000.0))
PY
say "docs/compliance.md regenerated on corpus $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["corpus"]["hash"])' "$out/outcome/matrix.json"); the page: $out/outcome/matrix.html"
