#!/usr/bin/env bash
# The peer comparison and the peak-memory measurement of docs/performance.md.
#
#   benches/peers.sh [criterion args...]     e.g. benches/peers.sh --measurement-time 3
#
# 1. builds the release `patchspec` CLI and `patchspec-benchgen`;
# 2. runs the criterion `peers` bench: the same edit applied by
#    `patchspec apply` (envelope, --expect-sha), GNU `patch -p1` and
#    `git apply` (unified diff), each timed as a whole process on the same
#    files (cases: 1MB x 100, 10MB x 10,000, 100MB x 1, 100MB x 10,000 hunks);
# 3. measures the peak resident memory of each tool on the 100MB x 10,000
#    case with /usr/bin/time -v;
# 4. prints the tables of the last run (`patchspec-benchgen report`).
#
# Environment: CARGO_TARGET_DIR (default: <repo>/target), PATCHSPEC_BENCH_DIR
# (where the scratch workspaces go; default: the system temp directory),
# PATCHSPEC_BENCH_SIZES (e.g. "10MB" to run the smaller cases only),
# RSS_SIZE and RSS_HUNKS (the memory case; default 100MB and 10000),
# RSS_TIMEOUT (seconds a peer may take in the memory run; default 300),
# PATCHSPEC_PEERS (e.g. "patchspec,gnu_patch": the tools the bench times),
# PATCHSPEC_PEER_SLOW_SECS (a tool slower than this per run is timed once,
# not sampled by criterion; default 10).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
cd "$root"

cargo build --release -p patchspec-conformance --bin patchspec
cargo build --release -p patchspec-benches --bin patchspec-benchgen
export PATCHSPEC_BIN="$target/release/patchspec"
gen="$target/release/patchspec-benchgen"

cargo bench -p patchspec-benches --bench peers -- "$@"

# Peak RSS, 100MB x 10,000 hunks.
rss_size="${RSS_SIZE:-100MB}"
rss_hunks="${RSS_HUNKS:-10000}"
if [ ! -x /usr/bin/time ]; then
    echo "peers.sh: /usr/bin/time is missing (apt-get install time); no memory figures" >&2
else
    scratch="$(mktemp -d "${PATCHSPEC_BENCH_DIR:-${TMPDIR:-/tmp}}/patchspec-rss.XXXXXX")"
    trap 'rm -rf "$scratch"' EXIT
    "$gen" case --size "$rss_size" --hunks "$rss_hunks" --out "$scratch"
    read -r before _ < "$scratch/sha256"
    ws="$scratch/ws"
    cp "$ws/big.rs" "$scratch/original.rs"
    size=$(stat -c %s "$ws/big.rs")
    limit="${RSS_TIMEOUT:-300}"
    # Run one tool forward under /usr/bin/time -v (at most $limit seconds),
    # check the result, and put the original back.
    measure() {
        local name=$1; shift
        local log="$scratch/time.log" status=0
        (cd "$ws" && timeout "$limit" /usr/bin/time -v "$@" > /dev/null 2> "$log") || status=$?
        local kb wall verdict=""
        kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
        if [ "$status" -eq 124 ]; then
            verdict=" (stopped after ${limit} s)"
            kb=0 wall="> ${limit} s"
        elif [ "$status" -ne 0 ]; then
            verdict=" (failed, exit $status)"
        elif ! cmp -s "$ws/big.rs" "$scratch/expected.rs"; then
            verdict=" (wrong result)"
        fi
        cp "$scratch/original.rs" "$ws/big.rs"
        awk -v n="$name$verdict" -v w="$wall" -v kb="${kb:-0}" -v size="$size" \
            'BEGIN { printf "| %s | %s | %d MB | %.2fx |\n", n, w, kb * 1024 / 1e6, kb * 1024 / size }'
    }
    echo
    echo "### Peak resident memory, $rss_size x $rss_hunks hunks (/usr/bin/time -v, one run each)"
    echo
    echo "| tool | wall | peak RSS | ÷ file size |"
    echo "|---|---|---|---|"
    measure "patchspec apply" \
        "$PATCHSPEC_BIN" apply "$scratch/forward.patch" --root "$ws" --expect-sha "big.rs=$before"
    if command -v patch > /dev/null; then
        measure "GNU patch" patch -p1 -s -f --no-backup-if-mismatch -i "$scratch/edit.diff"
    fi
    if command -v git > /dev/null; then
        export GIT_CEILING_DIRECTORIES="$scratch"
        measure "git apply" git apply "$scratch/edit.diff"
    fi
fi

echo
"$gen" report --criterion "$target/criterion"
