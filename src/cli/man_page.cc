#include "cli/man_page.h"

#include <algorithm>

#include "cli/help.h"
#include "runtime/runtime.h"
#include "tasks/task.h"
#include "util/files.h"
#include "util/option_parser.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

constexpr char kProgram[] = "primus-cli";

// Text as roff prints it: backslashes escaped, dashes as minus signs (so
// flags can be searched and copied), no control character at a line start.
std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string Header(const std::string& name, const std::string& summary) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return ".TH " + upper + " 1 \"\" \"" + kProgram + " " + PRIMUS_VERSION + "\" \"User Commands\"\n" +
         // Left-aligned, no hyphenation: flags and paths stay whole and copyable.
         ".ad l\n.nh\n.SH NAME\n" + Escape(name) + " \\- " + Escape(summary) + "\n";
}

// Help text as roff: paragraphs separated by blank lines fill; indented lines
// (tables, examples) are kept as written.
std::string Body(const std::vector<std::string>& lines) {
  std::string out;
  bool verbatim = false;
  bool paragraph_open = false;
  for (const std::string& line : lines) {
    if (Trim(line).empty()) {
      if (verbatim) out += ".fi\n";
      verbatim = false;
      paragraph_open = false;
      continue;
    }
    bool indented = line.starts_with(" ");
    if (!paragraph_open) {
      out += ".PP\n";
      paragraph_open = true;
    }
    if (indented && !verbatim) out += ".nf\n";
    if (!indented && verbatim) out += ".fi\n";
    verbatim = indented;
    out += Escape(indented ? line : std::string(Trim(line))) + "\n";
  }
  if (verbatim) out += ".fi\n";
  return out;
}

std::string Options(const std::vector<OptionSpec>& table) {
  std::string out;
  for (const OptionSpec& spec : table) {
    if (spec.hidden) continue;
    std::string names;
    for (const std::string& name : spec.names) names += (names.empty() ? "" : ", ") + ("\\fB" + Escape(name) + "\\fR");
    if (spec.kind != OptionSpec::Kind::kFlag) names += " \\fI" + Escape(spec.value_name) + "\\fR";
    out += ".TP\n" + names + "\n" + Escape(spec.help + (spec.repeatable ? " (repeatable)" : "")) + "\n";
  }
  return out;
}

std::string Synopsis(const std::vector<std::string>& usage) {
  std::string out = ".SH SYNOPSIS\n.nf\n";
  for (std::string line : usage) {
    if (line.starts_with("usage: ")) line = line.substr(7);
    out += Escape(line) + "\n";
  }
  return out + ".fi\n";
}

