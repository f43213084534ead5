#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's second command, and what CI runs: install what is missing,
# build with warnings as errors, run every test; then build the tools and
# tests with AddressSanitizer and UndefinedBehaviorSanitizer and run the
# tests again (the preload library and the target programs are never
# sanitized: they run inside other programs).
#
# Each build's tests run in two ctest calls: the tests labelled `timing`
# (checks that depend on how a shared machine schedules them) with
# `--repeat until-pass:3`, the rest once (tests/README.md). After each call
# the skipped tests are listed with the reason they printed ('SKIP: ...'),
# and so are the groups of checks skipped inside tests that ran. deps.sh
# installs every dependency, so here a skipped test fails the run, unless
# MEMREC_ALLOW_SKIP=1 (any skip allowed) or MEMREC_ALLOW_SKIP lists the
# tests allowed to skip (names separated by spaces or commas).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs="$(nproc)"
allow="${MEMREC_ALLOW_SKIP:-}"
all_skips=()

# skips BUILD_DIR CTEST_OUTPUT [repeated]: lists the skipped tests of the last ctest
# call and their reasons (from Testing/Temporary/LastTest.log: ctest marks a
# skipped test only in its own output) and the skipped groups of checks.
skips() {
    local dir="$1" out="$2" log="$1/Testing/Temporary/LastTest.log" names name reason
    names="$(sed -n 's/^[[:space:]]*[0-9]\+ - \(.*\) (Skipped)$/\1/p' "$out" | sort -u)"
    for name in $names; do
        reason="$(awk -v t="$name" '
            $0 ~ "^[0-9]+/[0-9]+ Testing: " { cur = $3 }
            cur == t && /^SKIP: / { sub(/^SKIP: /, ""); r = $0 }
            END { print r }' "$log")"
        [ -n "$reason" ] || reason="(no 'SKIP: reason' line printed)"
        echo "memrec: $dir: skipped test $name: $reason"
        all_skips+=("$name")
    done
    awk '$0 ~ "^[0-9]+/[0-9]+ Testing: " { cur = $3 }
         /^SKIP .*\(skipped: / { print "memrec: '"$dir"': skipped group in " cur ": " substr($0, 6) }' "$log" | sort -u
    # A timing test that failed before it passed: said, not hidden.
    [ "${3:-}" = repeated ] || return 0
    awk '/\*\*\*Failed/ && / Test +#/ { for (i = 1; i <= NF; i++) if ($i ~ /^#/) { print $(i + 1); break } }' "$out" |
        sed 's/:$//' | sort -u | while read -r name; do
            echo "memrec: $dir: $name failed at least once (label timing: run up to three times)"
        done
}

# run_tests BUILD_DIR: the non-timing tests once, the timing ones up to three times.
run_tests() {
    local dir="$1" out rc=0
    out="$(mktemp)"
    ctest --test-dir "$dir" --output-on-failure -LE timing 2>&1 | tee "$out" || rc=1
    skips "$dir" "$out"
    ctest --test-dir "$dir" --output-on-failure -L timing --repeat until-pass:3 2>&1 | tee "$out" || rc=1
    skips "$dir" "$out" repeated
    rm -f "$out"
    return $rc
}

# check_skips: fails when a test skipped that is not allowed to.
check_skips() {
    local bad=() name
    for name in "${all_skips[@]+"${all_skips[@]}"}"; do
        if [ "$allow" = 1 ] || [[ " ${allow//,/ } " == *" $name "* ]]; then
            continue
        fi
        bad+=("$name")
    done
    if [ ${#bad[@]} -gt 0 ]; then
        echo "memrec: tests skipped with every dependency installed: ${bad[*]}" >&2
        echo "memrec: (MEMREC_ALLOW_SKIP=1, or MEMREC_ALLOW_SKIP='${bad[*]}', allows them)" >&2
        return 1
    fi
}

status=0
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMREC_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
run_tests build || status=1
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMEMREC_WERROR=ON -DMEMREC_SANITIZE=address,undefined >/dev/null
cmake --build build-asan -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_tests build-asan || status=1
if [ ${#all_skips[@]} -gt 0 ]; then
    echo "memrec: skipped tests (plain and sanitized builds): ${all_skips[*]}"
fi
check_skips || status=1
if [ $status -ne 0 ]; then
    echo "memrec: some tests failed or skipped (see above)" >&2
    exit 1
fi
echo "memrec: all tests passed (plain and sanitized builds)"
