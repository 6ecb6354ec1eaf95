#!/usr/bin/env bash
# Builds the Python wheel: `patchspec` (the binary, corpus embedded, the
# workspace's `dist` profile, stripped) plus the pure-Python package in
# python/ (the executor kit), with maturin pinned in pyproject.toml. maturin
# is installed from PyPI into target/wheel-tools (reused while the pin holds).
# Prints the wheel's path on stdout.
#
#   scripts/build-wheel.sh [OUT_DIR]     (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
maturin_pin=$(sed -n 's/^requires = \["maturin==\([^"]*\)"\]/\1/p' pyproject.toml)
[ -n "$maturin_pin" ] || { echo "build-wheel: no maturin pin in pyproject.toml" >&2; exit 1; }
tools=target/wheel-tools
if [ "$("$tools/bin/maturin" --version 2>/dev/null)" != "maturin $maturin_pin" ]; then
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet "maturin==$maturin_pin"
fi
mkdir -p "$out"
# maturin checks the binary's glibc symbols and tags the wheel manylinux_2_X
# accordingly (the binary links only glibc).
"$tools/bin/maturin" build --quiet --out "$out" >&2
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
ls "$out"/patchspec-"$version"-py3-none-*.whl
