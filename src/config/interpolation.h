// `${VAR}` interpolation in configuration strings, so that one experiment
// file serves many runs (`lr: ${LR:0.001}`, `data: ${DATA_DIR}/c4`):
//   ${VAR}          the variable's value; an error when VAR is unset
//   ${VAR:default}  the value, or `default` when VAR is unset (default may be
//                   empty, and may itself contain ${...})
//   $$              a literal '$'
// A '$' followed by anything else is kept as is. A variable that is set but
// empty gives "" (the default applies only when it is unset).
// Defaults nest at most kMaxInterpolationDepth deep (`${A:${B:x}}` is 2).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/environment.h"
#include "config/origin.h"
#include "util/error.h"

namespace primus::config {

inline constexpr int kMaxInterpolationDepth = 16;

// `where` locates the string in errors (the scalar's file:line:column).
Result<std::string> Interpolate(std::string_view text, const Environment& env, const Origin& where);

}  // namespace primus::config
