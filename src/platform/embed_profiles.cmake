# Writes OUTPUT, a C++ file holding every profile file under ROOT/profiles as
# a string, for builtin_profiles.h. Run by the build whenever a profile changes.
#   cmake -DROOT=<source dir> -DOUTPUT=<file.cc> -P embed_profiles.cmake
file(GLOB_RECURSE profile_files RELATIVE ${ROOT} ${ROOT}/profiles/*.env)
list(SORT profile_files)
set(content "// Generated from profiles/ by src/platform/embed_profiles.cmake: do not edit.\n")
string(APPEND content "#include \"platform/builtin_profiles.h\"\n\nnamespace primus::platform {\n\n")
string(APPEND content "const std::vector<BuiltinProfileFile>& BuiltinProfileFiles() {\n")
string(APPEND content "  static const std::vector<BuiltinProfileFile> files = {\n")
foreach(relative ${profile_files})
  file(READ ${ROOT}/${relative} text)
  string(APPEND content "      {\"${relative}\", R\"primus_profile(${text})primus_profile\"},\n")
endforeach()
string(APPEND content "  };\n  return files;\n}\n\n}  // namespace primus::platform\n")
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/write_if_changed.cmake)
write_if_changed(${OUTPUT} "${content}")
