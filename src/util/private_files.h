// What primus-cli creates on a shared node is its user's alone. Run and
// experiment directories, logs, snapshots and metadata are made so that no
// other local user can read them, redirect a write through a link, or swap a
// directory under us:
//   - a directory is created exclusively with mode 0700; one that exists
//     already is taken only when lstat says it is a real directory (not a
//     symbolic link), owned by this user and writable by nobody else, and
//     its parent is not open to every user without the sticky bit;
//   - a file is created with O_CREAT|O_EXCL|O_NOFOLLOW (never an existing
//     file, never through a link), mode 0600;
//   - a file is replaced through a temporary file with an unpredictable name
//     in the same directory, then rename(2) (util/files.h WriteFileAtomic).
// A refusal is an UnavailableError (exit 4) naming the path and its owner.
// Teams that read each other's runs turn on group reading (0750/0640) with
// the launcher setting `main.group_readable` (docs/security.md); the process
// umask still applies, so a stricter one wins. A group of the user's own name
// with no other member counts as the user's (umask 002 systems).
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <string>

#include "util/error.h"

namespace primus {

// Process-wide, set once when the launcher configuration is known (main.group_readable).
void ShareWithGroup(bool share);
int PrivateDirMode();   // 0700, or 0750 when shared with the group
int PrivateFileMode();  // 0600, or 0640 when shared with the group

// Whether an existing directory may be a symbolic link: never for one we
// create, or a link this user owns (a user's own `--log-dir ~/logs` pointing
// at scratch space) for a path the user named.
enum class LinkPolicy { kRefuse, kOwnLinkOnly };

// Checks that `path` is a directory of ours as described above.
Status CheckPrivateDir(const std::string& path, LinkPolicy links = LinkPolicy::kRefuse);

// Creates the directory `path` (its parent must exist), or accepts it when
// it exists and CheckPrivateDir passes. `created` (optional): made now.
Status MakePrivateDir(const std::string& path, bool* created = nullptr);

// MakePrivateDir for `base`/`relative` and every directory between: `base`
// is the user's choice and is created with plain MakeDirs when missing (mode
// PrivateDirMode()), each component of `relative` is ours.
Status MakePrivateDirs(const std::string& base, const std::string& relative);

// A directory that did not exist before, ours, in `parent`: `parent`/`name`,
// or when that is taken (by anyone) `name`_<8 random hex digits> (kRandom),
// or `name`_2, `name`_3, ... (kCounter). Returns the path made.
enum class FreshName { kRandom, kCounter };
Result<std::string> MakeFreshDir(const std::string& parent, const std::string& name,
                                 FreshName suffix = FreshName::kRandom);

// Whether `path` is a regular file of this user, looked at without following
// a link (another user's file, or a link in a shared directory, is not): for
// readers of what a shared directory may hold. `modified_ns` (optional): its
// modification time.
bool IsOwnRegularFile(const std::string& path, int64_t* modified_ns = nullptr);

// A new file opened for writing: O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode
// PrivateFileMode(). Returns the descriptor; the caller closes it.
Result<int> CreatePrivateFile(const std::string& path, int flags = O_WRONLY);

// A file of ours opened for appending, created when missing: never through a
// link, never another user's file. Returns the descriptor.
Result<int> OpenPrivateFileForAppend(const std::string& path);

// "root", "alice (uid 1001)" or "uid 4242" for an owner that has no name.
std::string DescribeOwner(unsigned uid);

// ${TMPDIR:-/tmp}/primus-<uid>: where a run without --log-dir keeps its logs.
std::string DefaultRunsDir();

}  // namespace primus
