#include "util/private_files.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "util/files.h"
#include "util/random.h"
#include "util/strings.h"

namespace primus {
namespace {

std::atomic<bool> g_share_with_group{false};

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Error Refuse(const std::string& path, const std::string& why) {
  return UnavailableError(
      "refusing " + path + ": " + why,
      "primus-cli writes only into directories of its own user that no one else can change; remove it (or have "
      "its owner remove it) or choose another directory");
}

// The parent of a directory we make or join: when every user may write to
// it, only the sticky bit (as on /tmp) keeps them from renaming our entry.
Status CheckParent(const std::string& path) {
  std::string parent = DirName(path);
  struct stat info;
  if (::stat(parent.c_str(), &info) != 0) return Status::Ok();  // mkdir reports it
  if ((info.st_mode & S_IWOTH) != 0 && (info.st_mode & S_ISVTX) == 0) {
    return Refuse(path, "its parent " + parent + " (mode " + ModeText(info.st_mode) +
                            ") lets every user rename or replace what is in it (no sticky bit)");
  }
  return Status::Ok();
}

// Whether `gid` is the user's private group (the group of the user's own
// name, with no other member): writable by that group is writable by the
// user alone (umask 002 systems make directories so).
bool IsPrivateGroup(gid_t gid) {
  passwd user;
  passwd* found_user = nullptr;
  char user_buffer[4096];
  if (::getpwuid_r(::geteuid(), &user, user_buffer, sizeof(user_buffer), &found_user) != 0 || found_user == nullptr) {
    return false;
  }
  group entry;
  group* found = nullptr;
  char buffer[16384];
  if (::getgrgid_r(gid, &entry, buffer, sizeof(buffer), &found) != 0 || found == nullptr) return false;
  if (std::string_view(found->gr_name) != found_user->pw_name || found_user->pw_gid != gid) return false;
  for (char** member = found->gr_mem; member != nullptr && *member != nullptr; ++member) {
    if (std::string_view(*member) != found_user->pw_name) return false;
  }
  return true;
}

Status CheckDirectoryInfo(const std::string& path, const struct stat& info) {
  if (!S_ISDIR(info.st_mode)) return Refuse(path, "it exists and is not a directory");
  if (info.st_uid != ::geteuid()) {
    return Refuse(path, "it is owned by " + DescribeOwner(info.st_uid) + ", not by " + DescribeOwner(::geteuid()));
  }
  bool others_write = (info.st_mode & S_IWOTH) != 0 || ((info.st_mode & S_IWGRP) != 0 && !IsPrivateGroup(info.st_gid));
  if (others_write) {
    return UnavailableError("refusing " + path + ": other users may write to it (mode " + ModeText(info.st_mode) + ")",
                            "make it yours alone (chmod go-w " + path + ") or choose another directory");
  }
  return Status::Ok();
}

}  // namespace

bool IsOwnRegularFile(const std::string& path, int64_t* modified_ns) {
  struct stat info{};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) return false;
  if (modified_ns != nullptr) *modified_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  return true;
}

void ShareWithGroup(bool share) { g_share_with_group = share; }
int PrivateDirMode() { return g_share_with_group ? 0750 : 0700; }
int PrivateFileMode() { return g_share_with_group ? 0640 : 0600; }

std::string DescribeOwner(unsigned uid) {
  passwd entry;
  passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr && found->pw_name) {
    std::string name = found->pw_name;
    return uid == 0 ? name : name + " (uid " + std::to_string(uid) + ")";
  }
  return "uid " + std::to_string(uid);
}

Status CheckPrivateDir(const std::string& path, LinkPolicy links) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    return UnavailableError("cannot use directory " + path + ": " + std::strerror(errno));
  }
  if (S_ISLNK(info.st_mode)) {
    if (links == LinkPolicy::kRefuse) {
      return Refuse(path, "it is a symbolic link (owned by " + DescribeOwner(info.st_uid) + ")");
    }
    if (info.st_uid != ::geteuid()) {
      return Refuse(path, "it is a symbolic link owned by " + DescribeOwner(info.st_uid) + ", not by " +
                              DescribeOwner(::geteuid()));
    }
    if (::stat(path.c_str(), &info) != 0) {
      return UnavailableError("cannot use directory " + path + ": " + std::strerror(errno));
    }
  }
  return CheckDirectoryInfo(path, info);
}

