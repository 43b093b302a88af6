# mvr_library(NAME SOURCES ... DEPS ...): one static library per capability folder.
function(mvr_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# Which tree runs a test, and which tier (docs/testing.md). A test's labels decide:
#   asan  - runs in the sanitizer tree (ASan + UBSan): the unit tests of the code that parses
#           outside input or holds state. The sanitizer tree builds and registers only these.
#   deep  - runs in the deep tier only (scripts/test.sh --deep); each says why where it is set.
#   every other test runs in the normal tree's default tier.
# MVR_TEST_LABELS_SKIPPED (a list of labels) leaves out of the normal tree every test carrying one
# of them: neither built nor registered. scripts/test.sh sets "asan;deep" for the default tier
# (the asan tests run in their own tree) and "asan" for the deep tier; a developer's tree leaves it
# empty and has every test.
set(MVR_TEST_LABELS_SKIPPED "" CACHE STRING
    "Labels whose tests the normal tree neither builds nor registers (e.g. asan;deep)")

# mvr_test_wanted(OUT LABELS...): whether this tree builds and registers a test so labelled.
function(mvr_test_wanted out)
  set(wanted TRUE)
  if(MVR_SANITIZE)
    if(NOT "asan" IN_LIST ARGN)
      set(wanted FALSE)
    endif()
  else()
    foreach(label IN LISTS MVR_TEST_LABELS_SKIPPED)
      if(label IN_LIST ARGN)
        set(wanted FALSE)
      endif()
    endforeach()
  endif()
  set(${out} ${wanted} PARENT_SCOPE)
endfunction()

# mvr_script_test(NAME COMMAND ... LABELS ... [PROPERTIES ...]): a test that is not a gtest
# binary (a script, or `mvr` itself), registered only where its labels want it.
function(mvr_script_test name)
  cmake_parse_arguments(ARG "" "" "COMMAND;LABELS;PROPERTIES" ${ARGN})
  mvr_test_wanted(wanted ${ARG_LABELS})
  if(NOT wanted)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" ${ARG_PROPERTIES})
endfunction()

# mvr_test(NAME SOURCES ... DEPS ... [LABELS ...] [RESOURCE_LOCK NAME] [DEEP_TESTS PATTERN...]
#          [RECORDS_GITHUB]): one gtest binary; each test is a ctest test, discovered when ctest
# runs so that building stays fast. Tests sharing a RESOURCE_LOCK never run at the same time
# under `ctest -j`. DEEP_TESTS: regular expressions of test names (Suite.Test) that carry the
# label deep besides the binary's labels (the caller says why). RECORDS_GITHUB: the binary's
# GitHub emulators write their traffic to github-records/ in the build tree, which the GitHub
# contract checks (tests/contracts/github) validate after the tests have run.
function(mvr_test name)
  cmake_parse_arguments(ARG "RECORDS_GITHUB" "RESOURCE_LOCK" "SOURCES;DEPS;LABELS;DEEP_TESTS"
                        ${ARGN})
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
  # support/moto.h checks every request against botocore's models (src/aws/contracts/aws_contracts.h).
  if("moto" IN_LIST labels)
    target_link_libraries(${name} PRIVATE mvr_aws_contracts)
  endif()
  # A binary this tree does not run is not built either; the target still exists for the
  # add_dependencies() and target_*() calls that follow.
  mvr_test_wanted(wanted ${labels})
  if(NOT wanted)
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
  set(text "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES ${properties})\n")
  if(ARG_RECORDS_GITHUB)
    # Every run starts from an empty record (the reset fixture), and the checks run after every
    # recording test (the records fixture); a deep test records nothing, so that `ctest -LE deep`
    # never pulls one back in as a fixture's setup.
    string(APPEND text "  set_tests_properties(\${${name}_TESTS} PROPERTIES"
           " FIXTURES_SETUP github_records FIXTURES_REQUIRED github_records_reset"
           " ENVIRONMENT \"MVR_GITHUB_RECORD_DIR=${PROJECT_BINARY_DIR}/github-records\")\n")
  endif()
  if(ARG_DEEP_TESTS)
    set(deep_labels ${labels} deep)
    string(APPEND text "  foreach(t IN LISTS ${name}_TESTS)\n")
    foreach(pattern IN LISTS ARG_DEEP_TESTS)
      string(APPEND text "    if(t MATCHES \"${pattern}\")\n"
             "      set_tests_properties(\${t} PROPERTIES LABELS \"${deep_labels}\""
             " FIXTURES_SETUP \"\" FIXTURES_REQUIRED \"\" ENVIRONMENT \"\")\n    endif()\n")
    endforeach()
    string(APPEND text "  endforeach()\n")
  endif()
  string(APPEND text "endif()\n")
  file(WRITE "${file}" "${text}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()
