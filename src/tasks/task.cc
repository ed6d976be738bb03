#include "tasks/task.h"

#include <algorithm>

namespace primus::tasks {

TaskRegistry& TaskRegistry::Global() {
  static TaskRegistry registry;
  return registry;
}

void TaskRegistry::Register(std::unique_ptr<Task> task) { tasks_.push_back(std::move(task)); }

Task* TaskRegistry::Find(const std::string& name) const {
  for (const auto& task : tasks_) {
    if (task->name() == name) return task.get();
  }
  return nullptr;
}

std::vector<std::string> TaskRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& task : tasks_) names.push_back(task->name());
  std::sort(names.begin(), names.end());
  return names;
}

bool Task::IsHelpRequest(const std::vector<std::string>& args) const {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

Result<int> PendingTask::Run(const TaskContext& context) {
  return Error{ExitCode::kNotAvailable, "task '" + name() + "' is not available yet in this build",
               pending_reason()};
}

}  // namespace primus::tasks
