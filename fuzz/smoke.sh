#!/usr/bin/env bash
# fuzz/smoke.sh — the CI fuzz smoke run: every target for a short, fixed
# time (default 60 s each), failing on any crash. Prints one line per
# target and a closing `N passed, N failed` line (targets).
#
#   fuzz/smoke.sh                  # all targets, 60 s each
#   FUZZ_SECONDS=10 fuzz/smoke.sh envelope_parse
#
# Toolchain: with a nightly toolchain installed (`rustup toolchain list`),
# `cargo +nightly fuzz` with AddressSanitizer; otherwise stable cargo with
# `--sanitizer none` (libFuzzer coverage only). FUZZ_TOOLCHAIN=stable|nightly
# forces one. cargo-fuzz is installed (`cargo install cargo-fuzz --locked`,
# about 1.5 minutes) when absent.
#
# The checked-in seeds (fuzz/corpus/<target>) are read, never written: new
# inputs go to a scratch corpus. Crash inputs land in fuzz/artifacts/<target>/
# (see docs/fuzzing.md to minimise one and turn it into a regression).
#
# Exit: 0 all targets passed; 1 a target crashed (or failed to build/run);
# 2 cargo-fuzz could not be installed.
set -uo pipefail
cd "$(dirname "$0")"

seconds=${FUZZ_SECONDS:-60}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    # Every fuzz target (fuzz_targets/*.rs); `extract-seeds` is a tool, not a target.
    targets=()
    for f in fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi

if [ -z "${FUZZ_TOOLCHAIN:-}" ]; then
    if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
        FUZZ_TOOLCHAIN=nightly
    else
        FUZZ_TOOLCHAIN=stable
    fi
fi
case "$FUZZ_TOOLCHAIN" in
    nightly) cargo=(cargo +nightly fuzz); sanitizer=address ;;
    stable) cargo=(cargo fuzz); sanitizer=none ;;
    *) echo "smoke: FUZZ_TOOLCHAIN must be stable or nightly" >&2; exit 2 ;;
esac

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "smoke: cargo-fuzz not found; installing (cargo install cargo-fuzz --locked)"
    start=$(date +%s)
    cargo install cargo-fuzz --locked || { echo "smoke: cannot install cargo-fuzz" >&2; exit 2; }
    echo "smoke: cargo-fuzz installed in $(($(date +%s) - start)) s"
fi

echo "smoke: ${#targets[@]} targets, ${seconds} s each, toolchain $FUZZ_TOOLCHAIN, sanitizer $sanitizer"
flags=(-O --debug-assertions --sanitizer "$sanitizer")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if ! "${cargo[@]}" build "${flags[@]}"; then
    echo "smoke: the fuzz targets do not build"
    echo "fuzz: 0 passed, ${#targets[@]} failed"
    exit 1
fi

passed=0
failed=0
for t in "${targets[@]}"; do
    mkdir -p "$scratch/$t" "artifacts/$t"
    log="$scratch/$t.log"
    start=$(date +%s)
    "${cargo[@]}" run "${flags[@]}" "$t" "$scratch/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=30 -dict="dicts/$t.dict" \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1
    status=$?
    # libFuzzer's closing line: `#RUNS<TAB>DONE   cov: N ft: N corp: N/SIZE ... exec/s: N ...`.
    stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | sed -E 's/^#([0-9]+)[[:space:]]+DONE[[:space:]]+/\1 runs, /')
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "smoke: $t passed in $(($(date +%s) - start)) s: $stats"
    else
        failed=$((failed + 1))
        echo "smoke: $t FAILED (exit $status); the end of its log:"
        grep -v -E '^#[0-9]+ +(NEW|REDUCE|pulse)' "$log" | tail -40 | sed 's/^/    /'
        ls artifacts/"$t"/ 2>/dev/null | sed 's/^/    artifact: fuzz\/artifacts\/'"$t"'\//'
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
