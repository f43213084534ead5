#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's first command: install what is missing, build, record the
# bundled example program and print its report, then say how to browse it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
out="$(mktemp -d)/memrec.example.zst"
build/memrec -o "$out" build/example
build/memprint -n 3 "$out"
echo
echo "To browse this recording in the terminal: build/memtui $out"
