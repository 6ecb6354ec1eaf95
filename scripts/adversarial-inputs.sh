#!/bin/sh
# Adversarial inputs for the IDE tools and the runner (issue 16): each
# hostile shape at SIZE bytes, timed as a user would, whole process, with
# /usr/bin/time -v. Usage:
#   scripts/adversarial-inputs.sh BIN [SIZE...]      (default sizes: 1 MB, 10 MB)
# BIN is a release `patchspec`. Prints one line per shape and size:
#   shape size wall_seconds cpu_seconds max_rss_kb exit_code error_kind
# (cpu_seconds, user + system, is what to read on a busy machine)
# Each run is capped at $CAP seconds (default 120) and $VMEM KiB of address
# space (default 4 GiB) so an old, quadratic binary cannot take the machine.
set -eu
BIN=$1; shift
[ $# -gt 0 ] || set -- 1000000 10000000
CAP=${CAP:-120}
VMEM=${VMEM:-4194304}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # shape size tool params-file root
    shape=$1 size=$2 tool=$3 params=$4 root=$5
    set +e
    ( ulimit -v "$VMEM"; timeout "$CAP" /usr/bin/time -v "$BIN" call "$tool" "@$params" --root "$root" \
        >"$work/out.json" 2>"$work/time.txt" )
    code=$?
    set -e
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt" |
        awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
    cpu=$(awk -F': ' '/User time|System time/ { t += $2 } END { printf "%.2f", t }' "$work/time.txt")
    kind=$(python3 -c 'import json,sys
try:
    d = json.load(open(sys.argv[1])); print(d.get("error", {}).get("kind", "ok") if not d.get("success") else "ok")
except Exception: print("-")' "$work/out.json")
    [ "$code" -eq 124 ] && { wall=">$CAP"; kind=killed; }
    echo "$shape $size ${wall:--} ${cpu:--} ${rss:--} $code $kind"
}

for size in "$@"; do
    ws="$work/ws-$size"; mkdir -p "$ws"
    python3 - "$ws" "$size" <<'PY'
import json, sys, os
ws, n = sys.argv[1], int(sys.argv[2])
def put(name, text):
    with open(os.path.join(ws, name), "w") as f: f.write(text)
# apply_change: n bytes of 'a', a SEARCH of n/2 'a' (every position overlaps).
put("aaa.txt", "a" * n)
json.dump({"relativePath": "aaa.txt", "searchContent": "a" * (n // 2), "replaceContent": "b"},
          open(os.path.join(ws, "change.json"), "w"))
# grep_file: a literal pattern of n bytes (case ignored, the default).
put("hay.txt", "x\n" + ("Ab" * (n // 2)) + "\n")
json.dump({"pattern": "aB" * (n // 2), "relativePath": "hay.txt"},
          open(os.path.join(ws, "grep-literal.json"), "w"))
# grep_file: the same length as a regex.
json.dump({"pattern": "a" * n, "regex": True, "relativePath": "hay.txt"},
          open(os.path.join(ws, "grep-regex.json"), "w"))
# call_chain: n bytes of nested classes.
os.makedirs(os.path.join(ws, "nest"), exist_ok=True)
d = n // 16
with open(os.path.join(ws, "nest", "N.java"), "w") as f:
    f.write("".join("class C%d {\n" % i for i in range(d)) + "}" * d + "\n")
json.dump({"method": "C0.m"}, open(os.path.join(ws, "chain-nest.json"), "w"))
# call_chain: return this.c().c()... over n bytes.
os.makedirs(os.path.join(ws, "chain"), exist_ok=True)
k = n // 4
with open(os.path.join(ws, "chain", "A.java"), "w") as f:
    f.write("class A { A c() { return this" + ".c()" * k + "; } }\n")
json.dump({"method": "A.c", "direction": "callees"}, open(os.path.join(ws, "chain-calls.json"), "w"))
# call_chain: p calls e on n/39 lines, and p is shown under 333 parents.
os.makedirs(os.path.join(ws, "fan"), exist_ok=True)
k = 333
with open(os.path.join(ws, "fan", "X.java"), "w") as f:
    f.write("class X {\n  void a() {\n" + "".join("    b%d();\n" % i for i in range(k)) + "  }\n"
            + "".join("  void b%d() { p(); }\n" % i for i in range(k))
            + "  void p() {\n" + "    eachCallOnItsOwnLineOfThisMethod();\n" * max(1, (n - 12000) // 39)
            + "  }\n  void eachCallOnItsOwnLineOfThisMethod() {}\n}\n")
json.dump({"method": "X.a", "direction": "callees", "depth": 3}, open(os.path.join(ws, "fan-in.json"), "w"))
# call_chain: n bytes of `c();` statements in files of 200 KB (each under
# the token limit, so every one is parsed).
os.makedirs(os.path.join(ws, "stmts"), exist_ok=True)
for i in range(max(1, n // 200000)):
    with open(os.path.join(ws, "stmts", "S%d.java" % i), "w") as f:
        f.write("class S%d { void c() { " % i + "c();" * (min(n, 200000) // 4) + " } }\n")
json.dump({"method": "S0.c", "direction": "both"}, open(os.path.join(ws, "stmts.json"), "w"))
PY
    measure apply_change/overlap "$size" apply_change "$ws/change.json" "$ws"
    measure grep_file/long-literal "$size" grep_file "$ws/grep-literal.json" "$ws"
    measure grep_file/long-regex "$size" grep_file "$ws/grep-regex.json" "$ws"
    measure call_chain/nested-classes "$size" call_chain "$ws/chain-nest.json" "$ws/nest"
    measure call_chain/this-c-chain "$size" call_chain "$ws/chain-calls.json" "$ws/chain"
    measure call_chain/fan-in "$size" call_chain "$ws/fan-in.json" "$ws/fan"
    measure call_chain/statements "$size" call_chain "$ws/stmts.json" "$ws/stmts"
    rm -rf "$ws"
done
