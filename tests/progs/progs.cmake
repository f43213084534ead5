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

foreach(prog IN ITEMS chain aligned threads atexit_free inlined nothing temporaries deep sleeper slow sampled stress)
    memrec_add_prog(${prog} "${prog}.c")
    set_target_properties(prog_${prog} PROPERTIES
        C_STANDARD 11
        C_STANDARD_REQUIRED ON
        C_EXTENSIONS ON)
endforeach()
target_link_libraries(prog_threads PRIVATE Threads::Threads)
target_link_libraries(prog_stress PRIVATE Threads::Threads)

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
target_link_libraries(prog_dlopener PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(prog_dlopener prog_plugin)
