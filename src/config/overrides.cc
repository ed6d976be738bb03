#include "config/overrides.h"

#include <cctype>

#include "config/scalar_types.h"
#include "config/yaml_parser.h"
#include "util/strings.h"

namespace primus::config {
namespace {

constexpr std::string_view kFormHint = "write key=value with a dotted key, e.g. direct.nnodes=2";

Error BadAssignment(const Origin& origin, std::string_view assignment, std::string_view problem,
                    std::string hint = std::string(kFormHint)) {
  return UsageError(origin.Describe() + ": '" + std::string(assignment) + "': " + std::string(problem),
                    std::move(hint));
}

}  // namespace

Result<Value> ParseOverrideValue(std::string_view text, const Origin& origin) {
  std::string_view trimmed = Trim(text);
  if (trimmed.empty() || std::string_view("[{\"'").find(trimmed.front()) == std::string_view::npos) {
    return InferScalar(trimmed, origin);
  }
  YamlParseOptions options;
  options.source = "value '" + std::string(trimmed) + "'";
  Result<Value> parsed = ParseYaml(trimmed, options);
  if (!parsed.ok()) {
    return UsageError(origin.Describe() + ": cannot read " + parsed.error().message,
                      "quote the whole assignment for the shell, e.g. --set 'a.b=[1, 2]'; "
                      "a value starting with [ { \" or ' is read as YAML");
  }
  Value value = std::move(*parsed);
  value.SetOriginEverywhere(origin);
  return value;
}

Status ApplyOverride(Value* root, std::string_view assignment, const Origin& origin) {
  size_t equals = assignment.find('=');
  if (equals == std::string_view::npos) {
    return BadAssignment(origin, assignment, "expected key=value");
  }
  std::string_view key = assignment.substr(0, equals);
  if (key.empty()) return BadAssignment(origin, assignment, "the key before '=' is empty");
  if (key.front() == '-') {
    return BadAssignment(origin, assignment, "a key cannot start with '-'",
                         "write key=value without dashes, e.g. train.lr=1e-4");
  }
  for (char c : key) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      return BadAssignment(origin, assignment, "the key contains a space");
    }
  }
  for (const std::string& part : SplitDottedPath(key)) {
    if (part.empty()) {
      return BadAssignment(origin, assignment, "the key '" + std::string(key) + "' has an empty part",
                           "separate keys with single dots, e.g. a.b.c=value");
    }
  }
  Result<Value> value = ParseOverrideValue(assignment.substr(equals + 1), origin);
  if (!value.ok()) return value.error();
  Status status = root->Set(key, std::move(*value));
  if (!status.ok()) {
    return UsageError(origin.Describe() + ": '" + std::string(assignment) + "': " +
                          status.error().message,
                      status.error().hint);
  }
  return Status::Ok();
}

}  // namespace primus::config
