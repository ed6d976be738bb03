#include "agent/stack_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/spawn.h"
#include "util/files.h"

extern char** environ;

namespace primus::agent {
namespace {

// Kept per dump: py-spy prints a few KiB per thread.
constexpr size_t kMaxDumpBytes = 1 << 20;

}  // namespace

StackCollection::StackCollection(std::vector<Target> targets, io::EventPoller& poller, double timeout_s,
                                 const sigset_t* child_signal_mask)
    : poller_(poller), timeout_s_(timeout_s), deadline_(SteadyClock::now() + Seconds(timeout_s)) {
  std::string tool = FindExecutable("py-spy");
  if (tool.empty()) {
    no_tool_ = "no stack tool found: py-spy is not on PATH (pip install py-spy) - no stacks collected";
    return;
  }
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  for (const Target& target : targets) {
    Stacks stacks;
    stacks.rank = target.rank;
    Dump dump;
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
      stacks.text = std::string("cannot start py-spy: pipe: ") + std::strerror(errno);
      stacks_.push_back(std::move(stacks));
      dumps_.push_back(std::move(dump));
      continue;
    }
    io::UniqueFd read_end(ends[0]), write_end(ends[1]);
    ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);
    io::SpawnRequest request;
    request.executable = tool;
    request.argv = {"py-spy", "dump", "--pid", std::to_string(target.pid)};
    request.environment = env;
    request.descriptors = {{write_end.get(), 1}, {write_end.get(), 2}};
    if (null_fd >= 0) request.descriptors.push_back({null_fd, 0});
    request.signal_mask = child_signal_mask;
    request.death_signal = SIGKILL;
    auto child = io::SpawnProcess(request);
    if (!child) {
      stacks.text = child.error().message;
    } else if (Status added = poller_.Add(read_end.get(), kFirstStackTag + dumps_.size()); !added) {
      ::kill(-child->pid, SIGKILL);
      stacks.text = "cannot watch py-spy's output: " + added.error().message;
    } else {
      dump.pid = child->pid;
      dump.pipe = std::move(read_end);
      ++running_;
    }
    stacks_.push_back(std::move(stacks));
    dumps_.push_back(std::move(dump));
  }
  if (null_fd >= 0) ::close(null_fd);
}

StackCollection::~StackCollection() { Abandon(); }

void StackCollection::OnEvent(uint64_t tag) {
  size_t index = static_cast<size_t>(tag - kFirstStackTag);
  if (index >= dumps_.size() || !dumps_[index].pipe.valid()) return;
  Stacks& stacks = stacks_[index];
  char chunk[64 * 1024];
  while (true) {
    ssize_t got = ::read(dumps_[index].pipe.get(), chunk, sizeof(chunk));
    if (got > 0) {
      size_t room = kMaxDumpBytes > stacks.text.size() ? kMaxDumpBytes - stacks.text.size() : 0;
      stacks.text.append(chunk, std::min(room, static_cast<size_t>(got)));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    stacks.complete = true;
    Finish(index, nullptr);  // end of file (or a read error): the dump exited
    return;
  }
}

void StackCollection::Finish(size_t index, const char* note) {
  Dump& dump = dumps_[index];
  if (!dump.pipe.valid()) return;
  poller_.Remove(dump.pipe.get());
  dump.pipe.Reset();
  // Still running (its pipe is open, so its group still exists): the dump's
  // own process group, which we started, must not outlive the collection.
  if (dump.pid > 0 && !stacks_[index].complete) ::kill(-dump.pid, SIGKILL);
  if (note != nullptr) stacks_[index].text += (stacks_[index].text.empty() ? "" : "\n") + std::string(note);
  --running_;
}

void StackCollection::OnDeadline(SteadyTime now) {
  if (now < deadline_) return;
  std::string note = "(py-spy did not finish within " + std::to_string(static_cast<int>(timeout_s_)) +
                     " s; stopped, partial output above)";
  for (size_t i = 0; i < dumps_.size(); ++i) Finish(i, note.c_str());
}

void StackCollection::Abandon() {
  for (size_t i = 0; i < dumps_.size(); ++i) Finish(i, "(stack collection abandoned: the agent is stopping)");
}

}  // namespace primus::agent
