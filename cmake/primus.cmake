include(GoogleTest)

# primus_unit_tests(NAME SOURCES ... LIBS ...): one GoogleTest binary per layer,
# its tests discovered into ctest under the label "unit".
function(primus_unit_tests name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    PRIMUS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    PRIMUS_BINARY="${PROJECT_BINARY_DIR}/primus-cli")
  gtest_discover_tests(${name} PROPERTIES LABELS "unit" DISCOVERY_TIMEOUT 30)
endfunction()
