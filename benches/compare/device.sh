#!/usr/bin/env bash
# Runs the NumPy / PyTorch comparison at 16, 8, 2 and 1 threads on a machine without a Rust
# toolchain or network, and writes the tables to $OUT (default: the current directory).
#
#   bash benches/compare/device.sh DIR
#
# DIR holds the prebuilt release `symshape-compare` binary (cargo build --release -p benches
# --bin symshape-compare) and, optionally, compare.py (else the one beside this script).
# `python3` must have numpy and torch. The runs share a budget of COMPARE_BUDGET_S seconds
# (default 225, under 4 minutes with the start): each thread count gets an equal share of
# what is left, and rows are written as they are measured, so a run cut short keeps the rows
# it finished. COMPARE_THREADS and COMPARE_RUNS (timed runs per workload, default 7) override
# the thread counts and the runs.
set -uo pipefail

dir=${1:?usage: device.sh DIR (holding symshape-compare and optionally compare.py)}
bin="$dir/symshape-compare"
driver="$dir/compare.py"
[ -f "$driver" ] || driver="$(cd "$(dirname "$0")" && pwd)/compare.py"
out=${OUT:-.}
threads=(${COMPARE_THREADS:-16 8 2 1})
runs=${COMPARE_RUNS:-7}
budget=${COMPARE_BUDGET_S:-225}
mkdir -p "$out"
if ! "$bin" list > /dev/null; then
    echo "device.sh: cannot run $bin (missing, or this machine's glibc is older than 2.34, which it was linked against)" >&2
    exit 1
fi
if ! python3 -c 'import numpy, torch' > /dev/null; then
    echo "device.sh: python3 cannot import numpy and torch" >&2
    exit 1
fi

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "nproc: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo
    python3 -c 'import numpy, torch, sys; print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__)'
    uptime
} > "$out/compare-env.txt" 2>&1
cat "$out/compare-env.txt"

status=0
left_counts=${#threads[@]}
for n in "${threads[@]}"; do
    share=$(( (budget - SECONDS) / left_counts ))
    left_counts=$((left_counts - 1))
    if [ "$share" -lt 5 ]; then
        echo "== $n thread(s): skipped, the time budget is spent"
        status=1
        continue
    fi
    echo "== $n thread(s), at most ${share}s"
    timeout "$share" python3 "$driver" --bin "$bin" --threads "$n" --runs "$runs" \
        > "$out/compare-threads-$n.md" 2> "$out/compare-threads-$n.err"
    rc=$?
    cat "$out/compare-threads-$n.md"
    if [ "$rc" -ne 0 ]; then
        echo "exit status $rc (124: cut off after ${share}s)"
        cat "$out/compare-threads-$n.err"
        status=1
    fi
done
echo "total ${SECONDS}s"
exit "$status"
