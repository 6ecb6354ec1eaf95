#!/usr/bin/env bash
# `patchspec mcp` driven by the official TypeScript MCP SDK (npm
# `@modelcontextprotocol/sdk`) and the MCP Inspector's CLI, both pinned in
# scripts/mcp-ts-client/package.json:
# over stdio and Streamable HTTP, every tool, refusals, structuredContent
# validated by the SDK, and the HTTP hardening (scripts/mcp-ts-client.mjs).
# Installs the SDK with npm into target/mcp-ts-client (gitignored; reused
# while the pin is unchanged) and runs the client against BINARY (default
# target/release/patchspec). Needs Node 18 or newer. Prints `mcp-ts: N
# passed, N failed`. Skips, with one line saying so and exit 0, only when
# the npm registry cannot be reached; any other failure is a failure.
#
#   scripts/mcp-ts-client.sh [BINARY]
set -uo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath -m "${1:-target/release/patchspec}")
dir=target/mcp-ts-client

if [ ! -x "$binary" ]; then
  echo "mcp-ts: 0 passed, 1 failed ($binary is not built)"
  exit 1
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "mcp-ts: 0 passed, 1 failed (node and npm are needed)"
  exit 1
fi
mkdir -p "$dir"
if ! cmp -s scripts/mcp-ts-client/package.json "$dir/package.json" \
   || [ ! -d "$dir/node_modules/@modelcontextprotocol/sdk" ] \
   || [ ! -d "$dir/node_modules/@modelcontextprotocol/inspector-cli" ]; then
  cp scripts/mcp-ts-client/package.json "$dir/package.json"
  if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null); then
    if ! npm ping >/dev/null 2>&1; then
      echo "mcp-ts: skipped (the npm registry is unreachable, so the TypeScript MCP SDK cannot be installed)"
      exit 0
    fi
    echo "mcp-ts: 0 passed, 1 failed (npm install failed with the registry reachable)"
    exit 1
  fi
fi
# Beside its node_modules, where Node resolves the SDK from.
cp scripts/mcp-ts-client.mjs "$dir/mcp-ts-client.mjs"
cd "$dir" && exec node mcp-ts-client.mjs "$binary"
