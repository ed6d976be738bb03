# Writes OUTPUT, a C++ file whose function FUNCTION returns INPUT's text, for
# train/builtin_tables.h. Run by the build whenever the table changes.
#   cmake -DINPUT=<table.tsv> -DOUTPUT=<file.cc> -DFUNCTION=<name> -P embed_table.cmake
file(READ ${INPUT} text)
get_filename_component(name ${INPUT} NAME)
set(content "// Generated from data/${name} by src/train/embed_table.cmake: do not edit.\n")
string(APPEND content "#include \"train/builtin_tables.h\"\n\nnamespace primus::train {\n\n")
string(APPEND content "std::string_view ${FUNCTION}() {\n  return R\"primus_table(${text})primus_table\";\n}\n\n")
string(APPEND content "}  // namespace primus::train\n")
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/write_if_changed.cmake)
write_if_changed(${OUTPUT} "${content}")
