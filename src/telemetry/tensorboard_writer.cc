#include "telemetry/tensorboard_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "util/clock.h"
#include "util/files.h"
#include "util/private_files.h"

namespace primus::telemetry {
namespace {

// The CRC-32C table (reflected polynomial 0x82F63B78), built once.
const std::array<uint32_t, 256>& Crc32cTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t crc = i;
      for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
      entries[i] = crc;
    }
    return entries;
  }();
  return table;
}

void PutFixed32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void PutFixed64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// A protobuf field key: field number and wire type (0 varint, 1 fixed64,
// 2 length-delimited, 5 fixed32).
void PutKey(std::string& out, int field, int wire_type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void PutBytes(std::string& out, int field, std::string_view bytes) {
  PutKey(out, field, 2);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size) {
  const auto& table = Crc32cTable();
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t MaskedCrc32c(const void* data, size_t size) {
  uint32_t crc = Crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string TfRecord(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  PutFixed64(record, data.size());
  PutFixed32(record, MaskedCrc32c(record.data(), 8));
  record.append(data);
  PutFixed32(record, MaskedCrc32c(data.data(), data.size()));
  return record;
}

std::string EventBytes(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& scalars,
                       const std::string& file_version) {
  std::string event;
  uint64_t wall_bits = 0;
  std::memcpy(&wall_bits, &wall_time, sizeof(wall_bits));
  PutKey(event, 1, 1);  // wall_time
  PutFixed64(event, wall_bits);
  if (step != 0) {
    PutKey(event, 2, 0);  // step
    PutVarint(event, static_cast<uint64_t>(step));
  }
  if (!file_version.empty()) PutBytes(event, 3, file_version);
  if (!scalars.empty()) {
    std::string summary;
    for (const auto& [tag, value] : scalars) {
      std::string entry;
      PutBytes(entry, 1, tag);  // tag
      uint32_t value_bits = 0;
      std::memcpy(&value_bits, &value, sizeof(value_bits));
      PutKey(entry, 2, 5);  // simple_value
      PutFixed32(entry, value_bits);
      PutBytes(summary, 1, entry);  // Summary.value
    }
    PutBytes(event, 5, summary);  // Event.summary
  }
  return event;
}

Result<TensorBoardWriter> TensorBoardWriter::Open(const std::string& dir, const std::string& host) {
  if (Status made = MakePrivateDir(dir); !made.ok()) return made.error();
  double wall = WallSeconds();
  TensorBoardWriter writer;
  writer.path_ = JoinPath(dir, "events.out.tfevents." + std::to_string(static_cast<int64_t>(wall)) + "." + host + "." +
                                   std::to_string(getpid()));
  auto fd = CreatePrivateFile(writer.path_, O_WRONLY | O_APPEND);
  if (!fd.ok()) return fd.error();
  writer.fd_.Reset(*fd);
  std::string first = TfRecord(EventBytes(wall, 0, {}, "brain.Event:2"));
  if (!io::WriteAll(writer.fd_.get(), first.data(), first.size())) {
    return UnavailableError("cannot write " + writer.path_ + ": " + std::strerror(errno));
  }
  return writer;
}

Status TensorBoardWriter::Add(int64_t step, double wall_time, const std::vector<std::pair<std::string, float>>& scalars) {
  if (scalars.empty()) return Status::Ok();
  std::string record = TfRecord(EventBytes(wall_time, step, scalars));
  if (!io::WriteAll(fd_.get(), record.data(), record.size())) {
    return UnavailableError("cannot write " + path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace primus::telemetry
