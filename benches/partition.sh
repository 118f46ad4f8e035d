#!/usr/bin/env bash
# A Filecoin-class partition (issue 18), from kiln's GPU bundle (`bash bundle/run.sh
# partition`) or any `kiln` binary (KILN=...): porep 2^LOG (default 27), parameters made on
# the GPU in memory (ARGS: more `kiln bench` arguments for every run, e.g. --prepare-ahead 0),
#   1. N partitions (default 10) through the orchestrator with WORKERS workers: wall time,
#      device busy fraction, the phases summed;
#   2. one partition at a time, ROUNDS rounds: each phase's time for one partition alone.
# The proofs of each run are saved (vk + proofs) for bellperson's verifier
# (`bellperson_verify DIR porep LOG 1 COUNT`, run here when BELLPERSON_VERIFY names it).
# Device memory (nvidia-smi) and host memory (free) are sampled every 2 s beside each run;
# the peaks are printed with the plan. Logs and JSON in $OUT (default ./partition-out).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
KILN=${KILN:-$here/bin/kiln}
LOG=${LOG:-27}
N=${N:-10}
WORKERS=${WORKERS:-2}
ROUNDS=${ROUNDS:-2}
RUNS=${RUNS:-batch single}
ARGS=${ARGS:-}
OUT=${OUT:-partition-out}
BELLPERSON_VERIFY=${BELLPERSON_VERIFY:-}
mkdir -p "$OUT"

sample() { # $1 = file: "unix_s device_used_MiB host_used_bytes" every 2 s until killed
    while true; do
        echo "$(date +%s) $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)" \
            "$(free -b | awk '/^Mem:/ {print $3}')"
        sleep 2
    done > "$1"
}

run() { # $1 = run name, $2 = proofs to verify, rest = kiln bench arguments
    local name=$1 count=$2; shift 2
    sample "$OUT/$name.mem" & local sampler=$!
    RUST_LOG=${RUST_LOG:-info} "$KILN" bench --backend gpu --circuit porep --log-size "$LOG" --seed 1 \
        --save-proofs "$OUT/$name" --json $ARGS "$@" > "$OUT/$name.jsonl" 2> "$OUT/$name.log"
    local status=$?
    kill $sampler 2>/dev/null
    [ $status = 0 ] || { echo "$name failed ($status): $OUT/$name.log"; tail -5 "$OUT/$name.log"; return; }
    awk '{ if ($2 > d) d = $2; if ($3 > h) h = $3 } END {
        printf "%s: peak device memory %.1f GiB (nvidia-smi), peak host memory used %.1f GiB (free)\n",
            name, d / 1024, h / 2^30 }' name="$name" "$OUT/$name.mem"
    grep -A10 'VRAM plan for' "$OUT/$name.log" | head -11
    if [ -n "$BELLPERSON_VERIFY" ]; then
        "$BELLPERSON_VERIFY" "$OUT/$name" porep "$LOG" 1 "$count" && echo "$name: bellperson's verifier accepts all $count"
    fi
    cat "$OUT/$name.jsonl"
}

for r in $RUNS; do
    mkdir -p "$OUT/$r"
    case $r in
        batch) run batch "$N" --partitions "$N" --workers "$WORKERS" ;;
        single) run single 1 --repeat "$ROUNDS" ;;
    esac
done
