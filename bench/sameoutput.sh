#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/sameoutput.sh: a refactoring's check that behaviour did not change.
#
#   bash bench/sameoutput.sh record DIR BUILD    record the workloads once into DIR
#   bash bench/sameoutput.sh dump DIR BUILD OUT  every analysis of them, by BUILD's tools, into OUT
#   diff -r OUT_BEFORE OUT_AFTER                 must print nothing
#
# The recordings are made once and read by both builds, so the outputs depend
# on the tools only: memprint's JSON report, its other modes (folded, svg,
# sizes, timeline, threads, alloc-time, diff, check) and a memtui --batch
# capture of every view at 120x40 and 80x24.
set -euo pipefail
mode="${1:?usage: sameoutput.sh record|dump DIR BUILD [OUT]}"
dir="$(realpath -m "${2:?DIR}")"
build="$(realpath "${3:?BUILD}")"
repo="$(cd "$(dirname "$0")/.." && pwd)"

if [ "$mode" = record ]; then
    mkdir -p "$dir/progs"
    make -s -C "$repo/../shared/bench" O="$dir/progs" >/dev/null
    export MEMREC_SAMPLE_SEED=1
    "$build/memrec" -q -o "$dir/churn.zst" "$dir/progs/churn" 200000
    "$build/memrec" -q -o "$dir/tree.zst" "$dir/progs/tree" 100000
    "$build/memrec" -q -o "$dir/mt.zst" "$dir/progs/mt" 4 50000
    "$build/memrec" -q -o "$dir/cpp.zst" "$dir/progs/cpp" 1 20000
    "$build/memrec" -q -o "$dir/deep.zst" "$dir/progs/deep" 50000
    "$build/memrec" -q --time -o "$dir/churn_time.zst" "$dir/progs/churn" 100000
    "$build/memrec" -q -s 64K -o "$dir/tree_sampled.zst" "$dir/progs/tree" 100000
    "$build/memrec" -q -o "$dir/example.zst" "$build/example" >/dev/null
    exit 0
fi

out="$(realpath -m "${4:?OUT}")"
mkdir -p "$out"
mp="$build/memprint"
mt="$build/memtui"
for f in "$dir"/*.zst; do
    n="$(basename "$f" .zst)"
    "$mp" --json "$f" >"$out/$n.json" 2>&1 || true
    "$mp" "$f" >"$out/$n.txt" 2>&1 || true
    "$mp" --group site --threads "$f" >"$out/$n.site.txt" 2>&1 || true
    "$mp" --group function --json "$f" >"$out/$n.function.json" 2>&1 || true
    "$mp" --folded - -c calls "$f" >"$out/$n.folded" 2>&1 || true
    "$mp" --svg - --reverse "$f" >"$out/$n.svg" 2>&1 || true
    "$mp" --sizes --by-stack "$f" >"$out/$n.sizes" 2>&1 || true
    "$mp" --timeline --json --points 50 "$f" >"$out/$n.timeline.json" 2>&1 || true
    "$mp" --threads --json "$f" >"$out/$n.threads.json" 2>&1 || true
    "$mp" --alloc-time "$f" >"$out/$n.alloctime" 2>&1 || true
    "$mp" --check 'leaked_bytes==0' --check 'peak_heap_bytes<1G' "$f" >"$out/$n.check" 2>&1 || echo "exit $?" >>"$out/$n.check"
    "$mp" --from 0.01 --to 0.2 --json "$f" >"$out/$n.window.json" 2>&1 || true
    "$mp" --massif - "$f" >"$out/$n.massif" 2>&1 || true
    for size in 120x40 80x24; do
        "$mt" --batch --size "$size" "$f" >"$out/$n.tui.$size.1" 2>&1 || true
        for v in 2 3 4 5 6 7; do
            "$mt" --batch --size "$size" --keys "$v Down Down Enter Down" "$f" >"$out/$n.tui.$size.$v" 2>&1 || true
        done
        "$mt" --batch --size "$size" --keys "?" "$f" >"$out/$n.tui.$size.help" 2>&1 || true
        "$mt" --batch --size "$size" --keys "2 / malloc Enter n d" "$f" >"$out/$n.tui.$size.search" 2>&1 || true
        "$mt" --batch --size "$size" --keys "4 Enter Down Enter" "$f" >"$out/$n.tui.$size.callers" 2>&1 || true
        "$mt" --batch --size "$size" -c calls --keys "3 c c s" "$f" >"$out/$n.tui.$size.costs" 2>&1 || true
    done
done
"$mp" --diff "$dir/churn.zst" "$dir/churn_time.zst" --json >"$out/diff.json" 2>&1 || true
"$mp" --diff "$dir/churn.zst" "$dir/churn_time.zst" --alloc-time >"$out/diff.alloctime" 2>&1 || true
# The paths of the build differ between runs: keep the outputs comparable.
sed -i "s|$build|BUILD|g; s|$dir|DIR|g" "$out"/* 2>/dev/null || true
