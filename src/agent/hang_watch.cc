#include "agent/hang_watch.h"

#include <sys/stat.h>
#include <time.h>

namespace primus::agent {

void HangWatch::Track(size_t worker, std::string heartbeat_file, SteadyTime now) {
  if (!enabled_) return;
  if (entries_.size() <= worker) entries_.resize(worker + 1);
  entries_[worker] = Entry{true, std::move(heartbeat_file), now};
}

void HangWatch::Untrack(size_t worker) {
  if (worker < entries_.size()) entries_[worker].tracked = false;
}

std::optional<SteadyTime> HangWatch::NextDeadline() const {
  std::optional<SteadyTime> earliest;
  for (const Entry& entry : entries_) {
    if (!entry.tracked) continue;
    SteadyTime deadline = entry.last_activity + timeout_;
    if (!earliest || deadline < *earliest) earliest = deadline;
  }
  return earliest;
}

std::vector<size_t> HangWatch::CollectHung(SteadyTime now) {
  std::vector<size_t> hung;
  if (!enabled_) return hung;
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    if (!entry.tracked || entry.last_activity + timeout_ > now) continue;
    struct stat info;
    if (::stat(entry.heartbeat_file.c_str(), &info) == 0) {
      // The mtime is wall-clock time; translate its age onto the steady clock.
      auto age = std::chrono::seconds(wall.tv_sec - info.st_mtim.tv_sec) +
                 std::chrono::nanoseconds(wall.tv_nsec - info.st_mtim.tv_nsec);
      SteadyTime touched = now - std::chrono::duration_cast<SteadyClock::duration>(age);
      if (touched > entry.last_activity) entry.last_activity = touched;
    }
    if (entry.last_activity + timeout_ <= now) hung.push_back(i);
  }
  return hung;
}

}  // namespace primus::agent
