#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of tests/fuzz/ for a given time each, one
# after the other (one core), with memory and time limits as tight as
# legitimate recordings allow, then runs the large generated inputs of
# tests/data/make_hostile.py --large and the hostile corpus once each under
# the same limits. Prints one line of figures per target and per input.
#
#   bench/fuzz.sh [SECONDS_PER_TARGET] [WORK_DIR]
#   FUZZ_TARGETS="reader report" bench/fuzz.sh ...   (some targets only)
#   FUZZ_REBUILD=0 bench/fuzz.sh ...                  (use build-fuzz/ as it is)
#
# SECONDS_PER_TARGET defaults to 600. The libFuzzer build goes to
# build-fuzz/ (clang, -DMEMREC_FUZZ=ON); the run's corpora, logs and any
# crash-* / timeout-* / oom-* artifacts go to WORK_DIR (default
# /tmp/memrec-fuzz). Exit status 1 when anything was found.
set -u
SECS=${1:-600}
WORK=${2:-/tmp/memrec-fuzz}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$SRC/build-fuzz"
# Limits: no input may make a tool allocate more than a legitimate zstd
# window (128 MiB) and its buffers in one block, grow the process past
# 1 GiB resident (libFuzzer's corpus and ASan's shadow and 64 MiB
# quarantine included: a run of millions of inputs sits at 300-500 MiB), or
# spend 10 s on one input.
MALLOC_MB=256
RSS_MB=1024
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
TIMEOUT_S=10
MAX_LEN=8192

if [ ! -x "$BUILD/tests/fuzz_reader" ] || [ "${FUZZ_REBUILD:-1}" = 1 ]; then
    CC=clang cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMREC_FUZZ=ON >/dev/null || exit 2
    cmake --build "$BUILD" -j1 --target fuzz_reader fuzz_record fuzz_report >/dev/null || exit 2
fi
mkdir -p "$WORK"
found=0
for target in ${FUZZ_TARGETS:-reader record report}; do
    seeds=reader
    [ "$target" = record ] && seeds=record
    dir="$WORK/$target"
    mkdir -p "$dir/corpus"
    cp -n "$SRC/tests/fuzz/corpus/$seeds/"* "$dir/corpus/"
    log="$dir/fuzz.log"
    "$BUILD/tests/fuzz_$target" -max_total_time="$SECS" -max_len=$MAX_LEN -malloc_limit_mb=$MALLOC_MB \
        -rss_limit_mb=$RSS_MB -timeout=$TIMEOUT_S -print_final_stats=1 -artifact_prefix="$dir/" \
        "$dir/corpus" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    last=$(grep -E "^#[0-9]+[[:space:]]+(DONE|NEW|REDUCE|pulse)" "$log" | tail -1)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\) .*/\1/p')
    corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p')
    arts=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    echo "fuzz_$target: ${SECS}s, exit $rc, ${execs:-?} executions (${rate:-?}/s), cov ${cov:-?}, features ${ft:-?}, corpus ${corp:-?}, findings $arts"
    if [ "$rc" != 0 ] || [ "$arts" != 0 ]; then
        found=1
    fi
done

# Large inputs: super-linear cost shows only on inputs larger than
# libFuzzer's mutations reach. Each runs once through fuzz_report (the whole
# memprint path) under the same memory limit and a 60 s time limit.
large="$WORK/large"
python3 "$SRC/tests/data/make_hostile.py" --large "$large" >/dev/null || exit 2
for f in "$large"/*.mrec "$SRC"/tests/fuzz/corpus/hostile/*; do
    start=$(date +%s.%N)
    "$BUILD/tests/fuzz_report" -rss_limit_mb=$RSS_MB -malloc_limit_mb=$MALLOC_MB -timeout=60 "$f" >"$WORK/large.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    printf '%s: %d bytes, exit %d, %.2f s\n' "$(basename "$f")" "$(stat -c %s "$f")" "$rc" "$(echo "$end - $start" | bc)"
    if [ "$rc" != 0 ]; then
        found=1
        cp "$WORK/large.log" "$WORK/large-$(basename "$f").log"
    fi
done
exit $found
