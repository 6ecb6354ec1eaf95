#!/usr/bin/env bash
# Corpus throughput of the runner per transport (docs/performance.md,
# "Runner throughput"): the whole embedded corpus against the reference
# engine in-process, `patchspec exec` over oneshot and `patchspec exec
# --session` over session, each run ROUNDS times (default 5), interleaved;
# prints the median wall time and cases/s of each, and the CPU time
# (user + sys, the runner and its children) of the median run.
#
#   scripts/runner-throughput.sh BIN [ROUNDS] [JOBS]
#   TMPDIR=/var/tmp scripts/runner-throughput.sh target/release/patchspec 5 2
#
# Where the case workspaces go: the runner's default, /dev/shm (memory)
# when TMPDIR is unset; TMPDIR=/var/tmp puts them on the disk, where every
# fsync the engine does is paid (both are worth knowing; the header of each
# run names the choice).
set -euo pipefail
bin=$(realpath "$1")
rounds=${2:-5}
jobs=${3:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A args=(
    [in-process]="check -j $jobs"
    [oneshot]="check -j $jobs -- $bin exec"
    [session]="check -j $jobs --transport session -- $bin exec --session"
)
for round in $(seq 1 "$rounds"); do
    for t in in-process oneshot session; do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %U %S" -o "$out/$t.$round" "$bin" ${args[$t]} > "$out/log-$t" 2>&1 || {
            echo "runner-throughput.sh: $t failed:" >&2
            tail -5 "$out/log-$t" >&2
            exit 1
        }
    done
done
n=$(grep -oE '^[0-9]+ passed' "$out/log-in-process" | grep -oE '^[0-9]+')
echo "| transport | -j | median wall | cases/s | CPU (user + sys) of that run |"
echo "|---|---|---|---|---|"
for t in in-process oneshot session; do
    median=$(cat "$out/$t".[0-9]* | sort -n | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}')
    read -r wall user sys <<< "$median"
    awk -v t="$t" -v j="$jobs" -v w="$wall" -v u="$user" -v s="$sys" -v n="$n" \
        'BEGIN { printf "| %s | %s | %.2f s | %.0f | %.2f s |\n", t, j, w, n / w, u + s }'
done
echo "($n cases; TMPDIR=${TMPDIR:-unset}; $rounds rounds)"
