#include "tasks/task.h"

#include <algorithm>

#include "util/option_parser.h"

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

std::string FormatSubtaskPage(const std::string& command, const SubtaskPage& page,
                              const std::vector<OptionSpec>& options, const std::string& footer) {
  std::string out = WrapText("usage: " + command + " " + page.name + " " + page.usage, 9, 0, kHelpWidth) + "\n\n" +
                    WrapText(page.about, 0, 0, kHelpWidth) + "\n\n" + page.name + " options:\n" +
                    FormatOptionHelp(options) + "\nExamples:\n";
  for (const std::string& example : page.examples) out += "  " + example + "\n";
  return out + "\n" + footer;
}

std::string FormatSubtaskOverview(const std::vector<SubtaskPage>& pages) {
  std::string out;
  for (const SubtaskPage& page : pages) out += WrapText(page.name + ": " + page.about, 2, 0, kHelpWidth) + "\n";
  out += "\nExamples:\n";
  for (const SubtaskPage& page : pages) {
    if (!page.examples.empty()) out += "  " + page.examples.front() + "\n";
  }
  return out;
}

bool Task::IsHelpRequest(const std::vector<std::string>& args) const {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

}  // namespace primus::tasks
