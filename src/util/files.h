// File-system helpers: whole-file reads, atomic writes (temporary file,
// fsync, rename: a reader never sees half a file), directory creation and
// PATH lookup. Failures come back as errors naming the path.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus {

Result<std::string> ReadFile(const std::string& path);

// For input a user names (configuration files): refuses, before reading a
// byte, anything that is not a regular file (a directory, /dev/zero, a FIFO
// that may never end) and a file larger than `max_bytes`, and never reads
// more than that even when the file grows meanwhile. Errors name the path
// (EnvironmentError; callers give it their own exit code and hint).
Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes);
Status WriteFileAtomic(const std::string& path, std::string_view content, int mode = 0644);
Status MakeDirs(const std::string& path, int mode = 0755);
bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);
bool IsExecutableFile(const std::string& path);

// execvp's search: a name with a slash is taken as is, otherwise each PATH
// entry is tried. Empty when nothing executable is found.
std::string FindExecutable(const std::string& name);

// $HOME, or the password database's entry.
std::string HomeDir();
std::string CurrentDir();
// Directory part and joining, purely lexical.
std::string DirName(const std::string& path);
std::string JoinPath(const std::string& base, const std::string& relative);

// This binary's absolute path (/proc/self/exe): what every node, container
// or worker process runs, so that they all run the same build.
Result<std::string> SelfExecutable();

}  // namespace primus
