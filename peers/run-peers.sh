#!/usr/bin/env bash
# kiln and its peers side by side on one GPU machine (issue 19): the same circuits, the same
# parameter files, every proof verified by kiln's verifier; one table at the end. kiln makes its
# witnesses by the circuits' bellpepper synthesis as the peers do (--generic-witness), so the
# table compares provers, not witness generators.
#
# Usage: run-peers.sh [run | table | help]   (default: run)
#   run    for each circuit and size: parameters once (kiln setup --backend gpu, written where
#          `kiln bench` finds them, so kiln and the peers prove with the same file), then every
#          prover on one proof and on a batch, REPEAT runs each; results appended as JSON lines
#          to $WORK/results.jsonl; then the table.
#   table  the table of everything in $WORK/results.jsonl (e.g. after several runs).
#
# Needs kiln's GPU bundle beside this one (bundle/bin/kiln, from `cargo xtask gpu-bundle`).
# Environment (defaults in brackets). One device call may run 10 minutes: the default grid
# (2^20) fits in one; add the larger sizes in later calls on the same (warm) machine, e.g.
#   CIRCUITS=porep LOGS=22 bash run-peers.sh;  CIRCUITS=squaring LOGS=22 bash run-peers.sh
#   LOGS=24 BATCHES=1 PROVERS="kiln-gpu bellperson-cuda supraseal-c2" bash run-peers.sh
# Results accumulate in $WORK (a cell run again pools its runs); each run ends with the table
# of all of them. No cell starts after BUDGET seconds, so a call ends with its table instead
# of being killed.
#   WORK      parameters and results                      [peer-work]
#   CIRCUITS  built-in circuits                           [porep squaring]
#   LOGS      log2 sizes                                  [20]
#   BATCHES   proofs per cell (1: single proofs)          [1 10]
#   REPEAT    timed runs per cell (median reported), >= 3 [3]
#   PROVERS   kiln-gpu kiln-cpu bellperson-cpu bellperson-cuda supraseal-c2
#             [kiln-gpu bellperson-cuda supraseal-c2 kiln-cpu bellperson-cpu]
#   CPU_LOGS  sizes at which the CPU provers run          [20]
#   CPU_BATCHES  batches at which the CPU provers run     [1]
#   CELL_TIMEOUT seconds one cell may take before it is abandoned (shown as "-") [200]
#   BUDGET    seconds after which no new cell starts      [500]
#   KILN      the kiln binary                             [bundle/bin/kiln beside this folder]
#   SETUP_BACKEND  where kiln makes the parameters        [gpu]
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-run}
WORK=${WORK:-peer-work}
CIRCUITS=${CIRCUITS:-porep squaring}
LOGS=${LOGS:-20}
BATCHES=${BATCHES:-1 10}
REPEAT=${REPEAT:-3}
PROVERS=${PROVERS:-kiln-gpu bellperson-cuda supraseal-c2 kiln-cpu bellperson-cpu}
CPU_LOGS=${CPU_LOGS:-20}
CPU_BATCHES=${CPU_BATCHES:-1}
CELL_TIMEOUT=${CELL_TIMEOUT:-200}
BUDGET=${BUDGET:-500}
KILN=${KILN:-$here/../bundle/bin/kiln}
SETUP_BACKEND=${SETUP_BACKEND:-gpu}
peers_cuda=$here/bin/kiln-peers-cuda
peers_supra=$here/bin/kiln-peers-supraseal
# The toxic-waste seed of `kiln bench`'s parameter cache: `kiln setup` with it writes the
# bytes kiln bench would make, so kiln bench takes the file from its cache.
SETUP_SEED=1802071150

mkdir -p "$WORK/params"
WORK=$(cd "$WORK" && pwd)
export KILN_CACHE=$WORK/params
results=$WORK/results.jsonl
failures=$WORK/failures.txt

table() {
    echo "== kiln vs peers: median wall ms per cell (runs in parentheses), circuits to verified proofs"
    "$peers_cuda" table "$results"
    [ ! -s "$failures" ] || { echo "== cells that failed or timed out:"; cat "$failures"; }
}

