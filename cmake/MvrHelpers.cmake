# mvr_library(NAME SOURCES ... DEPS ...): one static library per capability folder.
function(mvr_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# mvr_test(NAME SOURCES ... DEPS ... [LABELS ...] [RESOURCE_LOCK NAME]): one gtest binary; each
# test is a ctest test, discovered when ctest runs so that building stays fast. Tests sharing a
# RESOURCE_LOCK never run at the same time under `ctest -j`.
function(mvr_test name)
  cmake_parse_arguments(ARG "" "RESOURCE_LOCK" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  # tests/support (ManualSeam, RealSeam, the moto and process fakes) as "support/...".
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE MVR_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             MVR_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(labels unit)
  if(ARG_LABELS)
    set(labels ${ARG_LABELS})
  endif()
  # support/moto.h checks every request against botocore's models (src/aws/aws_contracts.h).
  if("moto" IN_LIST labels)
    target_link_libraries(${name} PRIVATE mvr_aws_contracts)
  endif()
  # The sanitizer tree runs no end-to-end suite (scripts/test.sh: -LE e2e), so it does not build
  # them either; the target still exists for the add_dependencies() calls that follow.
  if(MVR_SANITIZE AND "e2e" IN_LIST labels)
    set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
    return()
  endif()
  # Labels and locks are set by a file ctest reads after the discovered tests: PROPERTIES of
  # gtest_discover_tests are flattened into one list, where a second label became a property
  # name (a binary labelled "e2e moto" was labelled e2e only).
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60)
  set(properties "LABELS \"${labels}\"")
  if(ARG_RESOURCE_LOCK)
    string(APPEND properties " RESOURCE_LOCK \"${ARG_RESOURCE_LOCK}\"")
  endif()
  set(file "${CMAKE_CURRENT_BINARY_DIR}/${name}_properties.cmake")
  file(WRITE "${file}"
       "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES ${properties})\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()
