#!/bin/sh
# SPDX-License-Identifier: MIT
# memcheck.sh MEMREC MEMPRINT PROGRAM [memprint --check options...]
# Records PROGRAM with memrec, then runs memprint's gate on the recording.
# The exit status is the program's when it fails, else memprint's:
# 0 every check holds, 1 one fails, 2 a bad condition, 3 an incomplete
# recording, 4 an unreadable one.
set -e
memrec=$1 memprint=$2 program=$3
shift 3
out="$(basename "$program").memrec.zst"
rm -f "$out" # memrec never overwrites a file
"$memrec" -q -o "$out" "$program"
exec "$memprint" "$@" "$out"
