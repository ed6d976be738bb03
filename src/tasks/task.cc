#include "tasks/task.h"

#include <algorithm>

namespace primus::tasks {

TaskRegistry& TaskRegistry::Global() {
  static TaskRegistry registry;
  return registry;
}

std::vector<std::string> TaskRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& task : items()) names.push_back(task->name());
  std::sort(names.begin(), names.end());
  return names;
}

bool Task::IsHelpRequest(const std::vector<std::string>& args) const {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

}  // namespace primus::tasks
