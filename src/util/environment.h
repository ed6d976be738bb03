// A process environment: variable name -> value. The one type every layer
// passes around — the configuration's ${VAR} and PRIMUS_* / PET_* variables,
// the platform's worker environment plan, RunCommand, the snapshot's env/
// files — so that each command reads `environ` once, where it starts, and
// tests hand in a map instead of touching the real environment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace primus {

using Environment = std::map<std::string, std::string>;

// This process's environment (environ); the one place that reads it.
Environment ProcessEnvironment();

// NAME=VALUE entries, as execve takes an environment (io/spawn.h).
std::vector<std::string> EnvironmentEntries(const Environment& environment);

// The value of `name`, or nullopt when it is not set (set-but-empty is "").
std::optional<std::string> Lookup(const Environment& environment, std::string_view name);

}  // namespace primus
