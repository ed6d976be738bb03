#include "agent/stack_dump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cctype>
#include <cstring>

#include "agent/worker_env.h"
#include "analyze/flight_record.h"
#include "agent/process_tree.h"
#include "io/spawn.h"
#include "util/strings.h"
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
  child_signal_mask_ = child_signal_mask;
  std::string tool = FindExecutable("py-spy");
  if (tool.empty()) {
    SignalDumpers(targets);
    AskFlightRecorders(targets);
    return;
  }
  for (const Target& target : targets) {
    stacks_.emplace_back();
    stacks_.back().rank = target.rank;
    dumps_.emplace_back();
    StartDumpProcess(stacks_.size() - 1, tool, {"py-spy", "dump", "--pid", std::to_string(target.pid)});
  }
  AskFlightRecorders(targets);
}

void StackCollection::StartDumpProcess(size_t index, const std::string& tool, std::vector<std::string> argv) {
  Stacks& stacks = stacks_[index];
  Dump& dump = dumps_[index];
  std::string name = argv.front();
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    stacks.text = "cannot start " + name + ": pipe: " + std::strerror(errno);
    return;
  }
  io::UniqueFd read_end(ends[0]), write_end(ends[1]);
  ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  io::UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  io::SpawnRequest request;
  request.executable = tool;
  request.argv = std::move(argv);
  request.environment = env;
  request.descriptors = {{write_end.get(), 1}, {write_end.get(), 2}};
  if (null_fd.valid()) request.descriptors.push_back({null_fd.get(), 0});
  request.signal_mask = child_signal_mask_;
  request.death_signal = SIGKILL;
  auto child = io::SpawnProcess(request);
  if (!child) {
    stacks.text = child.error().message;
  } else if (Status added = poller_.Add(read_end.get(), kFirstStackTag + index); !added) {
    ::kill(-child->pid, SIGKILL);
    stacks.text = "cannot watch " + name + "'s output: " + added.error().message;
  } else {
    dump.pid = child->pid;
    dump.pipe = std::move(read_end);
    ++processes_running_;
  }
}

StackCollection::~StackCollection() { Abandon(); }

SteadyTime StackCollection::deadline() const {
  SteadyTime next = processes_running_ > 0 ? deadline_ : SteadyTime::max();
  if (dumper_deadline_) next = std::min(next, *dumper_deadline_);
  if (flight_deadline_) next = std::min(next, *flight_deadline_);
  return next == SteadyTime::max() ? deadline_ : next;
}

namespace {

// Writes one byte to a flight recorder's debug pipe: only a FIFO of ours
// (never a file or link planted in its place), never blocking (no reader:
// the worker has no NCCL process group, and nothing is written).
bool WriteDumpPipe(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat status {};
  bool ours = ::fstat(fd, &status) == 0 && S_ISFIFO(status.st_mode) && status.st_uid == ::geteuid();
  bool written = ours && ::write(fd, "1", 1) == 1;
  ::close(fd);
  return written;
}

}  // namespace

void StackCollection::AskFlightRecorders(const std::vector<Target>& targets) {
  for (size_t i = 0; i < targets.size(); ++i) {
    const Target& target = targets[i];
    if (target.flight_pipe.empty() || target.flight_dump.empty()) continue;
    // A dump from before (NCCL's own timeout) must not pass for this one;
    // it is kept (the file may be the user's), and told apart by its time.
    int64_t before = ModificationTimeNs(target.flight_dump);
    if (WriteDumpPipe(target.flight_pipe)) flight_files_.push_back({i, target.flight_dump, before});
  }
  if (!flight_files_.empty()) flight_deadline_ = SteadyClock::now() + Seconds(std::min(timeout_s_, kFlightDumpWaitS));
}

void StackCollection::ReadFlightDumps() {
  for (const FlightFile& file : flight_files_) {
    int64_t now = ModificationTimeNs(file.path);
    if (now < 0 || now == file.mtime_ns_before) continue;  // not written since the ask
    auto bytes = ReadRegularFile(file.path, analyze::kMaxFlightRecordBytes);
    if (bytes.ok() && file.index < stacks_.size()) stacks_[file.index].flight_dump = std::move(*bytes);
  }
  flight_deadline_.reset();
}

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
  --processes_running_;
}

