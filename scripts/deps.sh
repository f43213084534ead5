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
pkgs=(build-essential g++ cmake pkg-config libzstd-dev libdw-dev libelf-dev libunwind-dev libncurses-dev python3
    libgoogle-perftools4 libjemalloc2 libtcmalloc-minimal4 tmux zlib1g-dev protobuf-compiler python3-protobuf valgrind)
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
