# SPDX-License-Identifier: MIT
# Unit test of analyzer/symbolize.c, include()d from tests/CMakeLists.txt. It resolves real
# compiled code: the test itself, a C++ helper and two small shared libraries, plus stripped,
# separate-debug and no-.debug_aranges copies of one of them made with objcopy after linking.

if(NOT CMAKE_CXX_COMPILER_LOADED)
    enable_language(CXX)
endif()
if(NOT CMAKE_OBJCOPY)
    find_program(CMAKE_OBJCOPY NAMES objcopy llvm-objcopy)
    if(NOT CMAKE_OBJCOPY)
        message(FATAL_ERROR "objcopy is needed to build the symbolize unit test")
    endif()
endif()

set(SYMTEST_SRC ${CMAKE_CURRENT_LIST_DIR}/../progs)
set(SYMTEST_OUT ${CMAKE_CURRENT_BINARY_DIR}/symtest)
file(MAKE_DIRECTORY ${SYMTEST_OUT})

# Everything the test inspects is built with line info and light optimisation whatever the
# build type (-O1 comes after CMAKE_C_FLAGS_<CONFIG>, so it wins), and without LTO, so the
# lines recorded with __LINE__ are the ones in the DWARF.
set(SYMTEST_CFLAGS -g -O1)

add_library(symtest_lib SHARED ${SYMTEST_SRC}/symtest_lib.c)
target_include_directories(symtest_lib PRIVATE ${SYMTEST_SRC})
target_compile_options(symtest_lib PRIVATE ${SYMTEST_CFLAGS})
target_link_options(symtest_lib PRIVATE -Wl,--build-id)
set_target_properties(symtest_lib PROPERTIES
    C_VISIBILITY_PRESET default
    INTERPROCEDURAL_OPTIMIZATION OFF
    LIBRARY_OUTPUT_DIRECTORY ${SYMTEST_OUT})
# The debuglink copy must sit next to the .debug file it names, hence the working directory.
add_custom_command(TARGET symtest_lib POST_BUILD
    COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:symtest_lib> libsymtest_lib.debug
    COMMAND ${CMAKE_OBJCOPY} --strip-all $<TARGET_FILE:symtest_lib> libsymtest_lib_stripped.so
    COMMAND ${CMAKE_OBJCOPY} --strip-all --add-gnu-debuglink=libsymtest_lib.debug
            $<TARGET_FILE:symtest_lib> libsymtest_lib_dbglink.so
    COMMAND ${CMAKE_OBJCOPY} --remove-section=.debug_aranges $<TARGET_FILE:symtest_lib>
            libsymtest_lib_noaranges.so
    WORKING_DIRECTORY ${SYMTEST_OUT}
    VERBATIM)

# First segment linked at 0x10000000 (GNU ld / gold option), loaded elsewhere by the test.
add_library(symtest_hi SHARED ${SYMTEST_SRC}/symtest_hi.c)
target_include_directories(symtest_hi PRIVATE ${SYMTEST_SRC})
target_compile_options(symtest_hi PRIVATE ${SYMTEST_CFLAGS})
target_link_options(symtest_hi PRIVATE -Wl,--build-id -Wl,-Ttext-segment=0x10000000)
set_target_properties(symtest_hi PROPERTIES
    C_VISIBILITY_PRESET default
    INTERPROCEDURAL_OPTIMIZATION OFF
    LIBRARY_OUTPUT_DIRECTORY ${SYMTEST_OUT})

add_executable(test_symbolize
    ${CMAKE_CURRENT_LIST_DIR}/test_symbolize.c
    ${SYMTEST_SRC}/symtest_ra.c
    ${SYMTEST_SRC}/symtest_cxx.cpp)
target_include_directories(test_symbolize PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}
    ${SYMTEST_SRC}
    ${CMAKE_CURRENT_LIST_DIR}/../../analyzer)
# The project's C warnings (-Wstrict-prototypes is C only), the usual ones for the C++ helper.
target_compile_options(test_symbolize PRIVATE
    "$<$<COMPILE_LANGUAGE:C>:${MEMREC_WARNINGS};-Wpedantic>"
    "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra>"
    ${SYMTEST_CFLAGS})
