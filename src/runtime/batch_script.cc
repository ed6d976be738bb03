#include "runtime/batch_script.h"

#include "util/strings.h"

namespace primus::runtime {

std::string RenderBatchScript(const BatchScript& script) {
  std::string out = "#!/bin/bash\n";
  for (const std::string& directive : script.directives) out += "#SBATCH " + directive + "\n";
  // A line break in a comment would end it and make the rest a command:
  // comments never hold a raw control character.
  for (const std::string& line : script.comment_lines) {
    out += line.empty() ? "#\n" : "# " + EscapeControlCharacters(line) + "\n";
  }
  out += "exec " + ShellJoin(script.command) + "\n";
  return out;
}

Status CheckDirectiveText(const std::string& text, const std::string& action) {
  if (!HasControlCharacter(text)) return Status::Ok();
  return UsageError(action + " flag " + ShellQuote(text) +
                        " holds a line break or another control character, which no #SBATCH line can carry",
                    "write the value on one line, without control characters");
}

Result<std::vector<std::string>> DirectivesFromFlags(const std::vector<std::string>& flags, const std::string& action) {
  std::vector<std::string> directives;
  for (const std::string& token : flags) {
    if (Status status = CheckDirectiveText(token, action); !status.ok()) return status.error();
    bool is_flag = token.size() > 1 && token[0] == '-';
    if (is_flag) {
      directives.push_back(ShellQuote(token));
      continue;
    }
    if (directives.empty()) {
      return UsageError("unexpected argument '" + token + "' for 'slurm " + action + "': it follows no " + action +
                            " flag",
                        action + " flags come before '--', the task after it: primus-cli slurm " + action + " [" +
                            action + " flags] -- <task> ...");
    }
    directives.back() += " " + ShellQuote(token);
  }
  return directives;
}

bool HasFlag(const std::vector<std::string>& flags, const std::string& long_name, const std::string& short_name) {
  for (const std::string& flag : flags) {
    if (flag == long_name || flag.starts_with(long_name + "=")) return true;
    if (!short_name.empty() && flag.starts_with(short_name)) return true;
  }
  return false;
}

std::optional<std::string> FlagValue(const std::vector<std::string>& flags, const std::string& long_name,
                                     const std::string& short_name) {
  std::optional<std::string> value;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    if (flag.starts_with(long_name + "=")) {
      value = flag.substr(long_name.size() + 1);
    } else if (flag == long_name || (!short_name.empty() && flag == short_name)) {
      if (i + 1 < flags.size()) value = flags[++i];
    } else if (!short_name.empty() && flag.starts_with(short_name) && !flag.starts_with("--")) {
      value = flag.substr(short_name.size());
    }
  }
  return value;
}

std::optional<std::string> ExpandJobFilePattern(const std::string& pattern, const JobFileNames& names) {
  if (pattern.find('\\') != std::string::npos) {  // a backslash in the pattern: sbatch expands nothing
    std::string out;
    for (char c : pattern) {
      if (c != '\\') out += c;
    }
    return out;
  }
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    size_t width = 0;
    while (i + 1 < pattern.size() && pattern[i + 1] >= '0' && pattern[i + 1] <= '9' && width < 10) {
      width = width * 10 + static_cast<size_t>(pattern[++i] - '0');
    }
    if (++i >= pattern.size()) return std::nullopt;
    std::string value;
    switch (pattern[i]) {
      case '%': out += '%'; continue;
      case 'j':
      case 'A': value = names.job_id; break;
      case 'a': value = "4294967294"; break;
      case 'J': value = names.job_id + ".batch"; break;
      case 'x': value = names.job_name; break;
      case 'u': value = names.user; break;
      case 'n':
      case 't': value = "0"; break;
      case 's': value = "batch"; break;
      case 'N':
        if (names.batch_host.empty()) return std::nullopt;
        value = names.batch_host;
        break;
      default: return std::nullopt;
    }
    bool number = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    if (number && value.size() < width) value.insert(0, width - value.size(), '0');
    out += value;
  }
  return out;
}

}  // namespace primus::runtime
