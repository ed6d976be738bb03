# Writes OUTPUT, a C++ file holding data/signatures.yaml as a string, for
# builtin_signatures.h. Run by the build whenever the file changes.
#   cmake -DINPUT=<signatures.yaml> -DOUTPUT=<file.cc> -P embed_signatures.cmake
file(READ ${INPUT} text)
set(content "// Generated from data/signatures.yaml by src/analyze/embed_signatures.cmake: do not edit.\n")
string(APPEND content "#include \"analyze/builtin_signatures.h\"\n\nnamespace primus::analyze {\n\n")
string(APPEND content "std::string_view BuiltinSignaturesYaml() {\n  return R\"primus_sigs(${text})primus_sigs\";\n}\n\n")
string(APPEND content "}  // namespace primus::analyze\n")
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/write_if_changed.cmake)
write_if_changed(${OUTPUT} "${content}")