target_compile_definitions(test_symbolize PRIVATE
    SYMTEST_STRIPPED_PATH="${SYMTEST_OUT}/libsymtest_lib_stripped.so"
    SYMTEST_DEBUG_PATH="${SYMTEST_OUT}/libsymtest_lib.debug"
    SYMTEST_DEBUGLINK_PATH="${SYMTEST_OUT}/libsymtest_lib_dbglink.so"
    SYMTEST_NOARANGES_PATH="${SYMTEST_OUT}/libsymtest_lib_noaranges.so"
    SYMTEST_HI_PATH="$<TARGET_FILE:symtest_hi>")
target_link_libraries(test_symbolize PRIVATE memanalysis symtest_lib ${CMAKE_DL_LIBS})
add_dependencies(test_symbolize symtest_hi)
set_target_properties(test_symbolize PROPERTIES INTERPROCEDURAL_OPTIMIZATION OFF)
# Sanitized like memanalysis when MEMREC_SANITIZE is set; the two libraries stay plain, like
# the target programs.
if(COMMAND memrec_sanitize)
    memrec_sanitize(test_symbolize)
endif()

add_test(NAME unit_symbolize COMMAND test_symbolize)
set_tests_properties(unit_symbolize PROPERTIES LABELS unit TIMEOUT 120)

# The symbol index against libdwfl (test_symtab.c): tests/progs/symtab_cases.S as a shared
# library, its stripped copy (.dynsym only) and a static executable stripped of every symbol.
set(SYMTAB_CASES ${SYMTEST_OUT}/libsymtab_cases.so)
set(SYMTAB_STRIPPED ${SYMTEST_OUT}/libsymtab_cases_stripped.so)
set(SYMTAB_NOSYMS ${SYMTEST_OUT}/symtab_nosyms)
add_custom_command(OUTPUT ${SYMTAB_CASES} ${SYMTAB_STRIPPED} ${SYMTAB_NOSYMS}
    COMMAND ${CMAKE_C_COMPILER} -shared -nostdlib -Wl,--build-id ${SYMTEST_SRC}/symtab_cases.S -o ${SYMTAB_CASES}
    COMMAND ${CMAKE_OBJCOPY} --strip-all ${SYMTAB_CASES} ${SYMTAB_STRIPPED}
    COMMAND ${CMAKE_C_COMPILER} -static -nostdlib -Wl,-e,alias_global -Wl,--build-id ${SYMTEST_SRC}/symtab_cases.S
            -o ${SYMTAB_NOSYMS}.full
    COMMAND ${CMAKE_OBJCOPY} --strip-all ${SYMTAB_NOSYMS}.full ${SYMTAB_NOSYMS}
    DEPENDS ${SYMTEST_SRC}/symtab_cases.S
    VERBATIM)
add_custom_target(symtab_cases DEPENDS ${SYMTAB_CASES} ${SYMTAB_STRIPPED} ${SYMTAB_NOSYMS})
add_executable(test_symtab ${CMAKE_CURRENT_LIST_DIR}/test_symtab.c)
target_include_directories(test_symtab PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/../../analyzer)
target_compile_options(test_symtab PRIVATE ${MEMREC_WARNINGS} -Wpedantic)
target_compile_definitions(test_symtab PRIVATE
    SYMTAB_CASES_PATH="${SYMTAB_CASES}"
    SYMTAB_STRIPPED_PATH="${SYMTAB_STRIPPED}"
    SYMTAB_NOSYMS_PATH="${SYMTAB_NOSYMS}")
target_link_libraries(test_symtab PRIVATE memanalysis)
add_dependencies(test_symtab symtab_cases)
if(COMMAND memrec_sanitize)
    memrec_sanitize(test_symtab)
endif()
add_test(NAME unit_symtab COMMAND test_symtab)
set_tests_properties(unit_symtab PROPERTIES LABELS "unit;quick" TIMEOUT 120)
