// YAML text -> located Value. Built on yaml-cpp's event parser rather than
// its node API, because that is where we see what the node API hides: which
// scalars were quoted (quoted scalars stay strings), the mark of every node
// (errors say file:line:column), duplicate keys (yaml-cpp keeps one silently)
// and merge keys `<<` (yaml-cpp 0.7 does not implement them; we do, per the
// YAML merge-key spec). yaml-cpp's exceptions stop here and come back as a
// ConfigError with the file name and line:column from the exception's mark.
//
// This is one document of text; files and `extends:` are yaml_loader.h.
//
// Hostile text gets a located error, never unbounded work: the text must be
// UTF-8 without NUL bytes or other control characters (tab, LF and CR
// aside); a scalar may not hold a NUL (from an escape such as "\0"), since
// every value ends up in a C string (an argument, a variable) that would cut
// it there; aliases may produce at most kMaxAliasNodes nodes in all (a
// "billion laughs" document is refused at the alias that crosses the limit);
// nesting is bounded by yaml-cpp (2000 levels).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"
#include "config/value.h"
#include "util/error.h"

namespace primus::config {

// Nodes that `*alias` references may copy into one document, counted with
// everything under each referenced anchor.
inline constexpr size_t kMaxAliasNodes = 100000;

struct YamlParseOptions {
  // Names the text in every origin and error: a file path, or e.g. "value of a.b".
  std::string source;
  // The files whose `extends:` led to this text, outermost first.
  std::vector<std::string> extends_chain;
  // When set, `${VAR}` in string scalars is interpolated from it (plain
  // scalars are typed after interpolation). When null, strings stay as written.
  const Environment* environment = nullptr;
};

// Null for an empty document. Several documents ("---") are an error.
Result<Value> ParseYaml(std::string_view text, const YamlParseOptions& options);

}  // namespace primus::config
