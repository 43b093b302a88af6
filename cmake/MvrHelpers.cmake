# mvr_library(NAME SOURCES ... DEPS ...): one static library per capability folder.
function(mvr_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# mvr_test(NAME SOURCES ... DEPS ... [LABELS ...]): one gtest binary; each test is a ctest test,
# discovered when ctest runs so that building stays fast.
function(mvr_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
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
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "${labels}")
endfunction()
