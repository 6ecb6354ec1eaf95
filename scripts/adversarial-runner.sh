#!/bin/sh
# The runner against an executor that leaves SIZE bytes (a sparse file) in
# its workspace, under an address-space limit (issue 16). Usage:
#   scripts/adversarial-runner.sh BIN [SIZE] [VMEM_KIB]
# (defaults: 1500M, 2560000 KiB = 2.5 GB). Prints the exit code, the peak
# memory, the case's outcome and message, whether the report has its footer,
# and whether the run folder was removed.
set -eu
BIN=$1 SIZE=${2:-1500M} VMEM=${3:-2560000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus/t" "$work/tmp"
for id in a-hostile b-fine; do
    cat > "$work/corpus/t/$id.json" <<JSON
{"id": "t/$id", "summary": "the executor answers success", "spec": ["websocket-tool-protocol#tool-result"],
 "tool": "test.write", "given": {"files": {"keep.txt": "k\n"}}, "call": {},
 "expect": {"result": {"success": true}, "files": "unchanged"}}
JSON
done
cat > "$work/executor.sh" <<SH
#!/bin/sh
line=\$(head -n 1)
case "\$line" in *TOOL_CALL*) ;; *) exit 1;; esac
id=\$(printf '%s' "\$line" | sed -n 's/.*"toolCallId":"\([^"]*\)".*/\1/p')
case "\$id" in *hostile*) truncate -s $SIZE big.bin ;; esac
printf '{"type":"TOOL_RESULT","data":{"toolCallId":"%s","success":true,"result":"{\\\\"success\\\\":true}","executionTime":0}}\n' "\$id"
SH
chmod +x "$work/executor.sh"
set +e
( ulimit -v "$VMEM"; TMPDIR="$work/tmp" /usr/bin/time -v "$BIN" check --corpus "$work/corpus" \
    --report json -- "$work/executor.sh" >"$work/report.jsonl" 2>"$work/stderr.txt" )
code=$?
set -e
echo "exit code: $code"
echo "peak RSS (KiB): $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/stderr.txt")"
echo "wall: $(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/stderr.txt")"
python3 - "$work/report.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for v in lines:
    if v.get("type") == "case":
        print("case", v["id"], v["outcome"], (v.get("message") or v.get("detail", {}).get("message") or "")[:200])
print("footer written:", any(v.get("type") == "footer" for v in lines))
PY
grep -v '^\s' "$work/stderr.txt" | grep -iv 'command being timed' | head -5 || true
echo "run folders left: $(ls "$work/tmp" | grep -c patchspec-run || true)"
