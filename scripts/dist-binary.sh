#!/usr/bin/env bash
# Builds the binary the packages ship (the workspace's `dist` profile: LTO,
# one codegen unit, stripped) and prints its path. Used by npm-pack.sh and
# dist-archive.sh; build-wheel.sh has maturin build the same profile.
#
#   scripts/dist-binary.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --locked --profile dist -p patchspec-conformance --bin patchspec >&2
realpath target/dist/patchspec
