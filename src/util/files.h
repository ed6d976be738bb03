// File-system helpers: whole-file reads, atomic writes (temporary file,
// fsync, rename: a reader never sees half a file), directory creation and
// PATH lookup. Failures come back as errors naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus {

Result<std::string> ReadFile(const std::string& path);

// For input a user names (configuration files): refuses, before reading a
// byte, anything that is not a regular file (a directory, /dev/zero, a FIFO
// that may never end) and a file larger than `max_bytes`, and never reads
// more than that even when the file grows meanwhile. Errors name the path
// (UnavailableError; callers give it their own exit code and hint).
Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes);
// Replaces `path` with `content` through a temporary file of an unpredictable
// name in the same directory (created with O_EXCL|O_NOFOLLOW, so nothing
// planted there is written through), then rename(2): a reader sees the old
// file or the new one, never half of one, and a link in `path`'s place is
// replaced, not followed. `mode` -1: PrivateFileMode() (util/private_files.h),
// for everything under run and experiment directories; kUserOutputMode for a
// file the user named. kSynced: fsync before the rename (survives a crash);
// kUnsynced for files replaced every few seconds anyway (the job view).
enum class Durability { kSynced, kUnsynced };
inline constexpr int kUserOutputMode = 0644;
Status WriteFileAtomic(const std::string& path, std::string_view content, int mode = -1,
                       Durability durability = Durability::kSynced);
// Creates `path` and its missing parents with `mode` (what exists is left as it is).
Status MakeDirs(const std::string& path, int mode = 0755);
bool PathExists(const std::string& path);
// A regular file's modification time in nanoseconds since the epoch; -1 when
// `path` is not a regular file (missing, or a link: never followed).
int64_t ModificationTimeNs(const std::string& path);
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
