#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's second command, and what CI runs: install what is missing,
# build with warnings as errors, run every test; then build the tools and
# tests with AddressSanitizer and UndefinedBehaviorSanitizer and run the
# tests again (the preload library and the target programs are never
# sanitized: they run inside other programs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs="$(nproc)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMREC_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMEMREC_WERROR=ON -DMEMREC_SANITIZE=address,undefined >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure
echo "memrec: all tests passed (plain and sanitized builds)"
