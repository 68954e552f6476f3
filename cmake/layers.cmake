# mecha_layer(NAME [DIR PATH] DEPS ... [TEST_DEPS ...] [LABELS ...])
#
# src/PATH/*.cc (but *_test.cc) becomes the static library mecha_NAME;
# src/PATH/testing/*.cc becomes mecha_NAME_testing (helpers for tests only);
# src/PATH/*_test.cc becomes the test executable NAME_tests, registered with CTest as one
# entry (one process: a shared fixture such as a PostgreSQL cluster starts once), labelled
# `unit` and LABELS (`sandbox` where its tests start bubblewrap, `service` where they start
# an outside server).
# PATH is NAME unless given: a library of its own inside a layer's folder (tools/mcp,
# cli/batch, cli/gateway) sits in that layer of DESIGN.md, and the layer's own globs do not
# reach into it.
#
# MECHA_UNITY compiles each target's files in batches, one compiler run per batch: most of a
# file's compile time goes to the headers it shares with its neighbours (the standard library,
# nlohmann/json, fmt, GoogleTest), and `make test` builds everything three times. Files that
# compile a library's implementation from its headers keep a compiler run of their own.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/base/fmt_library.cc
  ${PROJECT_SOURCE_DIR}/src/config/toml_library.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
# What mecha-gateway uses of the layers below it, each an object of its own: a batch would
# bring its neighbours (the daemon, the agent, every tool) into the gateway's binary, and
# their code and relocations into its memory.
set_source_files_properties(
  ${PROJECT_SOURCE_DIR}/src/server/client.cc ${PROJECT_SOURCE_DIR}/src/server/frame_channel.cc
  ${PROJECT_SOURCE_DIR}/src/server/unix_socket.cc ${PROJECT_SOURCE_DIR}/src/agent/call_summary.cc
  PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)

# Test programs and their helpers are compiled without optimisation in the release build
# (measured: a batch of tests takes 18 s at -O0 against 31 s at -O2 here). The code under
# test is the optimised library they link; what is lost is only the speed of the tests' own
# code, which waits on processes and sockets.
function(mecha_test_code target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O0>)
endfunction()

