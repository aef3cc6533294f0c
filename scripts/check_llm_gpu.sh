#!/usr/bin/env bash
# The LLM operator on a real NVIDIA GPU (issue 21): starts the local stand-in for the
# OpenAI API (tests/llm_fake_server/fake_llm_server.py, which answers with the recorded
# Triton kernel tests/llm_fake_server/kernels/relu.py), then runs
#
#   kernelevolve optimize problems/level1/relu.py --target triton --llm openai:test-model
#
# against it (no TRITON_INTERPRET: the kernels compile and run on the GPU) and checks that
# the run ends with status ok, a correct best kernel written by the LLM (best_kernel.py
# holds @triton.jit), every LLM call answered ok and every prompt of the Triton protocol.
#
#   scripts/gpu_build.sh build-gpu && scripts/check_llm_gpu.sh [OUT]
#
# Environment: KE_BIN (default build-gpu/kernelevolve), KE_PYTHON (default .venv/bin/python,
# else python3). OUT (default a temporary folder) keeps the run folder, the server's log and
# the optimize output. Exit 0 when every check passes. Takes about a minute on an H200.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_check_env.sh ke_llm_gpu build-gpu/kernelevolve "${1:-}"  # BIN, PY, OUT; exit 2 without GPU

echo '{"script": [], "default": {"action": "ok"}}' >"$OUT/scenario.json"
rm -f "$OUT/port"
"$PY" tests/llm_fake_server/fake_llm_server.py --port-file "$OUT/port" --scenario "$OUT/scenario.json" \
    --log "$OUT/calls.jsonl" --api-key test-key --models test-model >"$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$OUT/port" ] && break; sleep 0.1; done
[ -s "$OUT/port" ] || { echo "the fake LLM server did not start:"; cat "$OUT/server.log"; exit 1; }
URL="http://127.0.0.1:$(cat "$OUT/port")/v1"

OPENAI_API_KEY=test-key "$BIN" optimize problems/level1/relu.py --target triton --budget 4 --drafts 2 \
    --llm openai:test-model --llm-base-url "$URL" --no-kb --seeds 2 --confirm-rounds 4 \
    --out "$OUT/run" >"$OUT/optimize.log" 2>&1
code=$?
tail -n 5 "$OUT/optimize.log"
"$PY" - "$OUT" "$code" <<'PY'
import json, os, sqlite3, sys
out, code = sys.argv[1], int(sys.argv[2])
failures = []
def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
check(code == 0, f"optimize exit code {code} == 0")
try:
    result = json.load(open(os.path.join(out, "run", "result.json")))
except OSError as exc:
    result = {}
    check(False, f"result.json readable ({exc})")
check(result.get("status") == "ok", f"result status {result.get('status')!r} == 'ok'")
best = os.path.join(out, "run", "best_kernel.py")
check(os.path.exists(best) and "@triton.jit" in open(best).read(), "best_kernel.py is a Triton kernel")
db = sqlite3.connect(os.path.join(out, "run", "kernelevolve.db"))
rows = db.execute("SELECT outcome, prompt_text FROM llm_calls").fetchall()
check(len(rows) >= 2, f"{len(rows)} LLM calls (>= 2)")
check(all(r[0] == "ok" for r in rows), "every LLM call ok")
check(all("fast, correct Triton kernels for\nNVIDIA GPUs" in r[1] and "def kernelevolve_entry(inputs, outputs)" in r[1]
          for r in rows), "every prompt is the Triton protocol")
if rows:  # what the prompt told the model about the hardware, for the record
    print("  prompt mentions H200:", "H200" in rows[0][1], "| TRITON_INTERPRET=1:", "TRITON_INTERPRET=1" in rows[0][1])
correct = db.execute("SELECT COUNT(*) FROM evaluations WHERE status = 'ok' AND correct = 1").fetchone()[0]
check(correct >= 2, f"{correct} correct evaluations on the GPU (>= 2)")
print("llm gpu check:", "ok" if not failures else f"{len(failures)} failed")
sys.exit(1 if failures else 0)
PY
