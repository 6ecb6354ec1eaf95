#!/usr/bin/env bash
# `patchspec catalog --format openai|openai-responses|anthropic [--strict]`
# checked against the providers' own typed params (the `openai` and
# `anthropic` Python SDKs, pinned below; pydantic TypeAdapter), by
# scripts/catalog-provider-types.py. Creates (or reuses) a venv in
# target/catalog-types-venv. Prints `catalog-types: N passed, N failed`.
# Skips, with one line saying so and exit 0, only when PyPI cannot be
# reached; any other install failure is a failure.
#
#   scripts/catalog-provider-types.sh [BINARY]
set -uo pipefail
cd "$(dirname "$0")/.."
binary=${1:-target/release/patchspec}
venv=target/catalog-types-venv
requirements=(openai==3.57.0 anthropic==2.14.0)

if [ ! -x "$binary" ]; then
  echo "catalog-types: 0 passed, 1 failed ($binary is not built)"
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "catalog-types: 0 passed, 1 failed (python3 -m venv failed)"; exit 1; }
fi
have=$("$venv/bin/python" -c 'import importlib.metadata as m; print("openai==" + m.version("openai"), "anthropic==" + m.version("anthropic"))' 2>/dev/null)
if [ "$have" != "${requirements[*]}" ]; then
  if ! "$venv/bin/python" -m pip install --quiet "${requirements[@]}"; then
    if ! python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/openai/", timeout=15)' 2>/dev/null; then
      echo "catalog-types: skipped (PyPI is unreachable, so the provider SDKs cannot be installed)"
      exit 0
    fi
    echo "catalog-types: 0 passed, 1 failed (pip install ${requirements[*]} failed with PyPI reachable)"
    exit 1
  fi
fi
exec "$venv/bin/python" scripts/catalog-provider-types.py "$binary"
