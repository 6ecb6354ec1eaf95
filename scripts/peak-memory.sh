#!/usr/bin/env bash
# Peak resident memory of `patchspec apply` on a generated large-file edit
# (docs/performance.md, "Peak memory").
#
#   scripts/peak-memory.sh [--runs N] SIZE HUNKS BIN [BIN...]
#   e.g. scripts/peak-memory.sh 100MB 10000 /tmp/patchspec-old target/release/patchspec
#
# Generates the case once with `patchspec-benchgen case` (built if missing),
# then runs each BIN's `apply --expect-sha` on it N times (default 3),
# interleaved, checks the result against the expected file, restores the
# original, and prints one Markdown row per run: wall time, peak RSS (MiB)
# and peak RSS ÷ the file's size. Needs /usr/bin/time (GNU time).
set -euo pipefail

runs=3
if [ "${1:-}" = "--runs" ]; then runs=$2; shift 2; fi
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
size=$1 hunks=$2
shift 2
[ -x /usr/bin/time ] || { echo "peak-memory.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gen="${CARGO_TARGET_DIR:-$root/target}/release/patchspec-benchgen"
[ -x "$gen" ] || cargo build --release --manifest-path "$root/Cargo.toml" -p patchspec-benches --bin patchspec-benchgen
scratch="$(mktemp -d "${TMPDIR:-/tmp}/patchspec-peak.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
"$gen" case --size "$size" --hunks "$hunks" --out "$scratch/case" > /dev/null
read -r before _ < "$scratch/case/sha256"
ws="$scratch/case/ws"
cp "$ws/big.rs" "$scratch/original.rs"
bytes=$(stat -c %s "$ws/big.rs")

echo "| binary | run | wall | peak RSS | ÷ file size ($bytes bytes) |"
echo "|---|---|---|---|---|"
for run in $(seq 1 "$runs"); do
    for bin in "$@"; do
        status=0
        /usr/bin/time -v "$bin" apply "$scratch/case/forward.patch" --root "$ws" \
            --expect-sha "big.rs=$before" > /dev/null 2> "$scratch/time.log" || status=$?
        kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$scratch/time.log")
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$scratch/time.log")
        verdict=""
        if [ "$status" -ne 0 ]; then
            verdict=" (failed, exit $status)"
        elif ! cmp -s "$ws/big.rs" "$scratch/case/expected.rs"; then
            verdict=" (wrong result)"
        fi
        cp "$scratch/original.rs" "$ws/big.rs"
        awk -v b="$bin$verdict" -v r="$run" -v w="$wall" -v kb="${kb:-0}" -v size="$bytes" \
            'BEGIN { printf "| %s | %d | %s | %d MiB | %.2fx |\n", b, r, w, kb / 1024, kb * 1024 / size }'
    done
done
