# SPDX-License-Identifier: MIT
"""Direct mappings: records tests/progs/mapper (see its step list and
tests/progs/EXPECTED.md) and checks the mapped figures, the site that
mapped 40 MiB inside libmapper.so, that the heap figures are exactly those
of the program's mallocs (glibc's own mmap for malloc(64 MiB) is not
counted as mapped), and that sampling keeps every mapping."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import *  # noqa: E402,F403

MiB = 1048576
KiB = 1024
PEAK = 40 * MiB + 512 * KiB + 6 * MiB + 48 * KiB + 256 * KiB  # 49070080
END = 40 * MiB + 512 * KiB + 48 * KiB + 192 * KiB  # 42713088

d = tmpdir()
out = os.path.join(d, "mapper.zst")
r = record([prog("mapper")], out)
check_eq(r.returncode, 0, "mapper: memrec exit status")
j = report_json(out)
check(j["complete"], "mapper: recording complete")

# Heap: exactly the program's three mallocs.
for field, value in (("allocations", 3), ("temporary", 2), ("peak_heap_bytes", 67118865),
                     ("leaked_bytes", 10001), ("leaked_allocations", 1), ("allocated_bytes", 67138866),
                     ("unmatched_frees", 0)):
    check_eq(j[field], value, "mapper: heap %s" % field)

# Mapped memory, beside the heap.
check_eq(PEAK, 49070080, "mapper: the expected peak is 49070080")
check_eq(END, 42713088, "mapper: the expected end is 42713088")
check_eq(j["mapped_peak_bytes"], PEAK, "mapper: mapped_peak_bytes")
check_eq(j["mapped_at_end_bytes"], END, "mapper: mapped_at_end_bytes")
check_eq(j["mapping_calls"], 5, "mapper: mapping_calls")

sec = j["sections"]["peak_mapped"]
check_eq([e["mapped_peak_bytes"] for e in sec], [40 * MiB, 6 * MiB, 512 * KiB, 256 * KiB, 48 * KiB],
         "mapper: sites by mapped bytes at the mapped peak")
check_eq([e["mapped_at_end_bytes"] for e in sec], [40 * MiB, 0, 512 * KiB, 192 * KiB, 48 * KiB],
         "mapper: each site's bytes still mapped at the end")
check_eq([e["mapping_calls"] for e in sec], [1, 1, 1, 1, 1], "mapper: one mapping call per site")
check(all(e["calls"] == 0 and e["peak_bytes"] == 0 for e in sec), "mapper: mapping sites have no heap cost")
lib_line = marker_line("tests/progs/mapper_lib.c", "LINE_LIB_MAP")
check(sec and has_frame(sec[0], "mapper_lib_map", "mapper_lib.c", lib_line),
      "mapper: 41943040 bytes at mapper_lib_map, mapper_lib.c:%d" % lib_line)
check(sec and any(f["function"] == "mapper_lib_map" and (f["module"] or "").endswith("libmapper.so")
                  for f in sec[0]["frames"]), "mapper: that frame is in libmapper.so")
for i, marker in ((1, "LINE_MAP_B"), (2, "LINE_MAP_A"), (3, "LINE_MAP_C"), (4, "LINE_SBRK")):
    line = marker_line("tests/progs/mapper.c", marker)
    check(len(sec) > i and has_frame(sec[i], "main", "mapper.c", line),
          "mapper: site %d is main at mapper.c:%d" % (i, line))
# No mapping site in the heap sections, no heap site among the mappings.
heap_sites = sum(len(j["sections"][k]) for k in ("most_calls", "peak_consumers", "most_allocated"))
check_eq(heap_sites, 3 + 2 + 3, "mapper: heap sections hold only the malloc sites (3 calls, 2 at the peak, 3 allocated)")

code, text, err = report_text(out)
check(code == 0 and "peak mapped memory (mmap, mremap, brk; not heap): 46.80 MiB (49070080 bytes)" in text,
      "mapper: text summary line for the mapped peak")
check("still mapped at the end: 40.73 MiB (42713088 bytes), 5 mapping calls" in text,
      "mapper: text summary line for the end")
check("\nPEAK MAPPED MEMORY\n  40.00 MiB (41943040 bytes) mapped at the mapped peak" in text,
      "mapper: text section PEAK MAPPED MEMORY led by the 40 MiB site")

# Sampling: the mallocs are sampled, the mappings are all recorded.
out = os.path.join(d, "mapper-sampled.zst")
check_eq(record([prog("mapper")], out, extra=("--sample-rate", "1000000")).returncode, 0,
         "mapper sampled: memrec exit status")
js = report_json(out)
check_eq(js["mapped_peak_bytes"], PEAK, "mapper sampled: mapped_peak_bytes")
check_eq(js["mapped_at_end_bytes"], END, "mapper sampled: mapped_at_end_bytes")
check_eq(js["mapping_calls"], 5, "mapper sampled: mapping_calls")
check_eq(js["allocations"], 3, "mapper sampled: exact allocation calls")

# A program that maps nothing reports zeros.
out = os.path.join(d, "chain.zst")
check_eq(record([prog("chain")], out).returncode, 0, "chain: memrec exit status")
jc = report_json(out)
check_eq((jc["mapped_peak_bytes"], jc["mapped_at_end_bytes"], jc["mapping_calls"], len(jc["sections"]["peak_mapped"])),
         (0, 0, 0, 0), "chain: nothing mapped")
done()
