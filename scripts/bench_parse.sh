#!/usr/bin/env bash
# Matrix Market parser benchmark: sparsecast's reader (file -> CSR) against scipy.io.mmread
# (C++ fast_matrix_market, file -> COO) and mmread + tocsr, on the same two cores, from a warm
# page cache, after one discarded warm-up run of each. Prints each run and the medians (Markdown) with the machine load.
#
#   scripts/bench_parse.sh            # BENCH_DIR=/tmp/sparsecast-bench RUNS=3 CORES=0,1
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${BENCH_DIR:-/tmp/sparsecast-bench}
RUNS=${RUNS:-3}
CORES=${CORES:-0,1}
FILE=$DIR/random_1M_10M.mtx
RESULTS=$DIR/results.jsonl
mkdir -p "$DIR"

python3 -c "import scipy" 2>/dev/null || pip install --quiet scipy
if [ ! -f "$FILE" ]; then
    echo "generating $FILE ..."
    python3 scripts/bench_parse.py gen "$FILE"
fi
cargo build --release --quiet --example mm_read
BIN=target/release/examples/mm_read

BYTES=$(stat -c %s "$FILE")
echo "file: $FILE ($BYTES bytes), $(head -c 400 "$FILE" | grep -v '^%' | head -1) (rows cols entries)"
cat "$FILE" > /dev/null # warm the page cache

# run TOOL CMD...: time CMD (which prints one JSON line) and append it with bytes and max RSS.
run() {
    local tool=$1
    shift
    /usr/bin/time -v -o "$DIR/time.txt" taskset -c "$CORES" "$@" > "$DIR/out.json"
    python3 - "$tool" "$BYTES" "$DIR/time.txt" "$DIR/out.json" >> "$RESULTS" <<'PY'
import json, sys
tool, nbytes, timing, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t = {}
for line in open(timing):
    k, _, v = line.strip().rpartition(": ")
    t[k] = v
r = json.loads(open(out).read().strip().splitlines()[-1])
r.update(
    tool=r.get("tool", tool),
    bytes=nbytes,
    max_rss_kb=int(t["Maximum resident set size (kbytes)"]),
    process_cpu_s=float(t["User time (seconds)"]) + float(t["System time (seconds)"]),
)
print(json.dumps(r))
PY
    tail -1 "$RESULTS"
}

: > "$RESULTS"
echo "load before: $(uptime)"
# One discarded warm-up run of each reader: the first run after a build (or after any large
# free) is up to 0.15 s slower on this VM, since the kernel hands out huge pages that the
# hypervisor has to back again; Python also warms its imports.
"$BIN" "$FILE" > /dev/null
python3 scripts/bench_parse.py scipy "$FILE" > /dev/null
for i in $(seq "$RUNS"); do
    run sparsecast "$BIN" "$FILE"
    run sparsecast-f32 "$BIN" "$FILE" --f32
    run scipy.mmread python3 scripts/bench_parse.py scipy "$FILE"
    run scipy.mmread+tocsr python3 scripts/bench_parse.py scipy "$FILE" --tocsr
done
echo "load after: $(uptime)"
/usr/bin/time -v -o "$DIR/time.txt" taskset -c "$CORES" python3 -c "import scipy.io, scipy.sparse"
echo "python + scipy import alone: max RSS $(awk '/Maximum resident set size/ {print $NF}' "$DIR/time.txt") KiB," \
    "CPU $(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$DIR/time.txt") s"
python3 scripts/bench_parse.py summary "$RESULTS"