Status MakePrivateDir(const std::string& path, bool* created) {
  if (created != nullptr) *created = false;
  if (Status parent = CheckParent(path); !parent) return parent;
  if (::mkdir(path.c_str(), static_cast<mode_t>(PrivateDirMode())) == 0) {
    // Ours and new; lstat again all the same, in case the parent let it be swapped.
    if (Status checked = CheckPrivateDir(path); !checked) return checked;
    if (created != nullptr) *created = true;
    return Status::Ok();
  }
  if (errno != EEXIST) {
    return UnavailableError("cannot create directory " + path + ": " + std::strerror(errno),
                            "check that the parent directory exists and is writable");
  }
  return CheckPrivateDir(path);
}

Status MakePrivateDirs(const std::string& base, const std::string& relative) {
  if (!base.empty() && !PathExists(base)) {
    if (Status made = MakeDirs(base, PrivateDirMode()); !made) return made;
  }
  std::string path = base;
  for (const std::string& part : Split(relative, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return UnavailableError("cannot create " + JoinPath(base, relative) + ": it climbs with '..'");
    path = path.empty() ? part : JoinPath(path, part);
    if (Status made = MakePrivateDir(path); !made) return made;
  }
  return Status::Ok();
}

Result<std::string> MakeFreshDir(const std::string& parent, const std::string& name, FreshName suffix) {
  if (Status checked = CheckParent(JoinPath(parent, name)); !checked) return checked.error();
  const int tries = suffix == FreshName::kCounter ? 1000 : 100;
  for (int attempt = 0; attempt < tries; ++attempt) {
    std::string path = JoinPath(parent, attempt == 0                     ? name
                                        : suffix == FreshName::kCounter ? name + "_" + std::to_string(attempt + 1)
                                                                        : name + "_" + RandomHex(4));
    if (::mkdir(path.c_str(), static_cast<mode_t>(PrivateDirMode())) == 0) {
      if (Status checked = CheckPrivateDir(path); !checked) return checked.error();
      return path;
    }
    if (errno != EEXIST) {
      return UnavailableError("cannot create directory " + path + ": " + std::strerror(errno),
                              "check that " + parent + " is writable and not full");
    }
  }
  return UnavailableError("cannot find a free name for " + JoinPath(parent, name) + "_* after " +
                          std::to_string(tries) + " tries");
}

Result<int> CreatePrivateFile(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  static_cast<mode_t>(PrivateFileMode()));
  if (fd >= 0) return fd;
  int saved = errno;
  if (saved == EEXIST) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return Refuse(path, "a file of that name appeared meanwhile");
    return Refuse(path, S_ISLNK(info.st_mode)
                            ? "a symbolic link (owned by " + DescribeOwner(info.st_uid) + ") is in its place"
                            : "a file of that name exists already (owned by " + DescribeOwner(info.st_uid) + ")");
  }
  return UnavailableError("cannot create " + path + ": " + std::strerror(saved),
                          "check that the directory is writable and not full");
}

Result<int> OpenPrivateFileForAppend(const std::string& path) {
  // O_NONBLOCK: a FIFO planted in its place must not make us wait for a reader.
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                  static_cast<mode_t>(PrivateFileMode()));
  if (fd < 0) {
    int saved = errno;
    if (saved == ELOOP) return Refuse(path, "a symbolic link is in its place");
    return UnavailableError("cannot open " + path + " for appending: " + std::strerror(saved));
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) {
    ::close(fd);
    return Refuse(path, "it is not a regular file of " + DescribeOwner(::geteuid()));
  }
  ::fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);
  return fd;
}

std::string DefaultRunsDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  return JoinPath(base, "primus-" + std::to_string(::getuid()));
}

}  // namespace primus
