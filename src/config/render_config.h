// RenderConfig: the effective configuration as YAML-like text, for
// `primus-cli config show [--origin]`. With origins, every leaf is followed
// by an aligned `# <where it came from>` comment, which answers "why is this
// value what it is?" without reading five files.
#pragma once

#include <string>

#include "config/value.h"

namespace primus::config {

std::string RenderConfig(const Value& effective, bool with_origin);

// The same as JSON (`config show --json`): the configuration, and with
// `with_origin` each value's origin by its dotted key:
//   {"config": {...}, "origins": {"direct.max_restarts": "flag --max-restarts", ...}}
std::string RenderConfigJson(const Value& effective, bool with_origin);

}  // namespace primus::config