function(mecha_unity target)
  if(MECHA_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    # A batch includes its files, so GCC takes each for a header and warns of every class
    # holding a type from the file's anonymous namespace.
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()

function(mecha_layer name)
  cmake_parse_arguments(ARG "" "DIR" "DEPS;TEST_DEPS;LABELS" ${ARGN})
  if(NOT ARG_DIR)
    set(ARG_DIR ${name})
  endif()
  set(dir ${PROJECT_SOURCE_DIR}/src/${ARG_DIR})
  file(GLOB all_sources CONFIGURE_DEPENDS ${dir}/*.cc)
  file(GLOB test_sources CONFIGURE_DEPENDS ${dir}/*_test.cc)
  file(GLOB testing_sources CONFIGURE_DEPENDS ${dir}/testing/*.cc)
  set(lib_sources ${all_sources})
  if(test_sources)
    list(REMOVE_ITEM lib_sources ${test_sources})
  endif()
  # A layer's main.cc is its program's (mecha, mecha-gateway), not part of its library.
  list(REMOVE_ITEM lib_sources ${dir}/main.cc)

  if(lib_sources)
    add_library(mecha_${name} STATIC ${lib_sources})
    set(scope PUBLIC)
  else()
    add_library(mecha_${name} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(mecha_${name} ${scope} ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(mecha_${name} ${scope} ${ARG_DEPS})
  if(lib_sources)
    target_compile_options(mecha_${name} PRIVATE -Wall -Wextra -Werror)
    mecha_unity(mecha_${name})
  endif()

  set(test_support "")
  if(testing_sources)
    add_library(mecha_${name}_testing STATIC ${testing_sources})
    # A layer's helpers may use the helpers of the layers below (base's wait_until).
    target_link_libraries(mecha_${name}_testing PUBLIC mecha_${name} GTest::gtest ${ARG_TEST_DEPS}
                          ${MECHA_TEST_SUPPORT})
    target_compile_options(mecha_${name}_testing PRIVATE -Wall -Wextra -Werror)
    mecha_unity(mecha_${name}_testing)
    mecha_test_code(mecha_${name}_testing)
    target_compile_definitions(mecha_${name}_testing PRIVATE
      MECHA_SOURCE_DIR="${PROJECT_SOURCE_DIR}" MECHA_BINARY_DIR="${CMAKE_BINARY_DIR}")
    set(test_support mecha_${name}_testing)
  endif()

  if(test_sources AND BUILD_TESTING)
    add_executable(${name}_tests ${test_sources})
    target_link_libraries(${name}_tests PRIVATE mecha_${name} ${test_support} ${ARG_TEST_DEPS}
                          ${MECHA_TEST_SUPPORT} GTest::gtest GTest::gmock GTest::gtest_main)
    target_compile_options(${name}_tests PRIVATE -Wall -Wextra -Werror)
    mecha_unity(${name}_tests)
    mecha_test_code(${name}_tests)
    target_compile_definitions(${name}_tests PRIVATE
      MECHA_SOURCE_DIR="${PROJECT_SOURCE_DIR}" MECHA_BINARY_DIR="${CMAKE_BINARY_DIR}")
    # --gtest_brief: a passing run prints its summary only, a failing one each failure whole.
    add_test(NAME ${name}_tests COMMAND ${name}_tests --gtest_brief=1
             WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
    set_tests_properties(${name}_tests PROPERTIES LABELS "unit;${ARG_LABELS}" TIMEOUT 420)
  endif()
  # Layers above may use the test helpers of layers below.
  if(testing_sources)
    set(MECHA_TEST_SUPPORT ${MECHA_TEST_SUPPORT} mecha_${name}_testing PARENT_SCOPE)
  endif()
endfunction()

# mecha_system_tests(NAME DIR PATH DEPS ... [GROUPS LABEL REGEX ...])
#
# PATH/*_test.cc (relative to the project) becomes the test executable NAME: tests that drive
# the built binaries as a user would. Each test is a CTest entry of its own, so that they run
# side by side, labelled `e2e`; each GROUP adds LABEL to the tests whose names match REGEX
# (a CMake regular expression), once they are discovered when CTest starts.
function(mecha_system_tests name)
  cmake_parse_arguments(ARG "" "DIR" "DEPS;GROUPS" ${ARGN})
  if(NOT BUILD_TESTING)
    return()
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${ARG_DIR}/*_test.cc)
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} ${MECHA_TEST_SUPPORT} GTest::gtest GTest::gmock
                        GTest::gtest_main)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Werror)
  mecha_unity(${name})
  mecha_test_code(${name})
  target_compile_definitions(${name} PRIVATE
    MECHA_SOURCE_DIR="${PROJECT_SOURCE_DIR}" MECHA_BINARY_DIR="${CMAKE_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${name}_list
                       WORKING_DIRECTORY ${CMAKE_BINARY_DIR} PROPERTIES TIMEOUT 300 LABELS e2e)
  # A list of labels cannot pass through gtest_discover_tests' PROPERTIES whole, so the
  # groups' labels are added by a script CTest reads after the discovered tests.
  set(script "foreach(test IN LISTS ${name}_list)\n  set(labels e2e)\n")
  list(LENGTH ARG_GROUPS n)
  set(i 0)
  while(i LESS n)
    list(GET ARG_GROUPS ${i} label)
    math(EXPR j "${i} + 1")
    list(GET ARG_GROUPS ${j} regex)
    string(APPEND script "  if(test MATCHES [==[${regex}]==])\n"
                         "    list(APPEND labels ${label})\n"
                         "  endif()\n")
    math(EXPR i "${i} + 2")
  endwhile()
  string(APPEND script "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"\${labels}\")\n"
                       "endforeach()\n")
  file(WRITE ${CMAKE_BINARY_DIR}/${name}_labels.cmake "${script}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_BINARY_DIR}/${name}_labels.cmake)
endfunction()
