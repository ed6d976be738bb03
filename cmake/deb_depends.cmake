# CPack's project configuration (CPACK_PROJECT_CONFIG_FILE), read when cpack
# runs: the Debian package depends on libc6 at least as new as the newest
# GLIBC_ symbol version the built binary asks for, and on nothing else (it
# needs only glibc at load time).
if(CPACK_GENERATOR STREQUAL "DEB")
  execute_process(COMMAND objdump -T @PRIMUS_BINARY_FILE@ OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "objdump -T @PRIMUS_BINARY_FILE@ failed: build primus-cli first (binutils installs objdump)")
  endif()
  string(REGEX MATCHALL "GLIBC_[0-9]+\\.[0-9]+(\\.[0-9]+)?" versions "${symbols}")
  set(newest 2.2.5)
  foreach(version IN LISTS versions)
    string(REPLACE "GLIBC_" "" version ${version})
    if(version VERSION_GREATER newest)
      set(newest ${version})
    endif()
  endforeach()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${newest})")
endif()
