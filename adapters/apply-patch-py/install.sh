#!/usr/bin/env bash
# Install apply-patch-py (pinned in requirements.txt) into
# adapters/apply-patch-py/.venv (never globally). It requires Python >= 3.13;
# the interpreter is, in this order: $PYTHON if it is >= 3.13, `python3.13`
# on PATH (a pyenv 3.13 counts), Debian's python3.13 + python3.13-venv
# (installed with apt-get when the configured suites have it: trixie does,
# bookworm does not). When none is found the script exits 4 and writes the
# reason to .venv-unavailable, which compliance.sh shows in the column.
# Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/.venv"
want=$(sed -n 's/^apply-patch-py==//p' "$here/requirements.txt")
rm -f "$here/.venv-unavailable"
if [ -f "$venv/VERSION" ] && [ "$(cat "$venv/VERSION")" = "$want" ]; then
  echo "apply-patch-py $want already installed in $venv"
  exit 0
fi
new_enough() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' 2>/dev/null; }
py=
for c in "${PYTHON:-}" python3.13 "$(command -v pyenv >/dev/null && pyenv root 2>/dev/null)/versions/3.13"*/bin/python3.13; do
  [ -n "$c" ] && new_enough "$c" && { py=$c; break; }
done
if [ -z "$py" ] && command -v apt-cache >/dev/null; then
  if [ -n "$(apt-cache policy python3.13 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)')" ]; then
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends python3.13 python3.13-venv
    py=python3.13
  fi
fi
if [ -z "$py" ]; then
  reason="apply-patch-py $want requires Python >= 3.13 (Requires-Python on PyPI); this machine has $(python3 --version 2>&1), no python3.13 on PATH, and its Debian suites ($(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-unknown}")) have no python3.13 package (Debian ships it from trixie on)"
  echo "$reason" > "$here/.venv-unavailable"
  echo "install.sh: $reason" >&2
  exit 4
fi
py=$("$py" -c 'import sys; print(sys.executable)')
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
# Smoke test: its CLI, envelope on stdin, edits a file in the current directory.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a\n' > "$tmp/x.txt"
(cd "$tmp" && printf '*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n' | "$venv/bin/apply-patch-py" >/dev/null)
[ "$(cat "$tmp/x.txt")" = "b" ] || { echo "install.sh: the smoke test did not edit x.txt" >&2; exit 1; }
echo "$want" > "$venv/VERSION"
echo "installed apply-patch-py $want in $venv (Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'))"
