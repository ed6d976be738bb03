include(GoogleTest)

# primus_unit_tests(NAME SOURCES ... LIBS ... [LABELS ...]): one GoogleTest binary
# per layer, its tests discovered into ctest under the label "unit" (or LABELS,
# e.g. "slow" for a second binary holding tests that take more than ~2 s, so
# that `ctest -LE slow` stays quick).
function(primus_unit_tests name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS "unit")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)  # test files share helper names
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    PRIMUS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    PRIMUS_BINARY_DIR="${PROJECT_BINARY_DIR}"
    PRIMUS_BINARY="${PROJECT_BINARY_DIR}/primus-cli")
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 30)
endfunction()
