// A growable byte buffer for the output hot path. std::string appends of many
// small pieces (timestamp, marker, line, newline) cost a capacity check and a
// terminator each; this buffer reserves once per line and copies with memcpy.
// Clear() keeps the capacity, so a steady stream allocates nothing;
// ReleaseIfLarge() gives memory back after an unusually long line.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace primus::agent {

class ByteBuffer {
 public:
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_.get(), size_}; }

  void Clear() { size_ = 0; }
  // Makes room for `extra` more bytes; returns where they go. Commit(n) then
  // counts the n bytes actually written there.
  char* Reserve(size_t extra) {
    if (size_ + extra > capacity_) Grow(size_ + extra);
    return data_.get() + size_;
  }
  void Commit(size_t count) { size_ += count; }
  void Append(const char* bytes, size_t count) {
    std::memcpy(Reserve(count), bytes, count);
    size_ += count;
  }
  void Append(std::string_view bytes) { Append(bytes.data(), bytes.size()); }
  void Push(char byte) {
    *Reserve(1) = byte;
    ++size_;
  }
  // Drops the storage when it grew beyond `limit` (after a huge line).
  void ReleaseIfLarge(size_t limit);

 private:
  void Grow(size_t needed);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace primus::agent
