#!/usr/bin/env bash
# Fuzz-target throughput of one or more checkouts, side by side
# (docs/fuzzing.md, "Throughput"): each target fuzzed for SECONDS from the
# checkout's own seeds and dictionary, once per libFuzzer seed, the
# checkouts alternating so that a change in the machine's load falls on
# all of them alike. Prints one line per run with libFuzzer's closing
# exec/s.
#
#   scripts/fuzz-throughput.sh SECONDS "SEEDS" CHECKOUT...
#   scripts/fuzz-throughput.sh 45 "1 2 3" /tmp/before .
#
# Build each checkout's targets first, the same way for all of them (the
# binaries are taken from fuzz/target/x86_64-unknown-linux-gnu/release):
#   (cd CHECKOUT/fuzz && cargo fuzz build -O --sanitizer none)
#   (cd CHECKOUT/fuzz && cargo +nightly fuzz build -O --debug-assertions --sanitizer address)
# TARGETS overrides the targets measured (default: envelope_parse
# envelope_apply). Runs under the fuzzer vary from seed to seed more than
# many changes do: compare medians over seeds, and the same seeds.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,18p' "$0" >&2
    exit 2
fi
seconds=$1
seeds=$2
shift 2
read -r -a targets <<< "${TARGETS:-envelope_parse envelope_apply}"
# The runs' new corpus entries go to a tmpfs when there is one: libFuzzer
# writes every input that finds new coverage (hundreds a second early on),
# and on this project's ext4 machine creating those files took a tenth of
# a run's time (`ext4_create` in a profile), which measures the disk, not
# the target.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    scratch=$(mktemp -d -p /dev/shm)
else
    scratch=$(mktemp -d)
fi
trap 'rm -rf "$scratch"' EXIT
for target in "${targets[@]}"; do
    for seed in $seeds; do
        for checkout in "$@"; do
            fuzz=$(realpath "$checkout")/fuzz
            bin=$fuzz/target/x86_64-unknown-linux-gnu/release/$target
            if [ ! -x "$bin" ]; then
                echo "fuzz-throughput.sh: no $bin (build it first)" >&2
                exit 2
            fi
            rm -rf "$scratch/corpus" && mkdir "$scratch/corpus"
            # A crash or a timeout ends a run early, without its closing
            # line: it is reported as `?`, and the input that caused it is
            # written to the scratch folder, not into the checkout.
            rate=$(cd "$fuzz" && { "$bin" "$scratch/corpus" "corpus/$target" \
                -max_total_time="$seconds" -timeout=30 -dict="dicts/$target.dict" \
                -seed="$seed" -artifact_prefix="$scratch/" 2>&1 || true; } |
                sed -n 's/.*DONE.*exec\/s: \([0-9]*\).*/\1/p')
            echo "$target seed=$seed $checkout ${rate:-?} exec/s"
        done
    done
done
