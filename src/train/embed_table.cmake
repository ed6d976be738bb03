# Writes OUTPUT, a C++ file whose function FUNCTION returns INPUT's text, for
# train/builtin_tables.h. Run by the build whenever a table changes.
#   cmake -DINPUT=<table.tsv> -DOUTPUT=<file.cc> -DFUNCTION=<name> -P embed_table.cmake
# INPUT may name several tables separated by '|': FUNCTION then returns
# std::vector<std::string_view>, one text per table, in the order given.
string(REPLACE "|" ";" inputs "${INPUT}")
list(LENGTH inputs count)
set(names "")
set(texts "")
foreach(input IN LISTS inputs)
  file(READ ${input} text)
  get_filename_component(name ${input} NAME)
  list(APPEND names "data/${name}")
  string(APPEND texts "      R\"primus_table(${text})primus_table\",\n")
endforeach()
list(JOIN names ", " generated_from)
set(content "// Generated from ${generated_from} by src/train/embed_table.cmake: do not edit.\n")
string(APPEND content "#include \"train/builtin_tables.h\"\n\nnamespace primus::train {\n\n")
if(count EQUAL 1)
  string(APPEND content "std::string_view ${FUNCTION}() {\n  return R\"primus_table(${text})primus_table\";\n}\n\n")
else()
  string(APPEND content "std::vector<std::string_view> ${FUNCTION}() {\n  return {\n${texts}  };\n}\n\n")
endif()
string(APPEND content "}  // namespace primus::train\n")
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/write_if_changed.cmake)
write_if_changed(${OUTPUT} "${content}")
