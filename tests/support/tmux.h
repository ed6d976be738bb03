// A detached tmux session of a fixed size on a private server (its socket
// in the test's directory), typed into like a user would: the real
// terminal checks of monitor, ps and logs -f.
#pragma once

#include <string>
#include <vector>

#include "run_process.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {

class Tmux {
 public:
  Tmux(const std::string& dir, int columns, int rows) : socket_(JoinPath(dir, "tmux.sock")) {
    ProcessResult started = Run({"new-session", "-d", "-s", "t", "-x", std::to_string(columns), "-y", std::to_string(rows),
                                 "-e", "PS1=$ ", "-e", "LANG=C.UTF-8", "-e", "NO_COLOR=", "-c", dir, "sh"});
    ok_ = started.exit_code == 0;
    error_ = started.all();
  }
  ~Tmux() { Run({"kill-server"}); }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  ProcessResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), {"tmux", "-u", "-S", socket_});
    ProcessOptions options;
    options.env["TMUX"] = std::nullopt;
    options.timeout_s = 10;
    return RunProcess(args, options);
  }
  void Type(const std::string& text) const { Run({"send-keys", "-t", "t", "-l", text}); }
  void Keys(const std::string& keys) const { Run({"send-keys", "-t", "t", keys}); }
  std::string Screen(bool colors = false) const {
    return colors ? Run({"capture-pane", "-p", "-e", "-t", "t"}).out : Run({"capture-pane", "-p", "-t", "t"}).out;
  }
  // The screen with wrapped lines joined: a line longer than the terminal
  // shows as one line here, longer than the width.
  std::string JoinedScreen() const { return Run({"capture-pane", "-p", "-J", "-t", "t"}).out; }
  std::string Format(const std::string& format) const { return std::string(Trim(Run({"display-message", "-p", "-t", "t", format}).out)); }

 private:
  std::string socket_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace primus::testing
