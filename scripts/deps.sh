#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages memrec needs to build and test, if missing.
# Runs apt-get only when something is missing (as root, or through sudo).
set -euo pipefail
# libgoogle-perftools4 and libjemalloc2: the other allocators tests/integration/test_allocators.py
# records under; libtcmalloc-minimal4: the tcmalloc test_alloc_time.py compares (docs/allocators.md);
# tmux: tests/integration/test_memtui.py drives memtui in it.
# zlib1g-dev: the gzip layer of memprint --pprof. protobuf-compiler, python3-protobuf and valgrind (ms_print):
# tests/integration/test_exports.py reads the --pprof and --massif files with them.
# heaptrack: the cross-check of test_heaptrack.py and test_memprint_analyses.py (skipped without it).
# zstd (the command): test_time.py, test_rss_heap.py and test_pack.py decompress recordings with it;
# strace: parts of test_attach.py and test_pack.py; nodejs: test_memprint_analyses.py runs the svg's
# script; binutils (readelf): test_exports.py reads the build id. scripts/test.sh fails on a skipped
# test, so a test's dependency belongs here.
pkgs=(build-essential g++ cmake pkg-config libzstd-dev libdw-dev libelf-dev libunwind-dev libncurses-dev python3
    libgoogle-perftools4 libjemalloc2 libtcmalloc-minimal4 tmux zlib1g-dev protobuf-compiler python3-protobuf valgrind
    heaptrack zstd strace nodejs binutils)
missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "memrec: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
