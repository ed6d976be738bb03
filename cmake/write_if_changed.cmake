# write_if_changed(FILE CONTENT): writes FILE only when its content differs,
# so a generated source whose input did not change triggers no rebuild.
# Included by the embedding scripts (cmake -P), which run at every build.
function(write_if_changed file content)
  if(EXISTS ${file})
    file(READ ${file} previous)
  endif()
  if(NOT "${previous}" STREQUAL "${content}")
    file(WRITE ${file} "${content}")
  endif()
endfunction()
