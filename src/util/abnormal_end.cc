#include "util/abnormal_end.h"

#include <unistd.h>

#include <exception>
#include <map>
#include <mutex>

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
  ::_exit(1);
}

}  // namespace

AbnormalEndRecord::AbnormalEndRecord(FinalRecord record) {
  Records& global = Global();
  std::lock_guard<std::mutex> lock(global.mutex);
  id_ = global.next++;
  global.records[id_] = std::move(record);
}

AbnormalEndRecord::~AbnormalEndRecord() {
  Records& global = Global();
  std::lock_guard<std::mutex> lock(global.mutex);
  global.records.erase(id_);
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
