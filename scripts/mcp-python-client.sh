#!/usr/bin/env bash
# `patchspec mcp` driven by the official Python MCP SDK (PyPI `mcp`): a
# client from another ecosystem than the server's. Creates (or reuses) a
# venv in target/mcp-python-venv, installs `mcp` there, and runs
# scripts/mcp-python-client.py against BINARY (default
# target/release/patchspec). Prints `mcp-python: N passed, N failed`.
# Skips, with one line saying so and exit 0, only when PyPI cannot be
# reached; any other install failure is a failure.
#
#   scripts/mcp-python-client.sh [BINARY]
set -uo pipefail
cd "$(dirname "$0")/.."
binary=${1:-target/release/patchspec}
venv=target/mcp-python-venv
# v2: the SDK's Client API (snake_case fields) that the script uses; it
# speaks both the initialize handshake and the 2026-07-28 revision.
requirement='mcp>=2.3,<3'

if [ ! -x "$binary" ]; then
  echo "mcp-python: 0 passed, 1 failed ($binary is not built)"
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "mcp-python: 0 passed, 1 failed (python3 -m venv failed)"; exit 1; }
fi
if ! "$venv/bin/python" -c 'import mcp.client' 2>/dev/null; then
  if ! "$venv/bin/python" -m pip install --quiet "$requirement"; then
    if ! python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/mcp/", timeout=15)' 2>/dev/null; then
      echo "mcp-python: skipped (PyPI is unreachable, so the Python MCP SDK cannot be installed)"
      exit 0
    fi
    echo "mcp-python: 0 passed, 1 failed (pip install '$requirement' failed with PyPI reachable)"
    exit 1
  fi
fi
exec "$venv/bin/python" scripts/mcp-python-client.py "$binary"
