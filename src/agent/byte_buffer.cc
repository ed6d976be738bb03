#include "agent/byte_buffer.h"

#include <algorithm>

namespace primus::agent {

void ByteBuffer::Grow(size_t needed) {
  size_t capacity = std::max<size_t>({needed, capacity_ * 2, 4096});
  std::unique_ptr<char[]> bigger(new char[capacity]);
  if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  capacity_ = capacity;
}

void ByteBuffer::ReleaseIfLarge(size_t limit) {
  if (capacity_ <= limit || size_ > 0) return;
  data_.reset();
  capacity_ = 0;
}

}  // namespace primus::agent
