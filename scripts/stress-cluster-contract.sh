#!/usr/bin/env bash
# Runs the runtime contract on a 3-master Redis Cluster (test/contract/bullmq-cluster-runtime.test.ts)
# RUNS times in a row (default 30) while a busy loop runs on every core, and stops at the first
# failure. Evidence for "the 3-shard contract does not hang under load", kept out of `npm test`
# because it takes tens of minutes. Usage: scripts/stress-cluster-contract.sh [RUNS] [LOG]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
log="${2:-/tmp/stress-cluster-contract.log}"
cores="$(node -p 'require("node:os").availableParallelism()')"
pids=()
stop_load() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_load EXIT
for _ in $(seq "$cores"); do
  node -e 'for (;;) {}' &
  pids+=("$!")
done
: >"$log"
passed=0
started="$(date +%s)"
for run in $(seq "$runs"); do
  begin="$(date +%s)"
  if npx vitest run test/contract/bullmq-cluster-runtime.test.ts >>"$log" 2>&1; then
    passed=$((passed + 1))
    echo "run $run/$runs passed in $(($(date +%s) - begin)) s"
  else
    echo "run $run/$runs FAILED after $(($(date +%s) - begin)) s; see $log"
    exit 1
  fi
done
echo "$passed/$runs runs passed under a busy loop on each of $cores cores, $(($(date +%s) - started)) s in all"
