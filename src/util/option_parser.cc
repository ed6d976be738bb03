#include "util/option_parser.h"

#include "util/strings.h"

namespace primus {
namespace {

// "--nproc_per_node" and "--nproc-per-node" are the same flag.
std::string Normalize(std::string_view flag) {
  std::string out(flag);
  size_t start = out.starts_with("--") ? 2 : 1;
  for (size_t i = start; i < out.size(); ++i) {
    if (out[i] == '_') out[i] = '-';
  }
  return out;
}

const OptionSpec* FindSpec(const std::vector<const std::vector<OptionSpec>*>& tables,
                           const std::string& name) {
  for (const auto* table : tables) {
    for (const auto& spec : *table) {
      for (const auto& candidate : spec.names) {
        if (candidate == name) return &spec;
      }
    }
  }
  return nullptr;
}

std::vector<std::string> AllLongNames(const std::vector<const std::vector<OptionSpec>*>& tables) {
  std::vector<std::string> names;
  for (const auto* table : tables) {
    for (const auto& spec : *table) {
      for (const auto& name : spec.names) {
        if (name.starts_with("--")) names.push_back(name);
      }
    }
  }
  return names;
}

}  // namespace

Result<ParsedOptions> ParseOptions(const std::vector<std::string>& tokens, size_t start,
                                   const std::vector<const std::vector<OptionSpec>*>& tables,
                                   UnknownOptionPolicy policy, const std::string& context,
                                   const std::function<bool(const std::string&)>& ends_options) {
  ParsedOptions parsed;
  size_t i = start;
  bool after_unknown_flag = false;  // the previous token: an unknown flag without an attached value
  while (i < tokens.size()) {
    const std::string& token = tokens[i];
    if (token == "--") {
      parsed.stopped_at_separator = true;
      ++i;
      break;
    }
    bool is_flag = token.size() > 1 && token[0] == '-';
    if (!is_flag) {
      if (policy == UnknownOptionPolicy::kReject) break;
      if (ends_options && !after_unknown_flag && ends_options(token)) break;
      parsed.passthrough.push_back(token);
      after_unknown_flag = false;
      ++i;
      continue;
    }
    after_unknown_flag = false;

    // Split "--name=value" and "-Nvalue".
    std::string name = token;
    std::optional<std::string> attached;
    const OptionSpec* spec = nullptr;
    if (token.starts_with("--")) {
      size_t equals = token.find('=');
      if (equals != std::string::npos) {
        name = token.substr(0, equals);
        attached = token.substr(equals + 1);
      }
      spec = FindSpec(tables, Normalize(name));
    } else {
      spec = FindSpec(tables, token);
      if (!spec && token.size() > 2) {
        spec = FindSpec(tables, token.substr(0, 2));
        if (spec && spec->kind != OptionSpec::Kind::kFlag) {
          name = token.substr(0, 2);
          attached = token.substr(2);
          if (attached->starts_with("=")) attached = attached->substr(1);
        } else {
          spec = nullptr;
        }
      }
    }

    if (!spec) {
      if (policy == UnknownOptionPolicy::kPassThrough) {
        parsed.passthrough.push_back(token);
        after_unknown_flag = !attached.has_value();
        ++i;
        continue;
      }
      return UsageError("unknown option " + name + " for " + context +
                            DidYouMean(Normalize(name), AllLongNames(tables)),
                        "see the options with --help");
    }

    ParsedOption option{spec, name, spec->negates ? "false" : "true"};
    if (spec->kind == OptionSpec::Kind::kFlag) {
      if (attached) {
        auto value = ParseBool(*attached);
        if (!value) {
          return UsageError("option " + name + " is a switch and takes no value ('" + *attached + "' given)",
                            "write " + name + " alone");
        }
        option.value = *value != spec->negates ? "true" : "false";
      }
      ++i;
    } else if (attached) {
      option.value = *attached;
      ++i;
    } else {
      if (i + 1 >= tokens.size() || tokens[i + 1] == "--") {
        return UsageError("option " + name + " needs a value (" + spec->value_name + ") for " + context,
                          "write " + name + " " + spec->value_name);
      }
      option.value = tokens[i + 1];
      i += 2;
    }
    if (spec->kind == OptionSpec::Kind::kKeyValue && option.value.find('=') == std::string::npos &&
        spec->config_key.empty()) {
      return UsageError("option " + name + " expects KEY=VALUE, got '" + option.value + "'",
                        "write " + name + " KEY=VALUE");
    }
    parsed.options.push_back(std::move(option));
  }
  parsed.next = i;
  return parsed;
}

Result<int> CountOption(const ParsedOption& option, int lowest) {
  auto value = ParseInt(option.value);
  if (!value || *value < lowest || *value > 1000000) {
    return UsageError("option " + option.written + " must be a count from " + std::to_string(lowest) + " to 1000000, not '" +
                          option.value + "'",
                      "write e.g. " + option.written + " 20");
  }
  return static_cast<int>(*value);
}

std::string WrapText(std::string_view text, size_t indent, size_t first_column, size_t width) {
  std::string out;
  size_t column = first_column;
  bool line_empty = true;
  std::vector<std::string_view> words;
  for (size_t at = 0; at < text.size();) {
    size_t start = text.find_first_not_of(' ', at);
    if (start == std::string_view::npos) break;
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    words.push_back(text.substr(start, end - start));
    at = end;
  }
  for (std::string_view word : words) {
    if (!line_empty && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  return out;
}

std::string FormatOptionHelp(const std::vector<OptionSpec>& table) {
  constexpr size_t kMaxLeft = 34;  // a longer flag column puts its text on the next line
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const auto& spec : table) {
    if (spec.hidden) continue;
    std::string left = Join(spec.names, ", ");
    if (spec.kind != OptionSpec::Kind::kFlag) left += " " + spec.value_name;
    if (left.size() <= kMaxLeft) width = std::max(width, left.size());
    rows.emplace_back(left, spec.help + (spec.repeatable ? " (repeatable)" : ""));
  }
  std::string out;
  size_t text_column = 2 + width + 2;
  for (const auto& [left, right] : rows) {
    if (left.size() > width) {
      out += "  " + left + "\n" + std::string(text_column, ' ') +
             WrapText(right, text_column, text_column, kHelpWidth) + "\n";
    } else {
      out += "  " + left + std::string(width - left.size() + 2, ' ') +
             WrapText(right, text_column, text_column, kHelpWidth) + "\n";
    }
  }
  return out;
}

}  // namespace primus
