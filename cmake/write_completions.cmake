# Writes the shell completion scripts the built binary prints
# (`primus-cli completion bash|zsh|fish`) into DIR, named as each shell's
# vendor directory expects them.
#   cmake -DBINARY=... -DDIR=... -P write_completions.cmake
file(MAKE_DIRECTORY ${DIR})
foreach(pair "bash:primus-cli" "zsh:_primus-cli" "fish:primus-cli.fish")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 shell)
  list(GET pair 1 name)
  execute_process(COMMAND ${BINARY} completion ${shell} OUTPUT_FILE ${DIR}/${name} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${BINARY} completion ${shell} failed (${status})")
  endif()
endforeach()