namespace {

// Whether `pid` catches `signal` (its SigCgt mask in /proc): a process that
// does not would be killed by a real-time signal, so only those are sent it.
bool Catches(pid_t pid, int signal) {
  std::string hex = ProcessStatusValue(pid, "SigCgt");
  int bit = signal - 1;
  int digit_from_right = bit / 4;
  if (digit_from_right >= static_cast<int>(hex.size())) return false;
  char c = hex[hex.size() - 1 - static_cast<size_t>(digit_from_right)];
  int value = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
  return (value >> (bit % 4)) & 1;
}

}  // namespace

pid_t DumperProcess(pid_t worker) {
  if (Catches(worker, StackSignal())) return worker;
  for (const ProcessInfo& process : ListDescendants(worker)) {
    if (Catches(process.pid, StackSignal())) return process.pid;
  }
  return 0;
}

void StackCollection::SignalDumpers(const std::vector<Target>& targets) {
  // The last resort for a worker without the dumper (not Python, or the
  // dumper off): gdb's backtrace of every thread.
  std::string gdb = FindExecutable("gdb");
  bool signalled = false;
  for (const Target& target : targets) {
    stacks_.emplace_back();
    Stacks& stacks = stacks_.back();
    stacks.rank = target.rank;
    dumps_.emplace_back();
    off_t size = 0;
    pid_t dumper = target.stack_file.empty() ? 0 : DumperProcess(target.pid);
    if (dumper != 0) {
      struct stat status {};
      if (::stat(target.stack_file.c_str(), &status) == 0) size = status.st_size;
      if (::kill(dumper, StackSignal()) == 0) {
        signalled = true;
        dumper_files_.emplace_back(target.stack_file, size);
        continue;
      }
      stacks.text = std::string("cannot signal its stack dumper: ") + std::strerror(errno);
    } else if (!gdb.empty()) {
      StartDumpProcess(stacks_.size() - 1, gdb,
                       {"gdb", "--batch", "--nx", "-p", std::to_string(target.pid), "-ex", "thread apply all bt"});
      if (dumps_.back().pipe.valid()) stacks.text = "(native stacks of every thread, from gdb)\n";
    } else {
      stacks.text = "(no stack dumper loaded in it: not a Python worker, or one started without primus-cli's "
                    "PYTHONPATH; and no gdb on PATH)";
    }
    dumper_files_.emplace_back("", 0);
  }
  if (!signalled && processes_running_ == 0) {
    no_tool_ = "no stack tool found: py-spy and gdb are not on PATH and no worker has primus-cli's stack dumper "
               "loaded (a Python worker has unless direct.stack_dumper is false)";
    dumper_files_.clear();
    return;
  }
  if (signalled) dumper_deadline_ = SteadyClock::now() + Seconds(std::min(timeout_s_, kDumperWaitS));
  else dumper_files_.clear();
}

void StackCollection::ReadDumperFiles() {
  for (size_t i = 0; i < dumper_files_.size(); ++i) {
    const auto& [path, offset] = dumper_files_[i];
    if (path.empty()) continue;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    std::string text;
    if (fd >= 0) {
      char chunk[64 * 1024];
      ssize_t got;
      off_t at = offset;
      while (text.size() < kMaxDumpBytes && (got = ::pread(fd, chunk, sizeof(chunk), at)) > 0) {
        text.append(chunk, std::min(kMaxDumpBytes - text.size(), static_cast<size_t>(got)));
        at += got;
      }
      ::close(fd);
    }
    Stacks& stacks = stacks_[i];
    if (text.empty()) {
      stacks.text = "(its stack dumper wrote nothing within " + std::to_string(kDumperWaitS).substr(0, 3) +
                    " s: not a Python worker, or stopped)";
    } else {
      stacks.text = "(Python stacks of every thread, from the worker's own faulthandler)\n" + text;
      stacks.complete = true;
    }
  }
  dumper_files_.clear();
  dumper_deadline_.reset();
}

void StackCollection::OnDeadline(SteadyTime now) {
  if (flight_deadline_ && now >= *flight_deadline_) ReadFlightDumps();
  if (dumper_deadline_ && now >= *dumper_deadline_) ReadDumperFiles();
  if (processes_running_ == 0 || now < deadline_) return;
  std::string note = "(the stack tool did not finish within " + std::to_string(static_cast<int>(timeout_s_)) +
                     " s; stopped, partial output above)";
  for (size_t i = 0; i < dumps_.size(); ++i) Finish(i, note.c_str());
}

void StackCollection::Abandon() {
  flight_deadline_.reset();
  dumper_deadline_.reset();
  dumper_files_.clear();
  for (size_t i = 0; i < dumps_.size(); ++i) Finish(i, "(stack collection abandoned: the agent is stopping)");
}

}  // namespace primus::agent
