# SPDX-License-Identifier: MIT
#
# Target programs for the integration tests: tiny programs whose allocation
# figures are known by construction (see EXPECTED.md next to this file).
# Included from tests/CMakeLists.txt. Each program becomes the target
# prog_<name>, written as ${CMAKE_BINARY_DIR}/tests/progs/<name>.
#
# The programs must allocate exactly what their sources say, so they are
# built without anything that adds allocations or changes the code the
# expectations were measured on: no sanitizers, no LTO, always -O2 -g
# whatever the build type. The options are appended after the project's,
# so they win. Coverage flags (--coverage) must not reach them either: the
# gcov runtime allocates when it writes its data at exit.
#
# Sets for the including file:
#   MEMREC_PROGS_DIR     directory holding the built programs
#   MEMREC_PROGS         list of the prog_<name> targets that are built
#   MEMREC_HAVE_PROG_CXX ON when prog_cxx is built (needs a C++17 compiler)

find_package(Threads REQUIRED)

set(MEMREC_PROGS_DIR "${CMAKE_BINARY_DIR}/tests/progs")
set(MEMREC_PROGS "")
# Saved here: inside a function CMAKE_CURRENT_LIST_DIR names the caller's file.
set(memrec_progs_src_dir "${CMAKE_CURRENT_LIST_DIR}")

function(memrec_add_prog name source)
    add_executable(prog_${name} "${memrec_progs_src_dir}/${source}")
    set_target_properties(prog_${name} PROPERTIES
        OUTPUT_NAME "${name}"
        RUNTIME_OUTPUT_DIRECTORY "${MEMREC_PROGS_DIR}"
        INTERPROCEDURAL_OPTIMIZATION OFF)
    target_compile_options(prog_${name} PRIVATE -O2 -g -fno-sanitize=all)
    target_link_options(prog_${name} PRIVATE -fno-sanitize=all)
    set(MEMREC_PROGS ${MEMREC_PROGS} prog_${name} PARENT_SCOPE)
endfunction()

foreach(prog IN ITEMS chain aligned threads atexit_free inlined nothing temporaries deep sleeper slow sampled stress phases export_heap wrappers
                     execself forker fdcloser filler)
    memrec_add_prog(${prog} "${prog}.c")
    set_target_properties(prog_${prog} PROPERTIES
        C_STANDARD 11
        C_STANDARD_REQUIRED ON
        C_EXTENSIONS ON)
endforeach()
target_link_libraries(prog_threads PRIVATE Threads::Threads)
# Allocator time (memrec --time): test_alloc_time.py.
memrec_add_prog(timea_sites "timea_sites.c")
memrec_add_prog(timea_threads "timea_threads.c")
target_link_libraries(prog_timea_threads PRIVATE Threads::Threads)
target_link_libraries(prog_stress PRIVATE Threads::Threads)

# memrec --time (test_time.py): small and 40 MiB malloc/free sites.
memrec_add_prog(time_sizes "time_sizes.c")
target_link_libraries(prog_time_sizes PRIVATE Threads::Threads)
# Blocks of known reachability at the end (test_reach.py).
memrec_add_prog(reach "reach.c")
target_link_libraries(prog_reach PRIVATE Threads::Threads)
# Threads still running at exit: their CPU time (test_time.py).
memrec_add_prog(live_threads "live_threads.c")
target_link_libraries(prog_live_threads PRIVATE Threads::Threads)

