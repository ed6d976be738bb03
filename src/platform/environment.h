// A process environment as a name -> value map: the user's environment as
// primus-cli received it, passed explicitly to everything that decides from
// environment variables so that tests never touch the real one.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace primus::platform {

using Environment = std::map<std::string, std::string>;

// This process's environment (environ).
Environment CurrentEnvironment();

// The value of `name`, or nullopt when it is not set (set-but-empty is a value).
std::optional<std::string> Lookup(const Environment& environment, const std::string& name);

}  // namespace primus::platform
