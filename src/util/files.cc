#include "util/files.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "util/private_files.h"
#include "util/random.h"
#include "util/strings.h"

namespace primus {

namespace {

// Reads `fd` to its end, or until it holds more than `max_bytes` (then
// *over_limit is set and reading stops). Closes nothing.
Status ReadAll(int fd, const std::string& path, size_t max_bytes, std::string* content, bool* over_limit) {
  char buffer[65536];
  while (true) {
    // One byte beyond the limit tells a file that is larger than it.
    size_t want = std::min(sizeof(buffer), max_bytes - std::min(max_bytes, content->size()) + 1);
    ssize_t n = ::read(fd, buffer, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return UnavailableError("cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) return Status::Ok();
    content->append(buffer, static_cast<size_t>(n));
    if (content->size() > max_bytes) {
      *over_limit = true;
      return Status::Ok();
    }
  }
}

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return UnavailableError("cannot read " + path + ": " + std::strerror(errno));
  }
  std::string content;
  bool over_limit = false;
  Status read = ReadAll(fd, path, SIZE_MAX - 1, &content, &over_limit);
  ::close(fd);
  if (!read) return read.error();
  return content;
}

Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return UnavailableError("cannot read " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int saved = errno;
    ::close(fd);
    return UnavailableError("cannot read " + path + ": " + std::strerror(saved));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a pipe (FIFO)"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return UnavailableError(path + " is " + std::string(kind) + ", not a regular file",
                            "name a file; to use generated text, write it to a file first");
  }
  const std::string limit = "the limit of " + std::to_string(max_bytes) + " bytes for this input";
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return UnavailableError(path + " is " + std::to_string(static_cast<uint64_t>(st.st_size)) +
                            " bytes, larger than " + limit);
  }
  std::string content;
  content.reserve(static_cast<size_t>(st.st_size));
  bool over_limit = false;
  Status read = ReadAll(fd, path, max_bytes, &content, &over_limit);
  ::close(fd);
  if (!read) return read.error();
  if (over_limit) return UnavailableError(path + " grew past " + limit + " while being read");
  return content;
}

Status WriteFileAtomic(const std::string& path, std::string_view content, int mode, Durability durability) {
  if (mode < 0) mode = PrivateFileMode();
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temporary = dir + "." + name + ".tmp." + RandomHex(8);
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return UnavailableError("cannot write " + path + ": " + std::strerror(errno));
  const char* data = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = n == 0 ? ENOSPC : errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return UnavailableError("cannot write " + path + ": " + std::strerror(saved));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  bool synced = durability == Durability::kUnsynced || ::fsync(fd) == 0;
  int sync_error = errno;
  if (!synced || ::close(fd) != 0) {
    int saved = synced ? errno : sync_error;
    ::unlink(temporary.c_str());
    return UnavailableError("cannot flush " + path + ": " + std::strerror(saved));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temporary.c_str());
    return UnavailableError("cannot rename into " + path + ": " + std::strerror(saved));
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& path, int mode) {
  if (path.empty()) return Status::Ok();
  std::string partial;
  for (const std::string& part : Split(path, '/')) {
    partial += part;
    if (!partial.empty() && ::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      return UnavailableError("cannot create directory " + partial + ": " + std::strerror(errno),
                              "check that the parent directory is writable");
    }
    partial += '/';
  }
  if (!IsDirectory(path)) {
    return UnavailableError("cannot create directory " + path + ": a file of that name exists");
  }
  return Status::Ok();
}

int64_t ModificationTimeNs(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return -1;
  return int64_t{status.st_mtim.tv_sec} * 1'000'000'000 + status.st_mtim.tv_nsec;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string FindExecutable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return IsExecutableFile(name) ? name : "";
  const char* path = std::getenv("PATH");
  for (const std::string& dir : Split(path ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

std::string HomeDir() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (passwd* entry = getpwuid(getuid()); entry && entry->pw_dir) return entry->pw_dir;
  return "/";
}

std::string CurrentDir() {
  char buffer[4096];
  return ::getcwd(buffer, sizeof(buffer)) ? std::string(buffer) : std::string(".");
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string JoinPath(const std::string& base, const std::string& relative) {
  if (relative.empty()) return base;
  if (relative.front() == '/' || base.empty() || base == ".") return relative;
  return base.back() == '/' ? base + relative : base + "/" + relative;
}

Result<std::string> SelfExecutable() {
  char path[4096] = {};
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) {
    return UnavailableError(std::string("cannot find this primus-cli binary (/proc/self/exe): ") + std::strerror(errno),
                            "run primus-cli from a mounted /proc");
  }
  return std::string(path, static_cast<size_t>(n));
}

}  // namespace primus
