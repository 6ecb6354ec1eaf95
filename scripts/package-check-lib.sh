# shellcheck shell=bash
# What scripts/wheel-check.sh and npm-check.sh share: the ok/bad tally, the
# closing `LABEL: N passed, N failed` line, and the cost judgement of an
# install. Sourced, with LABEL set.
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() { echo "$LABEL: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

# judge_cost START_NS SIZE_BYTES: install + first check within 30 s, and the
# installed size within the 20 MB aimed at (the dist binary is 16.1 MB, its
# corpus embedded deflated: docs/ci.md, "Cost").
judge_cost() {
  local ms=$((($(date +%s%N) - $1) / 1000000)) size=$2
  echo "install + first check: $((ms / 1000)).$(printf %03d $((ms % 1000))) s wall; installed: $size bytes"
  if [ "$ms" -le 30000 ]; then
    ok "install + first check within 30 s"
  else
    bad "install + first check within 30 s ($ms ms)"
  fi
  if [ "$size" -le 20000000 ]; then
    ok "installed size within 20 MB"
  else
    bad "installed size within 20 MB ($size bytes)"
  fi
}
