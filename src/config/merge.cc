#include "config/merge.h"

namespace primus::config {

Value Merge(const Value& base, const Value& over) {
  if (!base.IsMap() || !over.IsMap()) return over;
  Value merged = base;
  if (!over.origin().source.empty()) {  // a layer's root map may have no origin of its own
    merged.set_origin(over.origin());
    merged.set_key_origin(over.key_origin());
  }
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
