#!/usr/bin/env bash
# The release archive: patchspec-<version>-<target>.tar.xz (the binary of
# scripts/dist-binary.sh and README.md) and its .sha256 in
# `sha256sum` format. Prints the archive's path on stdout.
#
#   scripts/dist-archive.sh [OUT_DIR]     (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
target=$(rustc -vV | sed -n 's/^host: //p')
name="patchspec-$version-$target"
binary=$(scripts/dist-binary.sh)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
install -m 755 "$binary" "$stage/$name/patchspec"
cp README.md "$stage/$name/"
mkdir -p "$out"
# Sorted names, fixed owner and times: the same binary gives the same archive.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cJf "$out/$name.tar.xz" "$name"
(cd "$out" && sha256sum "$name.tar.xz" > "$name.tar.xz.sha256")
echo "$out/$name.tar.xz"
