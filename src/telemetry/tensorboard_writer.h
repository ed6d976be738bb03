// TensorBoard event files written by us, in C++, with no TensorFlow: the
// format TensorBoard reads (`events.out.tfevents.*`), from its public
// schema.
//
//   file    a sequence of TFRecords, each:
//             uint64 length (little-endian), uint32 masked CRC-32C of those
//             8 bytes, `length` bytes of data, uint32 masked CRC-32C of the
//             data; masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8
//   data    one serialized tensorflow.Event (protobuf):
//             1 wall_time double, 2 step int64, 3 file_version string,
//             5 summary Summary { repeated Value value = 1 }
//             Value { 1 tag string, 2 simple_value float }
//   first   an Event with file_version "brain.Event:2"
//
// Each Add writes one event of scalars at once (one write(2)), so a running
// TensorBoard follows the job as steps arrive. The file is the user's alone
// (util/private_files.h: O_EXCL, no link followed, 0600).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::telemetry {

// CRC-32C (Castagnoli), as TFRecord frames use it, and its masked form.
uint32_t Crc32c(const void* data, size_t size);
uint32_t MaskedCrc32c(const void* data, size_t size);

// One TFRecord around `data`.
std::string TfRecord(std::string_view data);

// One serialized Event: scalars at `step`, or (with no scalars and a
// non-empty `file_version`) the file's first event.
std::string EventBytes(double wall_time, int64_t step, const std::vector<std::pair<std::string, float>>& scalars,
                       const std::string& file_version = "");

class TensorBoardWriter {
 public:
  // Creates `dir` (private) and a new events.out.tfevents.<time>.<host>.<pid>
  // file in it, starting with the version event.
  static Result<TensorBoardWriter> Open(const std::string& dir, const std::string& host);

  // The scalars of one step ("train/loss", ...), stamped with `wall_time`.
  Status Add(int64_t step, double wall_time, const std::vector<std::pair<std::string, float>>& scalars);

  const std::string& path() const { return path_; }

 private:
  TensorBoardWriter() = default;
  std::string path_;
  io::UniqueFd fd_;
};

}  // namespace primus::telemetry
