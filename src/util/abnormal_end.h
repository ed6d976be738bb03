// What the process still does when it ends abnormally: an exception that
// escaped every handler (main's last resort) or std::terminate. A task that
// keeps a record registers how to finish it (train: metadata.json "failed"
// with the reason), so that no way out leaves a record saying "running".
#pragma once

#include <functional>
#include <string>

namespace primus {

using FinalRecord = std::function<void(const std::string& why)>;

// Registers `record` until the guard goes. The guard going the normal way
// means the record was finished; going because an exception unwinds through
// it, it runs the record first (main's last resort comes after the unwinding).
class AbnormalEndRecord {
 public:
  explicit AbnormalEndRecord(FinalRecord record);
  ~AbnormalEndRecord();
  AbnormalEndRecord(const AbnormalEndRecord&) = delete;
  AbnormalEndRecord& operator=(const AbnormalEndRecord&) = delete;

 private:
  int id_;
  int uncaught_at_start_;
};

// Runs every registered record, newest first, once each, with `why`.
void FinishRecordsAbnormally(const std::string& why);

// std::terminate (an exception in a thread or a noexcept function): says
// why on stderr, finishes the records and exits 1 instead of aborting.
void InstallTerminateHandler();

}  // namespace primus
