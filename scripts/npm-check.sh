#!/usr/bin/env bash
# The npm channel as an implementer's CI meets it: packs patchspec and
# patchspec-linux-x64 (scripts/npm-pack.sh), installs the two tarballs into a
# fresh folder and runs `npx patchspec check` over the whole corpus (timed
# with the install; installed size), then, in a copy of examples/typescript,
# compiles the TypeScript kit examples against the kit's declarations (tsc
# and @types/node pinned in examples/typescript/package.json) and judges
# them (scripts/kit-example-check.py, oneshot and session). Prints `npm: N
# passed, N failed`.
#
#   scripts/npm-check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$(pwd)
LABEL=npm
# shellcheck source=scripts/package-check-lib.sh
. scripts/package-check-lib.sh
quiet=(--no-audit --no-fund --loglevel=error)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! mapfile -t tarballs < <(scripts/npm-pack.sh "$work/pack") || [ "${#tarballs[@]}" -ne 2 ]; then
  bad "the packages pack (scripts/npm-pack.sh)"; finish
fi
ok "the packages pack: $(for t in "${tarballs[@]}"; do printf '%s (%s KiB) ' "$(basename "$t")" "$(du -k "$t" | cut -f1)"; done)"

# From here on no Rust on PATH: node, npm and python3 from the system.
export PATH=/usr/bin:/bin
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  bad "no Rust on the PATH ($PATH)"
else
  ok "no Rust on the PATH ($PATH)"
fi
mkdir "$work/fresh"
cd "$work/fresh" || exit 1
echo '{"private": true}' > package.json
start=$(date +%s%N)
if npm install "${quiet[@]}" "${tarballs[@]}"; then
  ok "npm install of the two tarballs"
else
  bad "npm install of the two tarballs"
fi
if npx --no-install patchspec check >"$work/check.log" 2>&1 && grep -q '^corpus .*(embedded' "$work/check.log"; then
  ok "npx patchspec check, the whole corpus: $(tail -1 "$work/check.log")"
else
  bad "npx patchspec check, the whole corpus"
  tail -20 "$work/check.log"
fi
judge_cost "$start" "$(du -sb node_modules | cut -f1)"
versions=$(node -p 'const v = (p) => require(p + "/package.json").version; [v("patchspec"), v("patchspec-linux-x64")].join(" ")')
binary=$(npx --no-install patchspec --version)
if [ "$versions" = "${binary#patchspec } ${binary#patchspec }" ]; then
  ok "packages ($versions) and binary ($binary) agree"
else
  bad "packages ($versions) and binary ($binary) agree"
fi

cp -r "$repo/examples/typescript" "$work/project"
cd "$work/project" || exit 1
rm -rf node_modules dist
if npm install "${quiet[@]}" "${tarballs[@]}" >/dev/null && npx --no-install tsc -p .; then
  ok "the TypeScript examples compile against the kit's declarations"
else
  bad "the TypeScript examples compile against the kit's declarations"; finish
fi
# Node 20 shows a reviver a number's source only behind a flag (the kit's
# 3.0-is-no-integer rule, npm/patchspec/executor.js); Node 21+ always.
flag=""
node -e 'process.exit(JSON.parse("1", (k, v, c) => c?.source) === "1" ? 0 : 1)' || flag="--harmony-json-parse-with-source"
if python3 "$repo/scripts/kit-example-check.py" --patchspec "npx --no-install patchspec" --right "node $flag dist/read_file_executor.js" --wrong "node $flag dist/read_file_wrong.js" >"$work/kit.log" 2>&1; then
  ok "the TypeScript kit examples (oneshot, session)"
else
  bad "the TypeScript kit examples (oneshot, session)"
fi
sed 's/^/       /' "$work/kit.log"
finish
