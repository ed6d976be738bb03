// Deep merge of two configuration trees: how `extends:` bases, the layers of
// launcher configuration and overrides combine key by key, instead of one
// whole file replacing another.
#pragma once

#include "config/value.h"

namespace primus::config {

// Maps merge key by key, recursively: keys of `base` keep their order, new
// keys of `over` follow. Everything else in `over` (scalars, lists, null)
// replaces what `base` has. Leaves keep their own origins, so a merged tree
// still tells which file and line each value came from.
Value Merge(const Value& base, const Value& over);

}  // namespace primus::config
