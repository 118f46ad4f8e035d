#!/usr/bin/env bash
# Many proofs in flight on one GPU (issue 17), from kiln's GPU bundle (`bash bundle/run.sh
# orchestrator`) or any `kiln` binary (KILN=...):
#   1. porep 2^LOG, N partitions through the orchestrator at 1..WORKERS workers, ROUNDS rounds
#      each in one process: proofs per minute, device busy fraction, speed-up over one worker;
#   2. the VRAM budget forced to each of BUDGETS with 3 workers asked, two rounds in one
#      process: what the plan granted and why, and that both rounds complete.
# Every proof is verified by kiln's verifier before the bench counts it. Each run's JSON lines
# and log land in $OUT (default ./orchestrator-out); the last lines are the summary table.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
KILN=${KILN:-$here/bin/kiln}
LOG=${LOG:-24}
N=${N:-10}
WORKERS=${WORKERS:-4}
ROUNDS=${ROUNDS:-3}
BUDGETS=${BUDGETS:-24G 16G}
OUT=${OUT:-orchestrator-out}
mkdir -p "$OUT"
bench() { # $1 = run name, rest = kiln bench arguments
    local name=$1; shift
    RUST_LOG=${RUST_LOG:-info} "$KILN" bench --backend gpu --circuit porep --log-size "$LOG" --partitions "$N" --json \
        "$@" > "$OUT/$name.jsonl" 2> "$OUT/$name.log" || { echo "$name failed: $OUT/$name.log"; tail -5 "$OUT/$name.log"; }
}

for w in $(seq 1 "$WORKERS"); do bench "workers-$w" --workers "$w" --repeat "$ROUNDS"; done
for b in $BUDGETS; do bench "budget-$b" --workers 3 --vram-budget "$b" --repeat 2; done

python3 - "$OUT" "$WORKERS" "$BUDGETS" <<'PY' || echo "(no python3: the results are in $OUT)"
import json, os, statistics, sys
out, workers, budgets = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def rounds(name):
    path = f"{out}/{name}.jsonl"
    return [json.loads(l) for l in open(path) if l.startswith("{")] if os.path.exists(path) else []
def gib(b):
    return f"{b / 2**30:.1f}" if b is not None else "-"
def row(name, label):
    rs = rounds(name)
    if not rs:
        return None, f"| {label} | (failed: see {name}.log) |"
    d = rs[-1]["devices"][0] if rs[-1]["devices"] else {}
    ppm = [r["proofs_per_minute"] for r in rs]
    busy = [r["device_busy_fraction"] for r in rs]
    walls = " / ".join("%.0f" % r["wall_ms"] for r in rs)
    ppms = " / ".join("%.1f" % p for p in ppm)
    busys = " / ".join("%.1f%%" % (100 * b) for b in busy)
    line = (f"| {label} | {rs[0]['workers']} | {walls} | {ppms} | {busys} "
            f"| {max(r['peak_rss_bytes'] or 0 for r in rs) / 2**30:.1f} "
            f"| {gib(d.get('memory_reserved_bytes'))} | {gib(d.get('memory_in_use_start_bytes'))} -> "
            f"{gib(d.get('memory_in_use_end_bytes'))} of {gib(d.get('memory_total_bytes'))} |")
    return statistics.mean(ppm), line
print(f"porep 2^{rounds('workers-1')[0]['log_size'] if rounds('workers-1') else '?'}, every proof verified")
print("| run | workers granted | wall ms, each round | proofs/min, each round | device busy, each round "
      "| peak host GiB | plan GiB | device in use GiB (start -> end) |")
print("|---|---|---|---|---|---|---|---|")
means = {}
for w in range(1, workers + 1):
    means[w], line = row(f"workers-{w}", f"{w} asked")
    print(line)
for b in budgets:
    print(row(f"budget-{b}", f"3 asked, budget {b}")[1])
if means.get(1):
    print("speed-up over one worker (mean proofs/min): "
          + ", ".join(f"{w}: {m / means[1]:.2f}x" for w, m in means.items() if m))
PY
for b in $BUDGETS; do
    echo "plan under budget $b:"
    grep -A12 'VRAM plan for' "$OUT/budget-$b.log" | grep -v '^--$' | head -14
done
