#!/usr/bin/env bash
# The proving service against the orchestrator on one machine (issue 21), from kiln's GPU
# bundle (`bash bundle/run.sh service`) or any `kiln` binary (KILN=...):
#   1. `kiln bench --partitions N`: the orchestrator's proofs per minute on porep 2^LOG;
#   2. `kiln serve` on a parameter file of the same circuit, N jobs sent by `kiln submit`,
#      each waited for: the service's proofs per minute (first to last finish);
#   3. Q normal jobs queued, then one high-priority job: how many normal jobs finished
#      between its submission and its end (the ones being proved when it came, if priorities
#      pre-empt at job boundaries).
# Everything lands in $OUT (default ./service-out); the last lines are the summary.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
KILN=${KILN:-$here/bin/kiln}
LOG=${LOG:-22}             # porep size, log2 of the constraints
N=${N:-60}                 # jobs (and partitions) in the throughput run
Q=${Q:-50}                 # normal jobs queued before the high-priority one
BACKEND=${BACKEND:-gpu}
CJ=${CJ:-auto}             # kiln serve --concurrent-jobs
OUT=${OUT:-service-out}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$OUT" "$WORK"
sock=$WORK/kiln.sock
now() { date +%s%3N; }
json_ids() { sed -n 's/.*"job":\([0-9]*\).*/\1/p' "$1"; }

params=$WORK/porep-$LOG.params
"$KILN" setup --backend "$BACKEND" --circuit porep --log-size "$LOG" --out "$params" > "$OUT/setup.log" 2>&1 ||
    { echo "setup failed: $OUT/setup.log"; exit 1; }
"$KILN" bench --backend "$BACKEND" --circuit porep --log-size "$LOG" --partitions "$N" --repeat 2 --json \
    > "$OUT/orchestrator.jsonl" 2> "$OUT/orchestrator.log" || { echo "bench failed: $OUT/orchestrator.log"; exit 1; }

# The file was made just above: its subgroup check would only cost time.
"$KILN" serve --params "p=$params" --params-check no-subgroup --preload --db "$WORK/jobs.db" --socket "$sock" \
    --concurrent-jobs "$CJ" --backend "$BACKEND" > "$OUT/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 1 6000); do [ -S "$sock" ] && break; kill -0 $server 2>/dev/null || break; sleep 0.1; done
[ -S "$sock" ] || { echo "kiln serve did not start: $OUT/serve.log"; exit 1; }
submit() { "$KILN" submit --socket "$sock" --params p --log-size "$LOG" --json "$@"; }
wait_all() { for j in $(json_ids "$1"); do "$KILN" status --socket "$sock" "$j" --wait --json; done; }

for s in $(seq 1 "$N"); do submit --seed "$s"; done > "$OUT/submitted.jsonl"
wait_all "$OUT/submitted.jsonl" > "$OUT/done.jsonl"
for s in $(seq 1 "$Q"); do submit --seed $((1000 + s)); done > "$OUT/queued.jsonl"
submit --seed 999 --priority high --wait > "$OUT/high.json"
wait_all "$OUT/queued.jsonl" > "$OUT/queued-done.jsonl"
kill $server; wait $server 2>/dev/null

python3 - "$OUT" <<'PY' || echo "(no python3: the results are in $OUT)"
import json, statistics, sys
out = sys.argv[1]
def lines(name):
    return [json.loads(l) for l in open(f"{out}/{name}") if l.startswith("{")]
bench = lines("orchestrator.jsonl")
orch = statistics.mean(b["proofs_per_minute"] for b in bench)
done = lines("done.jsonl")
bad = [d["job"] for d in done if d["state"] != "done"]
ends = sorted(d["finished_unix_ms"] for d in done)
# First to last finish: the first job also pays the one-time shape recording (as `kiln bench`
# does before its timed batch), so it is left out of the rate.
svc = 60e3 * (len(ends) - 1) / max(ends[-1] - ends[0], 1)
first = ends[0] - min(d["submitted_unix_ms"] for d in done)
rounds = ", ".join(f"{b['proofs_per_minute']:.1f}" for b in bench)
print(f"orchestrator: {orch:.1f} proofs/min (rounds: {rounds}, "
      f"{bench[0]['workers']} workers, every proof verified: {all(b['verified'] for b in bench)})")
print(f"service:      {svc:.1f} proofs/min over {len(done)} jobs ({len(bad)} not done{': ' + str(bad) if bad else ''}), "
      f"{100 * (svc / orch - 1):+.1f}% against the orchestrator; the first proof {first} ms after submission "
      f"(the circuit's shape recorded once)")
high = json.load(open(f"{out}/high.json"))
queued = lines("queued-done.jsonl")
t0, t1 = high["submitted_unix_ms"], high["finished_unix_ms"]
between = sum(1 for q in queued if t0 < q["finished_unix_ms"] <= t1)
print(f"priority:     high job {high['state']} {t1 - t0} ms after submission behind {len(queued)} queued; "
      f"{between} normal jobs finished in between (pre-emption at job boundaries: at most the jobs in progress "
      f"when it came)")
PY
