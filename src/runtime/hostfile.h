// The hosts of an `ssh` job, from the hostfile formats people already have:
//
//   node1                      one host per line
//   node1 slots=8              OpenMPI and DeepSpeed (max_slots=N / max-slots=N accepted, not used)
//   node1:8                    MPICH
//   user@node1 slots=8         a login name, as ssh takes it
//   # a comment                whole-line and trailing comments, blank lines
//
// or from a Slurm-style host list on the command line (gpu[01-04],gpu07).
// `slots` is the number of workers the node agent starts on that host
// (direct's --nproc-per-node); a host without slots lets the agent choose
// (one per GPU). A malformed line is a ConfigError naming file:line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

struct HostEntry {
  std::string host;   // as ssh takes it: "node1" or "user@node1"
  int slots = 0;      // 0: not given
  std::string where;  // "hostfile:3", or "--hosts" for a host list
};

// `text` is the file's contents, `path` names it in errors.
Result<std::vector<HostEntry>> ParseHostfile(std::string_view text, const std::string& path);

// A Slurm-style host list (util/hostlist.h), no slots. `origin` names it in errors.
Result<std::vector<HostEntry>> HostsFromList(std::string_view expression, const std::string& origin);

// The host name without a "user@" in front: what --include/--exclude match.
std::string HostName(const std::string& host);

// The hosts to use, in order: those named by `include` (a host list; empty:
// all), minus those named by `exclude`, then the first `count` (0: all).
// A name in include/exclude that is not in `hosts`, fewer hosts than
// `count`, or no host left is a UsageError.
Result<std::vector<HostEntry>> SelectHosts(const std::vector<HostEntry>& hosts, std::string_view include,
                                           std::string_view exclude, int count);

// The workers per node all hosts agree on (0 when none gives slots); a
// ConfigError naming two hosts when they differ, since every node of a job
// runs the same number of workers.
Result<int> CommonSlots(const std::vector<HostEntry>& hosts);

}  // namespace primus::runtime
