// Environment: the variables that `${VAR}` interpolation and PRIMUS_* /
// PET_* configuration read. Passed explicitly so that tests use a map and
// never depend on the real process environment.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace primus::config {

class Environment {
 public:
  using Variables = std::map<std::string, std::string, std::less<>>;

  Environment() = default;
  explicit Environment(Variables variables) : variables_(std::move(variables)) {}
  // Environment({{"NAME", "value"}, ...}) in tests.
  Environment(std::initializer_list<std::pair<const std::string, std::string>> variables)
      : variables_(variables) {}
  // A snapshot of this process's environment.
  static Environment FromProcess();

  // The variable's value; nullopt when it is not set (set-but-empty is "").
  std::optional<std::string> Get(std::string_view name) const;
  const Variables& variables() const { return variables_; }

 private:
  Variables variables_;
};

}  // namespace primus::config