case $mode in
    help|-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    table) table; exit $? ;;
    run) ;;
    *) echo "usage: run-peers.sh [run | table | help]"; exit 2 ;;
esac

[ -x "$KILN" ] || { echo "no kiln binary at $KILN: extract kiln's bundle.tar.xz beside this folder or set KILN"; exit 2; }
touch "$results" "$failures"
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader 2>/dev/null
echo "== $(date -u +%FT%TZ) $(nproc) cores; provers: $PROVERS; circuits: $CIRCUITS; 2^{$LOGS}; batches: $BATCHES; $REPEAT runs"

# $1 = label; rest: the command. Appends its JSON lines to results; a failure or timeout is noted.
cell() {
    local label=$1; shift
    local out; out=$(mktemp)
    if [ "$SECONDS" -ge "$BUDGET" ]; then
        echo "$label: not started, past the ${BUDGET}s budget of this call" | tee -a "$failures"; return
    fi
    echo "-- $label ($SECONDS s)"
    if timeout "$CELL_TIMEOUT" "$@" > "$out"; then
        grep '^{' "$out" >> "$results"
        cut -c1-220 "$out"
    else
        local rc=$?
        local why="exit $rc"; [ $rc = 124 ] && why="timed out after ${CELL_TIMEOUT}s"
        # kiln --json writes its error as JSON on stdout: show it, and keep its last line.
        cut -c1-400 "$out"
        echo "$label: $why $(tail -n 1 "$out" | cut -c1-300)" | tee -a "$failures"
    fi
    rm -f "$out"
}

has() { case " $2 " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

for circuit in $CIRCUITS; do
    for log in $LOGS; do
        params=$KILN_CACHE/$circuit-2^$log.params
        if [ ! -s "$params.sha256" ] && [ "$SECONDS" -lt "$BUDGET" ]; then
            echo "-- setup $circuit 2^$log"
            if ! "$KILN" setup --backend "$SETUP_BACKEND" --circuit "$circuit" --log-size "$log" --setup-seed $SETUP_SEED \
                --out "$params" --json; then
                echo "setup $circuit 2^$log: failed" | tee -a "$failures"; continue
            fi
            # kiln bench's cache record: "<sha256> <bytes>".
            echo "$(sha256sum "$params" | cut -d' ' -f1) $(stat -c %s "$params")" > "$params.sha256"
        fi
        for batch in $BATCHES; do
            for prover in $PROVERS; do
                case $prover in
                    kiln-cpu|bellperson-cpu) has "$log" "$CPU_LOGS" && has "$batch" "$CPU_BATCHES" || continue ;;
                esac
                label="$prover $circuit 2^$log batch $batch"
                case $prover in
                    kiln-gpu|kiln-cpu)
                        backend=${prover#kiln-}
                        if [ "$batch" = 1 ]; then
                            cell "$label" "$KILN" bench --backend "$backend" --circuit "$circuit" --log-size "$log" \
                                --generic-witness --repeat "$REPEAT" --json
                        else
                            cell "$label" "$KILN" bench --backend "$backend" --circuit "$circuit" --log-size "$log" \
                                --partitions "$batch" --generic-witness --repeat "$REPEAT" --json
                        fi ;;
                    bellperson-cpu|bellperson-cuda)
                        cell "$label" "$peers_cuda" prove --prover "$prover" --params "$params" --circuit "$circuit" \
                            --log-size "$log" --batch "$batch" --repeat "$REPEAT" ;;
                    supraseal-c2)
                        cell "$label" "$peers_supra" prove --prover "$prover" --params "$params" --circuit "$circuit" \
                            --log-size "$log" --batch "$batch" --repeat "$REPEAT" ;;
                    *) echo "unknown prover $prover (kiln-gpu kiln-cpu bellperson-cpu bellperson-cuda supraseal-c2)"; exit 2 ;;
                esac
            done
        done
    done
done
table
