#!/bin/bash -eu
# Prove .clusterfuzzlite/build.sh works outside the builder image: set the
# variables the image would (SRC, OUT, WORK, SANITIZER, FUZZING_ENGINE,
# ARCHITECTURE) by hand, run it, then check $OUT the way OSS-Fuzz's
# check_build does: every target is there with its dictionary and seed
# corpus, and runs its seeds without a crash.
#
#   .clusterfuzzlite/test-build.sh            # ASan, nightly
#   SANITIZER=none .clusterfuzzlite/test-build.sh
#
# WORK defaults to a persistent directory (/tmp/patchspec-cflite-work) so a
# second run only rebuilds what changed.
repo=$(cd "$(dirname "$0")/.." && pwd)
export SRC OUT WORK SANITIZER FUZZING_ENGINE ARCHITECTURE RUSTUP_TOOLCHAIN
SRC=$(mktemp -d)
OUT=$(mktemp -d)
WORK=${WORK:-/tmp/patchspec-cflite-work}
SANITIZER=${SANITIZER:-address}
FUZZING_ENGINE=libfuzzer
ARCHITECTURE=x86_64
RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-nightly}
mkdir -p "$WORK"
trap 'rm -rf "$SRC" "$OUT"' EXIT
ln -s "$repo" "$SRC/patchspec"

start=$(date +%s)
"$repo/.clusterfuzzlite/build.sh"
echo "test-build: build.sh finished in $(($(date +%s) - start)) s (SANITIZER=$SANITIZER)"

status=0
for src in "$repo"/fuzz/fuzz_targets/*.rs; do
    name=$(basename "$src" .rs)
    for f in "$name" "$name.dict" "${name}_seed_corpus.zip"; do
        [ -e "$OUT/$f" ] || { echo "test-build: missing \$OUT/$f"; status=1; }
    done
    seeds=$(mktemp -d)
    (cd "$seeds" && unzip -q "$OUT/${name}_seed_corpus.zip")
    if "$OUT/$name" -dict="$OUT/$name.dict" -runs=0 "$seeds" >"$seeds.log" 2>&1; then
        echo "test-build: $name runs its $(ls "$seeds" | wc -l) seeds: ok"
    else
        echo "test-build: $name FAILED on its seeds:"; tail -20 "$seeds.log"; status=1
    fi
    rm -rf "$seeds" "$seeds.log"
done
[ "$status" -eq 0 ] && echo "test-build: ok"
exit "$status"
