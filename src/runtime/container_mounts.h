// What the container sees of the host. The host's primus-cli goes in
// read-only at /opt/primus/bin/primus-cli (its built-in hooks beside it at
// /opt/primus/share/primus/hooks, where the binary looks for them; the
// profiles are compiled in), so an image needs no primus-cli of its own.
// The working directory is mounted at the same path and is the container's
// working directory, so relative paths mean the same inside, and logs,
// checkpoints and snapshots under it land on the host. Whatever else the
// inner primus-cli reads (configuration files, patches, hook and profile
// directories, the experiment files) or writes (the experiment workspace,
// the log directory) outside the working directory is mounted at its own
// path too: read-only, or read-write for what it writes.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

inline constexpr char kInnerBinary[] = "/opt/primus/bin/primus-cli";
inline constexpr char kInnerHooks[] = "/opt/primus/share/primus/hooks";

struct Mount {
  std::string host;       // absolute path (or a named volume, as the user wrote it)
  std::string container;  // absolute path
  std::string options;    // "ro", "rw,z", ... ("" = read-write)
  std::string raw;        // an engine --mount spec (type=bind,src=...) kept as is; host/container empty

  bool read_only() const;
  // The -v value "host:container[:options]" (raw mounts: their spec).
  std::string Spec() const;
};

// A --mount/--volume value: HOST:CTR[:OPTIONS], or PATH alone (the same path
// inside). A host path starting with '.' or '~' is made absolute (engines
// take a relative name for a named volume); a value with "type=" is the
// engine's own --mount syntax and passes through unchanged.
Result<Mount> ParseMount(const std::string& text, const std::string& cwd, const std::string& where);

struct MountRequest {
  std::string binary;                  // the running primus-cli (/proc/self/exe)
  std::string hooks_dir;               // its built-in hooks directory, "" when none
  std::string cwd;
  std::vector<std::string> read_only;  // paths the inner primus-cli reads; missing ones are skipped
  std::vector<std::string> writable;   // directories it writes; missing ones are created first
  std::vector<Mount> user;             // --mount and container.mounts, in order
};

struct MountPlan {
  std::vector<Mount> mounts;           // in order: binary, hooks, working directory, user, derived
  std::string workdir;                 // the container's working directory; "" when cwd is not mounted
  std::vector<std::string> create;     // writable directories to create on the host before a real run
  std::vector<std::string> warnings;
};

MountPlan PlanMounts(const MountRequest& inputs);

// `path` made absolute against `cwd` and cleaned lexically ("a/./b/../c" -> "/cwd/a/c").
std::string AbsolutePath(const std::string& path, const std::string& cwd);
// True when `path` is `dir` or inside it (both absolute and clean).
bool IsUnder(const std::string& path, const std::string& dir);

}  // namespace primus::runtime
