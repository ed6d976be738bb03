#include "agent/stdin_session.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "agent/launch_spec.h"

namespace primus::agent {
namespace {

constexpr char kTokenStdin[] = "PRIMUS_JOB_TOKEN_STDIN";
constexpr char kStopOnEof[] = "PRIMUS_STOP_ON_STDIN_EOF";
constexpr size_t kMaxTokenLine = 4096;

bool TakeFlag(const char* name) {
  const char* value = std::getenv(name);
  bool set = value != nullptr && std::string(value) == "1";
  ::unsetenv(name);
  return set;
}

void WatchForEof(int signal) {
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
  }
  ::kill(::getpid(), signal);
}

}  // namespace

Result<std::string> ReadTokenLine(int fd) {
  std::string line;
  while (line.size() <= kMaxTokenLine) {
    char c = 0;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UnavailableError(std::string("cannot read the job token from standard input: ") + std::strerror(errno));
    if (n == 0 || c == '\n') break;
    line.push_back(c);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kMaxTokenLine) {
    return UnavailableError(std::string(kTokenStdin) + "=1 but the first line of standard input is not a job token");
  }
  if (line.empty()) {
    return UnavailableError(std::string(kTokenStdin) + "=1 but standard input ended before the job token",
                            "write the token and a line break to the agent's standard input");
  }
  return line;
}

Status SetUpStdinSession() {
  bool token_from_stdin = TakeFlag(kTokenStdin);
  bool stop_on_eof = TakeFlag(kStopOnEof);
  if (token_from_stdin) {
    Result<std::string> token = ReadTokenLine(STDIN_FILENO);
    if (!token.ok()) return token.error();
    ::setenv(kJobTokenVariable, token->c_str(), 1);
  }
  if (stop_on_eof) {
    // The thread must never take a signal meant for the agent's signalfd:
    // it starts with every signal blocked.
    struct sigaction hangup = {};
    sigaction(SIGHUP, nullptr, &hangup);
    int signal = hangup.sa_handler == SIG_IGN ? SIGTERM : SIGHUP;  // nohup's choice stays
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread(WatchForEof, signal).detach();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  return Status::Ok();
}

}  // namespace primus::agent
