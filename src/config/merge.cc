#include "config/merge.h"

namespace primus::config {

Value Merge(const Value& base, const Value& over) {
  if (!base.IsMap() || !over.IsMap()) return over;
  Value merged = base;
  merged.set_origin(over.origin());
  merged.set_key_origin(over.key_origin());
  for (const auto& [key, item] : over.AsMap()) {
    if (const Value* existing = merged.Get(key)) {
      merged.Put(key, Merge(*existing, item));
    } else {
      merged.Put(key, item);
    }
  }
  return merged;
}

}  // namespace primus::config