std::string SeeAlso(const std::string& self) {
  std::vector<std::string> pages;
  for (const std::string& page : ManPageNames()) {
    if (page != self) pages.push_back("\\fB" + Escape(page) + "\\fR(1)");
  }
  return ".SH SEE ALSO\n" + Join(pages, ",\n") + "\n";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = Split(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// Splits a help text into its usage block (up to the first blank line) and the rest.
void SplitUsage(const std::string& help, std::vector<std::string>* usage, std::vector<std::string>* rest) {
  std::vector<std::string> lines = Lines(help);
  size_t i = 0;
  while (i < lines.size() && !Trim(lines[i]).empty()) usage->push_back(lines[i++]);
  rest->assign(lines.begin() + static_cast<long>(i), lines.end());
}

std::string OverviewPage() {
  std::vector<std::string> lines = Lines(OverviewHelp());
  // primus-cli: SUMMARY / blank / usage lines / blank / sections
  std::string summary = lines.empty() ? "" : lines[0].substr(std::min(lines[0].size(), std::string("primus-cli: ").size()));
  if (!summary.empty() && summary.back() == '.') summary.pop_back();
  std::vector<std::string> usage, rest;
  SplitUsage(Join(std::vector<std::string>(lines.begin() + 2, lines.end()), "\n"), &usage, &rest);
  // The global options get their own section; the rest (modes, tasks,
  // examples, exit codes) is the description.
  std::vector<std::string> description;
  bool in_options = false;
  for (const std::string& line : rest) {
    if (line == "global options:") in_options = true;
    else if (in_options && Trim(line).empty()) in_options = false;
    else if (!in_options) description.push_back(line);
  }
  std::string out = Header(kProgram, summary) + Synopsis(usage) + ".SH DESCRIPTION\n" + Body(description) +
                    ".SH OPTIONS\n" + Options(runtime::GlobalOptions());
  out += ".SH EXIT STATUS\n.nf\n"
         "0      success\n"
         "1      the task failed (agent\\-run tasks: the failing worker's own code)\n"
         "2      usage error\n"
         "3      configuration error\n"
         "4      missing environment (tool, library, device, port)\n"
         "6      the work finished but a worker stuck in its teardown was stopped\n"
         "128+N  killed by signal N\n.fi\n";
  return out + SeeAlso(kProgram);
}

std::string ModePage(const runtime::Runtime& mode) {
  std::string name = std::string(kProgram) + "-" + mode.name();
  std::string out = Header(name, mode.summary()) + Synopsis(Lines(mode.usage())) + ".SH DESCRIPTION\n" +
                    Body(Lines(mode.summary() + "\n\n" + mode.details()));
  if (!mode.actions().empty()) {
    out += ".PP\nactions: " + Escape(Join(mode.actions(), ", ")) + " (default: " + Escape(mode.default_action()) + ")\n";
  }
  if (!mode.inner_modes().empty()) {
    out += ".PP\nAfter \\fB\\-\\-\\fR: one of the modes " + Escape(Join(mode.inner_modes(), ", ")) + ", or a task.\n";
  }
  if (mode.unknown_options() == UnknownOptionPolicy::kPassThrough) {
    out += ".PP\nOther flags are passed through unchanged to " +
           Escape(mode.name() == "slurm" ? "srun/sbatch" : mode.name() == "ssh" ? "ssh" : "the container engine") + ".\n";
  }
  out += ".SH OPTIONS\n" + Options(mode.options()) + ".SS Global options (accepted here too)\n" +
         Options(runtime::GlobalOptions());
  if (!mode.examples().empty()) {
    out += ".SH EXAMPLES\n.nf\n";
    for (const std::string& example : mode.examples()) out += Escape(example) + "\n";
    out += ".fi\n";
  }
  return out + SeeAlso(name);
}

std::string TaskPage(const tasks::Task& task) {
  std::string name = std::string(kProgram) + "-" + task.name();
  std::vector<std::string> usage, rest;
  SplitUsage(task.help(), &usage, &rest);
  // Tables of options that help() prints come from options(): the OPTIONS section has them.
  std::vector<std::pair<std::string, const std::vector<OptionSpec>*>> tables;
  std::vector<std::string> subtasks = task.subtasks();
  if (subtasks.empty()) subtasks.push_back("");
  for (const std::string& subtask : subtasks) {
    for (const auto* table : task.options(subtask)) {
      bool seen = std::any_of(tables.begin(), tables.end(), [&](const auto& entry) { return entry.second == table; });
      if (!seen) tables.emplace_back(subtask, table);
    }
  }
  std::vector<std::string> description;
  for (const std::string& line : rest) {
    if (!tables.empty() && !line.starts_with(" ") && line.ends_with("options:")) break;
    description.push_back(line);
  }
  std::string out = Header(name, task.summary()) + Synopsis(usage) + ".SH DESCRIPTION\n" + Body(description);
  if (!task.subtasks().empty()) out += ".PP\nsubtasks: " + Escape(Join(task.subtasks(), ", ")) + "\n";
  out += ".SH OPTIONS\n";
  if (tables.empty()) {
    // run hands its arguments on unread; info describes its two flags above.
    out += "The task's own arguments are described above. The global options are in \\fBprimus\\-cli\\fR(1), "
           "the mode options in \\fBprimus\\-cli\\-direct\\fR(1) and the other mode pages.\n";
  }
  bool one = tables.size() == 1;
  for (const auto& [subtask, table] : tables) {
    if (!one) out += ".SS " + Escape(subtask) + "\n";
    out += Options(*table);
  }
  return out + SeeAlso(name);
}

}  // namespace

std::string BuiltinPage(const std::string& topic, const std::string& summary) {
  std::string name = std::string(kProgram) + "-" + topic;
  Result<std::string> help = TopicHelp(topic);
  std::vector<std::string> usage, rest;
  SplitUsage(help.ok() ? *help : summary, &usage, &rest);
  std::string options = topic == "config" ? Options(ConfigShowOptions())
                                           : "The command's own arguments are described above. The global options are "
                                             "in \\fBprimus\\-cli\\fR(1).\n";
  return Header(name, summary) + Synopsis(usage) + ".SH DESCRIPTION\n" + Body(rest) + ".SH OPTIONS\n" + options +
         SeeAlso(name);
}

std::vector<std::string> ManPageNames() {
  std::vector<std::string> names = {kProgram};
  for (const std::string& mode : runtime::RuntimeRegistry::Global().Names()) names.push_back(std::string(kProgram) + "-" + mode);
  for (const std::string& task : tasks::TaskRegistry::Global().Names()) names.push_back(std::string(kProgram) + "-" + task);
  for (const BuiltinCommand& builtin : BuiltinCommands()) {
    if (builtin.name != "help") names.push_back(std::string(kProgram) + "-" + builtin.name);
  }
  return names;
}

Result<std::string> ManPage(const std::string& name) {
  if (name == kProgram) return OverviewPage();
  std::string prefix = std::string(kProgram) + "-";
  if (name.starts_with(prefix)) {
    std::string topic = name.substr(prefix.size());
    if (const auto* mode = runtime::RuntimeRegistry::Global().Find(topic)) return ModePage(*mode);
    if (const auto* task = tasks::TaskRegistry::Global().Find(topic)) return TaskPage(*task);
    for (const BuiltinCommand& builtin : BuiltinCommands()) {
      if (topic == builtin.name && topic != "help") return BuiltinPage(builtin.name, builtin.summary);
    }
  }
  return UsageError("no manual page '" + name + "'" + DidYouMean(name, ManPageNames()),
                    "pages: " + Join(ManPageNames(), ", "));
}

Result<int> WriteManPages(const std::string& dir) {
  int written = 0;
  for (const std::string& name : ManPageNames()) {
    auto page = ManPage(name);
    if (!page.ok()) return page.error();
    if (Status status = WriteFileAtomic(dir + "/" + name + ".1", *page, kUserOutputMode); !status.ok()) return status.error();
    ++written;
  }
  return written;
}

}  // namespace primus::cli
