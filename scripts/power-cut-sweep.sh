#!/bin/sh
# The larger power-cut sweep (engine/tests/power_cut.rs): more crash states
# tried per cut than the default `cargo test` run (1,024), so the ten-file
# shape is sampled four times as densely, and more of its journals have
# their recovery cut. Prints the crash states checked per shape.
#
#   scripts/power-cut-sweep.sh [STATES_PER_CUT]    # default 4096
set -eu
cd "$(dirname "$0")/.."
PATCHSPEC_POWER_CUT_STATES="${1:-4096}" \
    cargo test -q -p patchspec-engine --test power_cut -- --nocapture --test-threads 2
