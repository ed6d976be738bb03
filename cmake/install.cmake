# What `cmake --install build [--prefix P]` and `cpack -G DEB` put where
# Debian puts such files (docs/cli.md, "Install"):
#   bin/primus-cli, bin/primus-comm-worker (when gloo is there), bin/torchrun
#     (a link, unless -DPRIMUS_INSTALL_TORCHRUN=OFF; never in the Debian package,
#     whose python3-torch owns /usr/bin/torchrun), libexec/primus-cli/torchrun (a link)
#   share/man/man1/primus-cli*.1                         made by the binary from its help
#   share/bash-completion/completions/primus-cli, share/zsh/vendor-completions/_primus-cli,
#   share/fish/vendor_completions.d/primus-cli.fish       made by the binary
#   share/primus-cli/python/primus_hooks.py            the Python hook API, on every hook's PYTHONPATH
#   share/primus-cli/python/megatron_option_table.py   reads a Megatron-LM checkout's option table
#   share/primus-cli/python/torchtitan_config_keys.py  reads a TorchTitan job.custom_config_module's keys
#   share/primus-cli/python/primus_stacks/sitecustomize.py  the workers' stack dumper
#   share/primus-cli/examples/gpt/*.py                  the example trainer `init` names
#   share/primus-cli/profiles/, share/primus-cli/signatures.yaml
#     copies of what is compiled in, to read and to start one's own from
#     (PRIMUS_PROFILE_PATH, analyze logs --signatures); the binary never needs them.
include(GNUInstallDirs)

# Man pages and completion scripts come from the built binary, so they say
# what it parses. Both are part of `all`, not of the main job's `ninja primus-cli`.
set(PRIMUS_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(PRIMUS_COMPLETION_DIR ${PROJECT_BINARY_DIR}/completions)
add_custom_command(
  OUTPUT ${PRIMUS_MAN_DIR}/primus-cli.1
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${PRIMUS_MAN_DIR}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PRIMUS_MAN_DIR}
  COMMAND $<TARGET_FILE:primus-cli> __man --dir ${PRIMUS_MAN_DIR}
  DEPENDS primus-cli
  COMMENT "Writing the man pages (primus-cli __man)"
  VERBATIM)
add_custom_target(man_pages ALL DEPENDS ${PRIMUS_MAN_DIR}/primus-cli.1)
add_custom_command(
  OUTPUT ${PRIMUS_COMPLETION_DIR}/primus-cli ${PRIMUS_COMPLETION_DIR}/_primus-cli ${PRIMUS_COMPLETION_DIR}/primus-cli.fish
  COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:primus-cli> -DDIR=${PRIMUS_COMPLETION_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/write_completions.cmake
  DEPENDS primus-cli ${PROJECT_SOURCE_DIR}/cmake/write_completions.cmake
  COMMENT "Writing the shell completion scripts (primus-cli completion)"
  VERBATIM)
add_custom_target(completions ALL
  DEPENDS ${PRIMUS_COMPLETION_DIR}/primus-cli ${PRIMUS_COMPLETION_DIR}/_primus-cli ${PRIMUS_COMPLETION_DIR}/primus-cli.fish)

option(PRIMUS_INSTALL_TORCHRUN "Install a torchrun link to primus-cli beside it" ON)

install(CODE "
  foreach(made \"${PRIMUS_MAN_DIR}/primus-cli.1\" \"${PRIMUS_COMPLETION_DIR}/primus-cli\")
    if(NOT EXISTS \"\${made}\")
      message(FATAL_ERROR \"\${made} is not built: run `ninja -C ${PROJECT_BINARY_DIR}` (or scripts/build.sh --all) before installing\")
    endif()
  endforeach()
")
install(TARGETS primus-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET primus-comm-worker)  # found beside primus-cli (docs/architecture.md)
  install(TARGETS primus-comm-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} OPTIONAL)
endif()
# torchrun links: create_symlink as install(CODE), since install() has no links of its own.
function(primus_install_link dir target component)
  install(CODE "
    set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${dir}\")
    file(MAKE_DIRECTORY \"\${dir}\")
    message(STATUS \"Installing: \${dir}/torchrun -> ${target}\")
    execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink ${target} \"\${dir}/torchrun\")
  " COMPONENT ${component})
endfunction()
primus_install_link(${CMAKE_INSTALL_LIBEXECDIR}/primus-cli ../../${CMAKE_INSTALL_BINDIR}/primus-cli Unspecified)
if(PRIMUS_INSTALL_TORCHRUN)
  primus_install_link(${CMAKE_INSTALL_BINDIR} primus-cli torchrun_link)
endif()
install(DIRECTORY ${PRIMUS_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1")
install(FILES ${PRIMUS_COMPLETION_DIR}/primus-cli DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
install(FILES ${PRIMUS_COMPLETION_DIR}/_primus-cli DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions)
install(FILES ${PRIMUS_COMPLETION_DIR}/primus-cli.fish DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/fish/vendor_completions.d)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/primus-cli/profiles)
install(FILES ${PROJECT_SOURCE_DIR}/data/signatures.yaml DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/primus-cli)
# The Python hook API, which hooks find on their PYTHONPATH (hooks/hook_runner.h).
install(FILES ${PROJECT_SOURCE_DIR}/python/primus_hooks.py ${PROJECT_SOURCE_DIR}/python/megatron_option_table.py
              ${PROJECT_SOURCE_DIR}/python/torchtitan_config_keys.py
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/primus-cli/python)
install(FILES ${PROJECT_SOURCE_DIR}/examples/gpt/train.py ${PROJECT_SOURCE_DIR}/examples/gpt/model.py
              ${PROJECT_SOURCE_DIR}/examples/gpt/data.py ${PROJECT_SOURCE_DIR}/examples/gpt/checkpoint.py
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/primus-cli/examples/gpt)
install(FILES ${PROJECT_SOURCE_DIR}/python/primus_stacks/sitecustomize.py
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/primus-cli/python/primus_stacks)

# cpack -G DEB (in the build directory) -> primus-cli_<version>_amd64.deb.
set(CPACK_PACKAGE_NAME primus-cli)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "primus-cli")
set(CPACK_PACKAGE_CONTACT "primus-cli maintainers <primus-cli@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "one launcher for large-model training on NVIDIA, AMD and CPU hosts")
set(CPACK_PACKAGE_DESCRIPTION
    "primus-cli takes a training job from a bare node to running: on this host, in a container,\n"
    "through Slurm, ssh or Kubernetes, with preflight checks, benchmarks and log analysis.\n"
    "A single binary that needs only glibc at load time.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)  # the debug info stays in the build tree: 210 MB -> about 8 MB
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# /usr/bin/torchrun belongs to Debian's python3-torch: the package has the
# libexec link only.
set(CPACK_COMPONENTS_ALL Unspecified)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(PRIMUS_BINARY_FILE ${PROJECT_BINARY_DIR}/primus-cli)
configure_file(${PROJECT_SOURCE_DIR}/cmake/deb_depends.cmake ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake)
include(CPack)
