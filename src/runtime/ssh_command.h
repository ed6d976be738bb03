// The command lines of the ssh runtime, with no side effects:
//
//   ssh -o BatchMode=yes -o ConnectTimeout=T -o ServerAliveInterval=5 -o ServerAliveCountMax=3
//       [ssh.options] [the mode's other flags] HOST -- '<remote command>'
//
// The remote command is one argument, read by the remote login shell (any
// POSIX shell: sh, dash, bash, zsh, ksh). Every word in it that comes from
// the user (paths, task arguments, --env values) is single-quoted by
// PosixQuote, so spaces, quotes, `$()`, globs and line breaks arrive as
// written and never become shell code. Only our own fixed text (the cache
// directory's "$HOME") is expanded remotely.
//
// On each host the agent is
//   cd -- '<cwd>' 2>/dev/null || cd; exec env PRIMUS_JOB_TOKEN_STDIN=1 PRIMUS_STOP_ON_STDIN_EOF=1
//     '<primus-cli>' [global options] direct --nnodes N --node-rank R --master-addr A --master-port P
//     [--nproc-per-node S] [--env K=V ...] [the user's direct options] -- <task> [args]
// or, under `ssh ... -- container [options] --`, the same agent inside the image:
//     '<primus-cli>' [global options] container [the user's container options] -- direct --nnodes N ... -- <task>
// (the container mode forwards PRIMUS_JOB_TOKEN by name, --env PRIMUS_JOB_TOKEN,
// and runs with --network=host, so the agents reach each other's control channel)
// and reads PRIMUS_JOB_TOKEN as the first line of its standard input (never
// a command line or a file); the end of its standard input (the ssh session
// ended) stops it as SIGTERM would (agent/stdin_session.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

// 'text' with each ' written as '\'' : exact for every byte, line breaks
// included, in every POSIX shell (unlike bash's $'...').
std::string PosixQuote(std::string_view text);
std::string PosixJoin(const std::vector<std::string>& argv);

// ssh's fixed options, then `user_options`, the host, "--" and the remote command.
std::vector<std::string> SshArgv(const std::vector<std::string>& user_options, int connect_timeout_s,
                                 const std::string& host, const std::string& remote_command);

// Where primus-cli is on a host: the launching host's path (a shared
// filesystem, or the same installation), or the per-user cache
// ${XDG_CACHE_HOME:-$HOME/.cache}/primus-cli/<sha256>/primus-cli.
struct RemoteBinary {
  std::string path;    // the launching host's absolute path
  std::string sha256;  // of the launching host's binary
  bool in_cache = false;
};
// The binary as a word of a remote shell command.
std::string RemoteBinaryWord(const RemoteBinary& binary);
// The cache directory as a word of a remote shell command ("$HOME" expanded there).
std::string RemoteCacheDirWord(const std::string& sha256);

// The line each host's login shell runs: cd, then exec the agent.
std::string AgentShellCommand(const RemoteBinary& binary, const std::string& cwd,
                              const std::vector<std::string>& arguments);

// The arguments after the binary for node `node_rank`:
//   [globals] [container [container_options] --] direct --nnodes N --node-rank R --master-addr A --master-port P [--nproc-per-node S]
//   [--env E ...] [direct_options] -- task...
struct NodeCommand {
  std::vector<std::string> globals;         // global options to repeat on each node
  int nnodes = 1;
  std::string master_addr;
  int master_port = 29500;
  int nproc_per_node = 0;                   // 0: not passed (the agent's default, or the user's)
  std::vector<std::string> env;             // K=V or FILE, passed as --env
  std::vector<std::string> direct_options;  // the user's `direct ... --` options, as written
  bool in_container = false;                // `ssh ... -- container ... --`: the agent runs inside the image
  std::vector<std::string> container_options;  // the user's `container ... --` options, as written
  std::vector<std::string> task;            // task and its arguments
};
std::vector<std::string> AgentArguments(const NodeCommand& node_command, int node_rank);

// The host check: one shell command printing, one per line,
//   same <sha256 of the binary at the launching host's path | missing>
//   cache <sha256 of the cached copy | missing>
//   glibc <getconf GNU_LIBC_VERSION's version, "2.36" | unknown>
//   cwd <yes | no>
std::string CheckShellCommand(const RemoteBinary& binary, const std::string& cwd);

struct HostCheck {
  bool same_path = false;  // the launching host's path holds the same binary
  bool cached = false;     // the cache holds it
  std::string glibc;       // "" when unknown
  bool cwd_exists = false;
};
// An Error (kUnavailable) when the output is not a check's.
Result<HostCheck> ParseCheckOutput(std::string_view output, const std::string& sha256);

// Copies the binary (on its standard input) into the cache, checks its
// hash there and moves it into place; a wrong hash removes it and exits 1.
std::string CopyShellCommand(const std::string& sha256);

// What an ssh that exited 255 said, as a reason for the host check's error:
// "authentication failed: ...", "unreachable: ...", or its last line.
enum class SshFailure { kUnreachable, kAuthentication, kOther };
SshFailure ClassifySshFailure(std::string_view stderr_text);
std::string DescribeSshFailure(std::string_view stderr_text);

}  // namespace primus::runtime
