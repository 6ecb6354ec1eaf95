#!/usr/bin/env bash
# Fail when docs/compliance.md was generated on a corpus other than the
# current one, or lacks a generated block (the hazards table and its case
# lists are generated with the summary, from the same run and the corpus's
# tags, so the one hash covers them): its summary names the corpus hash of the run
# ("Generated on corpus `sha256:HEX`"), and `patchspec check --corpus-hash`
# (the runner's own pin check, the same hash as in every report) refuses a
# corpus whose content differs. The check runs the apply_patch cases against
# the in-process reference engine (under a second).
#
#   adapters/compliance-fresh.sh [PATCHSPEC]    # default target/release/patchspec
#
# Exit 0: fresh; 1: stale or unreadable (the message says what to run).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/patchspec}
doc=docs/compliance.md
hash=$(sed -n 's/.*Generated on corpus `\(sha256:[0-9a-f]\{64\}\)`.*/\1/p' "$doc" | head -n 1)
if [ -z "$hash" ]; then
  echo "compliance-fresh: $doc names no corpus hash (\"Generated on corpus \`sha256:…\`\"): run adapters/compliance.sh" >&2
  exit 1
fi
for block in summary hazards hazard-cases departures fingerprint matrix; do
  if ! awk -v b="$block" '$0 ~ "<!-- BEGIN GENERATED " b " " {on=1; next} $0 ~ "<!-- END GENERATED " b " " {exit} on && NF {found=1} END {exit !found}' "$doc"; then
    echo "compliance-fresh: $doc has no generated $block block (or an empty one): run adapters/compliance.sh" >&2
    exit 1
  fi
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if "$bin" check --corpus-hash "$hash" --tool apply_patch >"$log" 2>&1; then
  echo "compliance-fresh: $doc was generated on the current corpus ($hash)"
  exit 0
fi
if grep -q "is not the pinned" "$log"; then
  echo "compliance-fresh: $doc is stale: it was generated on corpus $hash, and the corpus has changed since:" >&2
  grep "is not the pinned" "$log" >&2
  echo "compliance-fresh: regenerate it with adapters/compliance.sh (and re-read its hand-written findings)" >&2
else
  echo "compliance-fresh: could not check the corpus hash (patchspec check failed for another reason):" >&2
  tail -n 20 "$log" >&2
fi
exit 1