# cxx.cpp needs C++17 (std::align_val_t) and sized deallocation, which GCC
# turns on for C++14 and later but clang (before 19) only on request. The
# project itself is C, so C++ is enabled here and only if a compiler exists.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
    enable_language(CXX)
    memrec_add_prog(cxx "cxx.cpp")
    set_target_properties(prog_cxx PROPERTIES
        CXX_STANDARD 17
        CXX_STANDARD_REQUIRED ON
        CXX_EXTENSIONS OFF)
    target_compile_options(prog_cxx PRIVATE -fsized-deallocation)
    # Long template names in stacks (memprint's shortened names).
    memrec_add_prog(templates "templates.cpp")
    set_target_properties(prog_templates PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
    # include/memrec.h compiled as C++.
    memrec_add_prog(pool_cxx "pool_cxx.cpp")
    target_include_directories(prog_pool_cxx PRIVATE "${PROJECT_SOURCE_DIR}/include")
    set_target_properties(prog_pool_cxx PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
    target_compile_options(prog_pool_cxx PRIVATE -Wall -Wextra -Werror)
    set(MEMREC_HAVE_PROG_CXX ON)
    # RTLD_DEEPBIND: a C program that exports its symbols (-rdynamic), finds
    # the library through RUNPATH $ORIGIN, and has the C++ runtime in the
    # global scope as a C++ program would; the C++ library it opens.
    add_library(prog_libdeepbind SHARED "${memrec_progs_src_dir}/libdeepbind.cpp")
    set_target_properties(prog_libdeepbind PROPERTIES OUTPUT_NAME "deepbind"
        LIBRARY_OUTPUT_DIRECTORY "${MEMREC_PROGS_DIR}" INTERPROCEDURAL_OPTIMIZATION OFF)
    target_compile_options(prog_libdeepbind PRIVATE -O2 -g -fno-sanitize=all)
    target_link_options(prog_libdeepbind PRIVATE -fno-sanitize=all)
    memrec_add_prog(deepbind "deepbind.c")
    set_target_properties(prog_deepbind PROPERTIES BUILD_RPATH "$ORIGIN")
    target_link_options(prog_deepbind PRIVATE -rdynamic -Wl,--enable-new-dtags -Wl,--no-as-needed)
    target_link_libraries(prog_deepbind PRIVATE stdc++ ${CMAKE_DL_LIBS})
    add_dependencies(prog_deepbind prog_libdeepbind)
else()
    message(STATUS "memrec: no C++ compiler, tests/progs/cxx.cpp is not built")
    set(MEMREC_HAVE_PROG_CXX OFF)
endif()

# A program that loads a library with dlopen, and the library.
add_library(prog_plugin SHARED "${memrec_progs_src_dir}/plugin.c")
set_target_properties(prog_plugin PROPERTIES OUTPUT_NAME "plugin" LIBRARY_OUTPUT_DIRECTORY "${MEMREC_PROGS_DIR}"
    INTERPROCEDURAL_OPTIMIZATION OFF C_VISIBILITY_PRESET hidden)
target_compile_options(prog_plugin PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(prog_plugin PRIVATE -fno-sanitize=all)
memrec_add_prog(dlopener "dlopener.c")
# A running server memrec attaches to (memrec --pid).
# A server whose memory grows at 100 KB/s beside a cache, churn and a
# sawtooth (test_growth.py).
memrec_add_prog(growth "growth.c")
memrec_add_prog(attachee "attachee.c")
target_link_libraries(prog_attachee PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(prog_attachee prog_plugin)
# Attach and detach safety (test_attach_safety): busy threads, the same as a
# non-PIE executable with canonical PLT entries for malloc and free, and a
# program blocked in a system call (or inside dlopen, in libidlector.so).
memrec_add_prog(busy "busy.c")
target_link_libraries(prog_busy PRIVATE Threads::Threads)
memrec_add_prog(busy_nopie "busy.c")
target_compile_definitions(prog_busy_nopie PRIVATE TAKE_ADDRESS)
set_target_properties(prog_busy_nopie PROPERTIES POSITION_INDEPENDENT_CODE OFF)
target_compile_options(prog_busy_nopie PRIVATE -fno-pie)
target_link_options(prog_busy_nopie PRIVATE -no-pie)
target_link_libraries(prog_busy_nopie PRIVATE Threads::Threads)
memrec_add_prog(idle "idle.c")
target_link_libraries(prog_idle PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
add_library(prog_idlector SHARED "${memrec_progs_src_dir}/idlector.c")
set_target_properties(prog_idlector PROPERTIES OUTPUT_NAME "idlector" LIBRARY_OUTPUT_DIRECTORY "${MEMREC_PROGS_DIR}"
    INTERPROCEDURAL_OPTIMIZATION OFF)
target_compile_options(prog_idlector PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(prog_idlector PRIVATE -fno-sanitize=all)
add_dependencies(prog_idle prog_idlector)
# Signals sent to memrec alone are passed on (test_forward).
memrec_add_prog(sigwait "sigwait.c")
target_link_libraries(prog_dlopener PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(prog_dlopener prog_plugin)

# What the program sees of memrec (docs/capture.md, "What the program
# sees"): its environment, and a daemon's descriptors, the daemon built
# without unwind tables so that stack walks through it take libunwind's
# checked path (which opens a pipe of its own).
foreach(prog IN ITEMS envdump daemon)
    memrec_add_prog(${prog} "${prog}.c")
    set_target_properties(prog_${prog} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
endforeach()
target_compile_options(prog_daemon PRIVATE -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-omit-frame-pointer)

# Abrupt ends, signal handlers that allocate, fork in a threaded program
# (docs/capture.md, "Crashes and abrupt ends" and "Signals and threads").
foreach(prog IN ITEMS crasher sigalloc forkmt)
    memrec_add_prog(${prog} "${prog}.c")
    set_target_properties(prog_${prog} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
endforeach()
target_link_libraries(prog_forkmt PRIVATE Threads::Threads)
target_link_libraries(prog_crasher PRIVATE Threads::Threads)
# pool.c reports its own arena's blocks through include/memrec.h and links
# nothing of memrec. Built twice: as the toolchain's default (PIE on Debian)
# and as a non-PIE executable, where a weak symbol would not work and the
# header's dlsym look-up must.
foreach(variant IN ITEMS pool pool_nopie)
    memrec_add_prog(${variant} "pool.c")
    target_include_directories(prog_${variant} PRIVATE "${PROJECT_SOURCE_DIR}/include")
    set_target_properties(prog_${variant} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
endforeach()
target_compile_options(prog_pool_nopie PRIVATE -fno-pie)
target_link_options(prog_pool_nopie PRIVATE -no-pie)
# A program that maps memory directly, and the library that maps 40 MiB
# for it (linked, not dlopened).
add_library(prog_mapper_lib SHARED "${memrec_progs_src_dir}/mapper_lib.c")
set_target_properties(prog_mapper_lib PROPERTIES OUTPUT_NAME "mapper" LIBRARY_OUTPUT_DIRECTORY "${MEMREC_PROGS_DIR}"
    INTERPROCEDURAL_OPTIMIZATION OFF C_VISIBILITY_PRESET hidden)
target_compile_options(prog_mapper_lib PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(prog_mapper_lib PRIVATE -fno-sanitize=all)
memrec_add_prog(mapper "mapper.c")
target_link_libraries(prog_mapper PRIVATE prog_mapper_lib)
# Time windows and the size histogram (windows), comparisons of two runs and
# two builds (diffprog; diffprog_pad has every address moved by a padding
# function placed before the sites).
memrec_add_prog(windows "windows.c")
set_target_properties(prog_windows PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
target_link_libraries(prog_windows PRIVATE Threads::Threads)
foreach(variant IN ITEMS diffprog diffprog_pad)
    memrec_add_prog(${variant} "diffprog.c")
    set_target_properties(prog_${variant} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
endforeach()
target_compile_definitions(prog_diffprog_pad PRIVATE DIFFPROG_PADDING)
target_compile_options(prog_diffprog_pad PRIVATE -O1 -falign-functions=256)
# RSS versus heap (test_rssgap): frees spread over eight threads' arenas, and
# one thread with little churn; one small block pinning 80 MB freed below it
# (test_pinned).
foreach(prog IN ITEMS rss_arenas rss_single rss_pinned)
    memrec_add_prog(${prog} "${prog}.c")
    set_target_properties(prog_${prog} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
endforeach()
target_link_libraries(prog_rss_arenas PRIVATE Threads::Threads)
target_link_libraries(prog_rss_pinned PRIVATE Threads::Threads)
# The CI gate and leak suppressions (test_gate.py): a program whose
# allocation count is its argument; leaks behind a function, a source file
# and a module name; a program embedding __lsan_default_suppressions(), as
# C and as C++.
memrec_add_prog(gate_count "gate_count.c")
add_library(prog_gate_module SHARED "${memrec_progs_src_dir}/gate_module.c")
set_target_properties(prog_gate_module PROPERTIES OUTPUT_NAME "gate_module" LIBRARY_OUTPUT_DIRECTORY "${MEMREC_PROGS_DIR}"
    INTERPROCEDURAL_OPTIMIZATION OFF C_VISIBILITY_PRESET hidden)
target_compile_options(prog_gate_module PRIVATE -O2 -g -fno-sanitize=all)
target_link_options(prog_gate_module PRIVATE -fno-sanitize=all)
memrec_add_prog(gate_leaks "gate_leaks.c")
target_sources(prog_gate_leaks PRIVATE "${memrec_progs_src_dir}/gate_leaks_file.c")
target_link_libraries(prog_gate_leaks PRIVATE prog_gate_module)
memrec_add_prog(gate_lsan "gate_lsan.c")
if(MEMREC_HAVE_PROG_CXX)
    memrec_add_prog(gate_lsan_cxx "gate_lsan_cxx.cpp")
    target_include_directories(prog_gate_lsan_cxx PRIVATE "${memrec_progs_src_dir}")
endif()
