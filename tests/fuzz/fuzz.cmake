# SPDX-License-Identifier: MIT
#
# Fuzz targets of the format library and the analyzer's loading path
# (tests/fuzz/). Included from tests/CMakeLists.txt.
#
# Always built, with any compiler:
#   fuzz_driver_reader, fuzz_driver_record, fuzz_driver_report  each fuzz target linked with
#       driver.c, a plain main() that runs it on files and directories
#   ctest fuzz_replay_reader, fuzz_replay_record, fuzz_replay_report (label fuzz)  replay
#       tests/fuzz/corpus with them, so every test run exercises the targets
#       (under MEMREC_SANITIZE when set)
#
# With -DMEMREC_FUZZ=ON and clang, the libFuzzer targets:
#   fuzz_reader, fuzz_record, fuzz_report  libFuzzer + ASan + UBSan; the code under test
#       is compiled again for them with coverage instrumentation
#   fuzz_run  runs each for MEMREC_FUZZ_SECONDS (default 60) on a copy of
#       the corpus in the build tree; crashes are written next to it
#       (fuzz-<target>/crash-*): move the reproducer to tests/fuzz/crashes/
#       and, once fixed, to tests/fuzz/corpus/ so the replay keeps it fixed.
#
# bench/fuzz.sh runs every target for a given time (default 10 min) with
# memory and time limits, then the large generated inputs of
# tests/data/make_hostile.py --large; its figures are in docs/fuzzing.md.
#
# tests/fuzz/make_corpus.py tells how the seed corpus was made.

option(MEMREC_FUZZ "Build the libFuzzer targets fuzz_reader, fuzz_record and fuzz_report (needs clang)" OFF)
set(MEMREC_FUZZ_SECONDS 60 CACHE STRING "Seconds of fuzzing per target for the fuzz_run target")

# This file's directory (CMAKE_CURRENT_SOURCE_DIR is the includer's).
set(memrec_fuzz_dir "${CMAKE_CURRENT_LIST_DIR}")
set(memrec_fuzz_targets reader record report)
# The targets that read whole recordings share fuzz_common.c.
set(memrec_fuzz_common_reader "${CMAKE_CURRENT_LIST_DIR}/fuzz_common.c")
set(memrec_fuzz_common_report "${CMAKE_CURRENT_LIST_DIR}/fuzz_common.c")

# ---- replay drivers: plain executables, run by ctest ----

foreach(target IN LISTS memrec_fuzz_targets)
    add_executable(fuzz_driver_${target} "${memrec_fuzz_dir}/driver.c" "${memrec_fuzz_dir}/fuzz_${target}.c"
        ${memrec_fuzz_common_${target}})
    target_include_directories(fuzz_driver_${target} PRIVATE "${PROJECT_SOURCE_DIR}/format")
    # memanalysis brings memfmt, memfmt_record (format/ headers, zstd) and memutil.
    target_link_libraries(fuzz_driver_${target} PRIVATE memanalysis memfmt memutil)
    target_compile_options(fuzz_driver_${target} PRIVATE ${MEMREC_WARNINGS})
    memrec_sanitize(fuzz_driver_${target})
    add_test(NAME fuzz_replay_${target} COMMAND fuzz_driver_${target} "${memrec_fuzz_dir}/corpus")
    set_tests_properties(fuzz_replay_${target} PROPERTIES LABELS fuzz TIMEOUT 300)
endforeach()

# ---- libFuzzer targets ----

if(MEMREC_FUZZ AND NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(WARNING "memrec: MEMREC_FUZZ needs clang for libFuzzer, the C compiler is "
                    "${CMAKE_C_COMPILER_ID}: fuzz_reader and fuzz_record are not built "
                    "(configure with CC=clang)")
elseif(MEMREC_FUZZ)
    set(memrec_fuzz_san -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)

    # The project libraries carry no coverage instrumentation (and may carry
    # other sanitizers), so libFuzzer would fuzz them blind: compile their
    # sources once more, instrumented. The lists come from the targets, so a
    # file added to a library is fuzzed without a change here.
    set(memrec_fuzz_sources "")
    foreach(lib IN ITEMS memfmt_record memfmt memaccounting memanalysis memutil)
        get_target_property(lib_sources ${lib} SOURCES)
        get_target_property(lib_dir ${lib} SOURCE_DIR)
        foreach(src IN LISTS lib_sources)
            if(NOT IS_ABSOLUTE "${src}")
                set(src "${lib_dir}/${src}")
            endif()
            list(APPEND memrec_fuzz_sources "${src}")
        endforeach()
    endforeach()
    add_library(memrec_fuzz_code STATIC ${memrec_fuzz_sources})
    target_include_directories(memrec_fuzz_code PUBLIC
        "${PROJECT_SOURCE_DIR}/format" "${PROJECT_SOURCE_DIR}/analyzer" "${PROJECT_SOURCE_DIR}/util")
    target_link_libraries(memrec_fuzz_code PUBLIC PkgConfig::ZSTD PkgConfig::LIBDW stdc++)
    target_compile_options(memrec_fuzz_code PRIVATE -fsanitize=fuzzer-no-link ${memrec_fuzz_san})

    set(memrec_fuzz_runs "")
    foreach(target IN LISTS memrec_fuzz_targets)
        add_executable(fuzz_${target} "${memrec_fuzz_dir}/fuzz_${target}.c" ${memrec_fuzz_common_${target}})
        target_link_libraries(fuzz_${target} PRIVATE memrec_fuzz_code)
        target_compile_options(fuzz_${target} PRIVATE ${MEMREC_WARNINGS} -fsanitize=fuzzer ${memrec_fuzz_san})
        target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer ${memrec_fuzz_san})

        # New inputs go to the copy, never into the source tree. A 256 MiB
        # malloc limit: no input may make the tools allocate more than a
        # legitimate zstd window (128 MiB, MEMFMT_MAX_WINDOW_LOG) and its
        # buffers.
        # Seeds: corpus/record/ for fuzz_record, corpus/reader/ for the
        # others; corpus/hostile/ is replayed by ctest but seeds nothing
        # (its large inputs would slow every mutation). Inputs up to 8 KiB:
        # bench/fuzz.sh runs the large generated inputs separately.
        set(seeds reader)
        if(target STREQUAL "record")
            set(seeds record)
        endif()
        set(work "${CMAKE_CURRENT_BINARY_DIR}/fuzz-${target}")
        list(APPEND memrec_fuzz_runs
            COMMAND "${CMAKE_COMMAND}" -E make_directory "${work}/corpus"
            COMMAND "${CMAKE_COMMAND}" -E copy_directory "${memrec_fuzz_dir}/corpus/${seeds}" "${work}/corpus"
            COMMAND $<TARGET_FILE:fuzz_${target}> -max_total_time=${MEMREC_FUZZ_SECONDS} -malloc_limit_mb=256
                    -rss_limit_mb=1024 -max_len=8192 -timeout=10
                    -artifact_prefix=${work}/ -print_final_stats=1 "${work}/corpus")
    endforeach()
    add_custom_target(fuzz_run ${memrec_fuzz_runs}
        DEPENDS fuzz_reader fuzz_record fuzz_report
        COMMENT "Fuzzing each target for ${MEMREC_FUZZ_SECONDS} s"
        VERBATIM)
endif()
