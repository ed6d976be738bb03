// `key=value` overrides: `--set a.b=c` on the command line and the trailing
// `a.b.c=value` arguments of train tasks. One syntax, one typing rule, so a
// value reads the same on the command line as it would in a YAML file.
//
//   a.b.c=value   value is typed like a plain YAML scalar:
//                   lr=1e-3 -> double, layers=24 -> int, fp8=true -> bool,
//                   name=gpt -> string, a.b= (nothing) -> null
//   a.b=[1, 2]    a value starting with '[' '{' '"' or "'" is read as YAML
//   a.b={x: 1}      (flow list, flow map, quoted string: a.b='"2"' is a string)
// No `${VAR}` interpolation: the shell has already expanded the command line.
#pragma once

#include <string_view>

#include "config/origin.h"
#include "config/value.h"
#include "util/error.h"

namespace primus::config {

// Sets the value at the dotted path in `root`, creating intermediate maps.
// Bad syntax (no '=', empty key, "a..b", a key starting with '-') is a
// UsageError with a hint showing the right form; setting a key under a value
// that is not a map (a=1, then a.b=2) is a UsageError naming both.
// Every node set gets `origin` (e.g. Origin::Set()).
Status ApplyOverride(Value* root, std::string_view assignment, const Origin& origin);

// The value half alone, typed as described above.
Result<Value> ParseOverrideValue(std::string_view text, const Origin& origin);

}  // namespace primus::config
