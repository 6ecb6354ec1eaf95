#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script: build every cargo-fuzz target of
# fuzz/ and put, for each target T, into $OUT:
#   T                  the libFuzzer binary
#   T.dict             its dictionary (fuzz/dicts/T.dict)
#   T_seed_corpus.zip  its checked-in seeds (fuzz/corpus/T/)
#
# Environment (set by the builder image, or by hand to run it locally; see
# .clusterfuzzlite/test-build.sh):
#   SRC        the directory holding the checkout as $SRC/patchspec
#   OUT        where the fuzzers go
#   WORK       scratch space (the cargo target directory goes here)
#   SANITIZER  address | memory | thread | leak; anything else (undefined,
#              coverage, none) builds with libFuzzer coverage only
# cargo must run a nightly toolchain for ASan (the builder's default; set
# RUSTUP_TOOLCHAIN=nightly locally).

: "${SRC:?set SRC}" "${OUT:?set OUT}" "${WORK:?set WORK}"
cd "$SRC/patchspec/fuzz"

case "${SANITIZER:-address}" in
    address | memory | thread | leak) sanitizer=$SANITIZER ;;
    *) sanitizer=none ;;
esac
triple=${CARGO_BUILD_TARGET:-x86_64-unknown-linux-gnu}
target_dir="$WORK/cargo-target"

cargo fuzz build -O --debug-assertions --sanitizer "$sanitizer" \
    --target "$triple" --target-dir "$target_dir"

mkdir -p "$OUT"
for src in fuzz_targets/*.rs; do
    name=$(basename "$src" .rs)
    cp "$target_dir/$triple/release/$name" "$OUT/$name"
    cp "dicts/$name.dict" "$OUT/$name.dict"
    rm -f "$OUT/${name}_seed_corpus.zip"
    if [ -d "corpus/$name" ] && [ -n "$(ls -A "corpus/$name")" ]; then
        (cd "corpus/$name" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
    fi
done
