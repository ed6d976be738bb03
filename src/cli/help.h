// --help at every level: the overview (modes, tasks, global options, exit
// codes), one mode (its usage, options and the modes it can wrap), one task.
// Built from the registries, so a new mode or task shows up by itself.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"
#include "util/option_parser.h"

namespace primus::cli {

std::string OverviewHelp();

// The words of the grammar that are neither modes nor tasks
// (command_line.h), with one line each for manuals and completion.
struct BuiltinCommand {
  std::string name, summary;
};
const std::vector<BuiltinCommand>& BuiltinCommands();
// Help for a mode or task name; a usage error (with a suggestion) otherwise.
Result<std::string> TopicHelp(const std::string& topic);
std::string VersionText();
// The options of `config show` (its help is built from them).
const std::vector<OptionSpec>& ConfigShowOptions();

}  // namespace primus::cli
