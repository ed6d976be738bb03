#include "util/abnormal_end.h"

#include <unistd.h>

#include <exception>
#include <map>
#include <mutex>

#include "util/console_writer.h"

namespace primus {
namespace {

struct Records {
  std::mutex mutex;
  std::map<int, FinalRecord> records;
  int next = 0;
};

Records& Global() {
  static Records* records = new Records();  // alive during exit and terminate
  return *records;
}

void OnTerminate() {
  std::string why = "an internal error ended primus-cli";
  if (std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& error) {
      why += std::string(": ") + error.what();
    } catch (...) {
      why += ": an unknown exception";
    }
  }
  std::string line = "primus-cli: " + why + " (please report it)\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  FinishRecordsAbnormally(why);
  console_writer::Drain(1.0);  // what the records said reaches the console, briefly
  ::_exit(1);
}

}  // namespace

AbnormalEndRecord::AbnormalEndRecord(FinalRecord record) : uncaught_at_start_(std::uncaught_exceptions()) {
  Records& global = Global();
  std::lock_guard<std::mutex> lock(global.mutex);
  id_ = global.next++;
  global.records[id_] = std::move(record);
}

AbnormalEndRecord::~AbnormalEndRecord() {
  Records& global = Global();
  FinalRecord record;
  {
    std::lock_guard<std::mutex> lock(global.mutex);
    auto it = global.records.find(id_);
    if (it == global.records.end()) return;  // already finished abnormally
    record = std::move(it->second);
    global.records.erase(it);
  }
  if (std::uncaught_exceptions() > uncaught_at_start_) {
    try {
      record("an internal error ended primus-cli (an exception escaped; its message follows on stderr)");
    } catch (...) {
    }
  }
}

void FinishRecordsAbnormally(const std::string& why) {
  Records& global = Global();
  std::map<int, FinalRecord> records;
  {
    std::lock_guard<std::mutex> lock(global.mutex);
    records.swap(global.records);  // once each, even if a record throws or terminates
  }
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    try {
      it->second(why);
    } catch (...) {
    }
  }
}

void InstallTerminateHandler() { std::set_terminate(OnTerminate); }

}  // namespace primus
