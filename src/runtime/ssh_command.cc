#include "runtime/ssh_command.h"

#include "util/strings.h"

namespace primus::runtime {

std::string PosixQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string PosixJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out.push_back(' ');
    out += PosixQuote(arg);
  }
  return out;
}

std::vector<std::string> SshArgv(const std::vector<std::string>& user_options, int connect_timeout_s,
                                 const std::string& host, const std::string& remote_command) {
  // ssh takes the first value of each option: the user's -o after ours would
  // lose, so BatchMode (no prompt can ever block a launch) is ours to set and
  // the keep-alive and timeout defaults are written after the user's options
  // only where the user did not set them.
  std::vector<std::string> argv = {"ssh", "-o", "BatchMode=yes"};
  std::string user_text = ToLower(Join(user_options, " "));
  argv.insert(argv.end(), user_options.begin(), user_options.end());
  auto add_default = [&](const std::string& key, const std::string& value) {
    if (user_text.find(ToLower(key)) == std::string::npos) {
      argv.push_back("-o");
      argv.push_back(key + "=" + value);
    }
  };
  add_default("ConnectTimeout", std::to_string(connect_timeout_s));
  add_default("ServerAliveInterval", "5");
  add_default("ServerAliveCountMax", "3");
  argv.push_back(host);
  argv.push_back("--");
  argv.push_back(remote_command);
  return argv;
}

std::string RemoteCacheDirWord(const std::string& sha256) {
  return "\"${XDG_CACHE_HOME:-$HOME/.cache}\"/primus-cli/" + sha256;
}

std::string RemoteBinaryWord(const RemoteBinary& binary) {
  return binary.in_cache ? RemoteCacheDirWord(binary.sha256) + "/primus-cli" : PosixQuote(binary.path);
}

std::string AgentShellCommand(const RemoteBinary& binary, const std::string& cwd,
                              const std::vector<std::string>& arguments) {
  return "cd -- " + PosixQuote(cwd) + " 2>/dev/null || cd; exec env PRIMUS_JOB_TOKEN_STDIN=1 PRIMUS_STOP_ON_STDIN_EOF=1 " +
         RemoteBinaryWord(binary) + " " + PosixJoin(arguments);
}

std::vector<std::string> AgentArguments(const NodeCommand& node_command, int node_rank) {
  std::vector<std::string> out = node_command.globals;
  if (node_command.in_container) {
    out.push_back("container");
    out.insert(out.end(), node_command.container_options.begin(), node_command.container_options.end());
    out.push_back("--");
  }
  out.insert(out.end(), {"direct", "--nnodes", std::to_string(node_command.nnodes), "--node-rank", std::to_string(node_rank),
                         "--master-addr", node_command.master_addr, "--master-port", std::to_string(node_command.master_port)});
  if (node_command.nproc_per_node > 0) out.insert(out.end(), {"--nproc-per-node", std::to_string(node_command.nproc_per_node)});
  for (const std::string& entry : node_command.env) out.insert(out.end(), {"--env", entry});
  out.insert(out.end(), node_command.direct_options.begin(), node_command.direct_options.end());
  out.push_back("--");
  out.insert(out.end(), node_command.task.begin(), node_command.task.end());
  return out;
}

std::string CheckShellCommand(const RemoteBinary& binary, const std::string& cwd) {
  RemoteBinary cached = binary;
  cached.in_cache = true;
  return "p=" + PosixQuote(binary.path) + "; c=" + RemoteBinaryWord(cached) +
         "; h() { if [ -f \"$1\" ] && [ -x \"$1\" ]; then sha256sum < \"$1\" | cut -c1-64; else echo missing; fi; }"
         "; echo \"same $(h \"$p\")\"; echo \"cache $(h \"$c\")\""
         "; g=$(getconf GNU_LIBC_VERSION 2>/dev/null); echo \"glibc ${g#glibc }\""
         "; if [ -d " + PosixQuote(cwd) + " ]; then echo 'cwd yes'; else echo 'cwd no'; fi";
}

Result<HostCheck> ParseCheckOutput(std::string_view output, const std::string& sha256) {
  HostCheck check;
  int seen = 0;
  for (const std::string& raw : Split(output, '\n')) {
    std::string_view line = Trim(raw);
    auto value = [&](std::string_view key) -> std::optional<std::string> {
      if (!line.starts_with(key) || line.size() < key.size() + 1 || line[key.size()] != ' ') return std::nullopt;
      return std::string(Trim(line.substr(key.size() + 1)));
    };
    if (auto v = value("same")) check.same_path = *v == sha256, ++seen;
    else if (auto v = value("cache")) check.cached = *v == sha256, ++seen;
    else if (auto v = value("glibc")) check.glibc = *v == "unknown" ? "" : *v, ++seen;
    else if (auto v = value("cwd")) check.cwd_exists = *v == "yes", ++seen;
    else if (line == "glibc") ++seen;  // getconf printed nothing
  }
  if (seen < 4) {
    return UnavailableError("the host check printed something else than expected: " +
                            EscapeControlCharacters(std::string(Trim(output)).substr(0, 200)),
                            "the remote login shell must be a POSIX shell (sh, bash, zsh, ksh) with coreutils");
  }
  return check;
}

std::string CopyShellCommand(const std::string& sha256) {
  return "umask 077; d=" + RemoteCacheDirWord(sha256) +
         "; mkdir -p \"$d\" || exit 1; t=\"$d/.primus-cli.$$\"; cat > \"$t\" || { rm -f \"$t\"; exit 1; }"
         "; h=$(sha256sum < \"$t\" | cut -c1-64)"
         "; if [ \"$h\" != " + PosixQuote(sha256) +
         " ]; then rm -f \"$t\"; echo \"the copy's sha256 is $h, not " + sha256 + "\" >&2; exit 1; fi"
         "; chmod 700 \"$t\" && mv -f \"$t\" \"$d/primus-cli\"";
}

SshFailure ClassifySshFailure(std::string_view stderr_text) {
  std::string text = ToLower(stderr_text);
  for (const char* word : {"permission denied", "host key verification failed", "too many authentication failures",
                           "no more authentication methods"}) {
    if (text.find(word) != std::string::npos) return SshFailure::kAuthentication;
  }
  for (const char* word : {"connection refused", "no route to host", "timed out", "could not resolve hostname",
                           "network is unreachable", "name or service not known", "connection closed by",
                           "connection reset", "temporary failure in name resolution"}) {
    if (text.find(word) != std::string::npos) return SshFailure::kUnreachable;
  }
  return SshFailure::kOther;
}

std::string DescribeSshFailure(std::string_view stderr_text) {
  std::string last;
  for (const std::string& line : Split(stderr_text, '\n')) {
    std::string_view trimmed = Trim(line);
    if (!trimmed.empty() && !trimmed.starts_with("Warning: Permanently added")) last = std::string(trimmed);
  }
  last = EscapeControlCharacters(last);
  switch (ClassifySshFailure(stderr_text)) {
    case SshFailure::kAuthentication: return "authentication failed (" + last + ")";
    case SshFailure::kUnreachable: return "unreachable (" + last + ")";
    case SshFailure::kOther: break;
  }
  return last.empty() ? "ssh failed with no message" : last;
}

}  // namespace primus::runtime
