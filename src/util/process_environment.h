// This process's environment as a name -> value map. The one place that reads
// `environ`: the config layer (${VAR}, PRIMUS_*), the platform layer (the
// worker plan), RunCommand and the train task's snapshot all start from it.
#pragma once

#include <map>
#include <string>

namespace primus {

std::map<std::string, std::string> ProcessEnvironment();

}  // namespace primus
