#!/usr/bin/env bash
# The Python channel as an implementer's CI meets it: builds the wheel
# (scripts/build-wheel.sh), installs it into a fresh venv and, with no Rust
# on PATH (`PATH=<venv>/bin:/usr/bin:/bin`), runs `patchspec check` over the
# whole corpus and the Python kit's examples (scripts/kit-example-check.py,
# oneshot and session). Prints install + first check wall time and the
# installed size, then `wheel: N passed, N failed`.
#
#   scripts/wheel-check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
LABEL=wheel
# shellcheck source=scripts/package-check-lib.sh
. scripts/package-check-lib.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! wheel=$(scripts/build-wheel.sh "$work/wheel"); then
  bad "the wheel builds (scripts/build-wheel.sh)"; finish
fi
ok "the wheel builds: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
# The project of an implementer: the examples alone, no clone around them
# (so `patchspec` uses its embedded corpus).
repo=$(pwd)
cp -r examples/python "$work/project"
cd "$work/project" || exit 1
python3 -m venv "$work/venv"
venv=$work/venv
bare=$(du -sb "$venv" | cut -f1)
clean=(env -u PYTHONPATH -u CARGO_HOME -u RUSTUP_HOME "PATH=$venv/bin:/usr/bin:/bin")
if "${clean[@]}" sh -c 'command -v cargo || command -v rustc' >/dev/null; then
  bad "no Rust on the clean PATH"
else
  ok "no Rust on the clean PATH ($venv/bin:/usr/bin:/bin)"
fi

start=$(date +%s%N)
if "${clean[@]}" pip install --quiet --no-index "$wheel"; then
  ok "pip install of the wheel"
else
  bad "pip install of the wheel"
fi
if "${clean[@]}" patchspec check >"$work/check.log" 2>&1 && grep -q '^corpus .*(embedded' "$work/check.log"; then
  ok "patchspec check, the whole corpus: $(tail -1 "$work/check.log")"
else
  bad "patchspec check, the whole corpus"
  tail -20 "$work/check.log"
fi
judge_cost "$start" "$(($(du -sb "$venv" | cut -f1) - bare))"

installed=$("${clean[@]}" python -c 'import importlib.metadata as m; print(m.version("patchspec"))')
binary=$("${clean[@]}" patchspec --version)
if [ "$binary" = "patchspec $installed" ]; then
  ok "wheel $installed and binary ($binary) agree"
else
  bad "wheel $installed and binary ($binary) agree"
fi

if "${clean[@]}" python3 "$repo/scripts/kit-example-check.py" --patchspec patchspec --right "python read_file_executor.py" --wrong "python read_file_wrong.py" >"$work/kit.log" 2>&1; then
  ok "the Python kit examples (oneshot, session)"
else
  bad "the Python kit examples (oneshot, session)"
fi
sed 's/^/       /' "$work/kit.log"
finish
