#!/usr/bin/env bash
# The mutation score of the corpus (docs/mutation-testing.md): cargo-mutants
# mutates patchspec-engine and runs, against each mutant, only the
# conformance gate (the whole corpus through `patchspec check`; see
# .cargo/mutants.toml). Long: hours on 2 cores; not part of .ci/run.
#
#   scripts/mutants.sh                 the four TUL/envelope specs' code (issue 5's score)
#   scripts/mutants.sh --all           every engine file, the IDE tools and the diagnosis too
#   scripts/mutants.sh -- --shard 1/4  extra cargo-mutants arguments after `--`
#
# Results land in mutants.out/ (outcomes.json, caught.txt, missed.txt,
# timeout.txt, unviable.txt). cargo-mutants is installed when absent.
set -euo pipefail
cd "$(dirname "$0")/.."

scope=spec
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --all) scope=all ;;
        --) shift; extra=("$@"); break ;;
        *) echo "mutants.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

if ! cargo mutants --version >/dev/null 2>&1; then
    cargo install cargo-mutants --locked
fi

# Never mutated: FaultFs and FsOp, the fault-injecting test double of fs.rs (the
# tests' and the fuzzers' harness, unreachable through the protocol).
# (cargo-mutants 27 does not apply --exclude-re to struct-field deletions, so
# one FaultFs mutant, "delete field panics from struct FaultFs", still runs;
# docs/mutation-testing.md counts it with the test double.)
exclude_always=(--exclude-re 'FaultFs|FsOp')

# The spec scope leaves out what issue 5 does not score: the diagnosis of
# refused edits (an extension, issue 10) and the IDE-plugin tools of the
# websocket protocol (issue 8). Their cases are in the corpus all the same.
# It also leaves out the code no tool call's result depends on, whose every
# effect is in the engine's private folder or outside the protocol: the
# crash journal and `recover` (seen only after a kill), the trash, the
# tracing events and the tool catalog (`patchspec catalog`, MCP
# `tools/list`). The kill trials (scripts/crash-trials.py) and the engine's
# own tests hold those; `--all` mutates them too.
exclude=()
if [ "$scope" = spec ]; then
    exclude=(
        --exclude 'engine/src/diagnose/**'
        --exclude 'engine/src/tools/ide/**'
        --exclude 'engine/src/journal.rs'
        --exclude 'engine/src/trash.rs'
        --exclude 'engine/src/events.rs'
        --exclude 'engine/src/catalog/**'
        # matching.rs's post_state serves only the diagnosis (whose wire form
        # is in diagnose/json.rs, its human rendering in the CLI crate).
        --exclude-re 'post_state'
    )
fi

# The baseline: the gate must pass on the unmutated tree, in the profile the
# mutants are built with. It is run here, not by cargo-mutants, because
# cargo-mutants 27 runs its own baseline in the *mutated* package
# (patchspec-engine, which has no `gate` test) whatever --test-package says;
# its time also sets the per-mutant timeout (a mutant that loops forever is
# counted as a timeout, not a survivor).
start=$(date +%s)
cargo test --profile mutants -p patchspec-conformance --test gate
baseline=$(( $(date +%s) - start ))
timeout=${MUTANTS_TIMEOUT:-60}
echo "mutants.sh: baseline gate passed (${baseline} s with the build); per-mutant test timeout ${timeout} s"

jobs=${MUTANTS_JOBS:-2}
# Each mutant's gate stops at its first failing case (conformance/tests/gate.rs).
export PATCHSPEC_GATE_MAX_FAIL=1
exec cargo mutants -p patchspec-engine --test-package patchspec-conformance \
    --baseline skip --timeout "$timeout" --build-timeout 600 \
    --jobs "$jobs" "${exclude_always[@]}" "${exclude[@]}" "${extra[@]}"
