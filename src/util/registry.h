// A registry of named plug-ins (tasks, runtimes) that register themselves
// with a static object in their own file, so adding one touches no core file.
// Owns the objects; finds them by name.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace primus {

template <typename T>
class Registry {
 public:
  void Register(std::unique_ptr<T> item) { items_.push_back(std::move(item)); }
  T* Find(std::string_view name) const {
    for (const auto& item : items_) {
      if (item->name() == name) return item.get();
    }
    return nullptr;
  }
  const std::vector<std::unique_ptr<T>>& items() const { return items_; }

 private:
  std::vector<std::unique_ptr<T>> items_;
};

}  // namespace primus
