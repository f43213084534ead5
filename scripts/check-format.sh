#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails if a C source differs from what clang-format makes of it
# (.clang-format at the top), or has trailing whitespace or tabs.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' '*.cpp')
status=0
if ! clang-format --style=file --dry-run -Werror $files; then
    status=1
fi
if grep -nE '[[:space:]]+$' $files; then
    echo "trailing whitespace above" >&2
    status=1
fi
if grep -nP '\t' $files; then
    echo "tabs above" >&2
    status=1
fi
exit $status
