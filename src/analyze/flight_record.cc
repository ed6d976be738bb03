#include "analyze/flight_record.h"

#include <fmt/format.h>

#include <map>

#include "analyze/python_frame.h"
#include "util/json_fields.h"
#include "util/pickle_reader.h"

namespace primus::analyze {
namespace {

namespace jf = json_fields;
using Json = nlohmann::json;

std::string GroupName(const Json& entry, const Json& pg_config) {
  const Json& process_group = entry.contains("process_group") ? entry["process_group"] : Json();
  std::string name, desc;
  if (process_group.is_array() && !process_group.empty() && process_group[0].is_string()) {
    name = process_group[0].get<std::string>();
    if (process_group.size() > 1 && process_group[1].is_string()) desc = process_group[1].get<std::string>();
  } else if (auto id = jf::Integer(entry, "pg_id")) {
    name = std::to_string(*id);
    desc = jf::Text(jf::Object(pg_config, name.c_str()), "desc");
  }
  if (name.empty()) return "";
  return desc.empty() || desc == name ? name : name + " (" + desc + ")";
}

std::string UserFrame(const Json& frames) {
  if (!frames.is_array()) return "";
  for (const Json& frame : frames) {  // innermost first
    PythonFrame python{jf::Text(frame, "filename"), "", jf::Text(frame, "name")};
    if (auto line = jf::Integer(frame, "line")) python.line = std::to_string(*line);
    if (!python.file.empty() && !IsLibraryFile(python.file) && python.file.find("/torch/") == std::string::npos) {
      return FrameText(python);
    }
  }
  return "";
}

// "nccl:all_reduce" -> "all_reduce"
std::string OpName(const std::string& profiling_name) {
  size_t colon = profiling_name.find(':');
  return colon == std::string::npos ? profiling_name : profiling_name.substr(colon + 1);
}

}  // namespace

Result<FlightRecord> ReadFlightRecord(std::string_view bytes, const std::string& source) {
  if (bytes.size() > kMaxFlightRecordBytes) {
    return ConfigError(fmt::format("{}: {} bytes, more than a flight recorder dump holds ({} MiB at most)", source,
                                   bytes.size(), kMaxFlightRecordBytes >> 20));
  }
  Json dump;
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[')) {
    auto parsed = jf::Parse(bytes, kMaxFlightRecordBytes);
    if (!parsed) return ConfigError(source + ": not valid JSON", "the dump may be truncated");
    dump = std::move(*parsed);
  } else {
    auto parsed = ReadPickle(bytes, source);
    if (!parsed.ok()) return parsed.error();
    dump = std::move(*parsed);
  }
  if (!dump.is_object() || !dump.contains("entries") || !dump["entries"].is_array()) {
    return ConfigError(source + ": not a flight recorder dump (it has no list of entries)",
                       "flight recorder dumps are written by PyTorch with TORCH_NCCL_TRACE_BUFFER_SIZE set");
  }
  FlightRecord record;
  record.version = jf::Text(dump, "version");
  const Json& pg_config = jf::Object(dump, "pg_config");
  std::map<std::string, GroupProgress> groups;
  std::map<std::string, std::map<int64_t, const Json*>> not_completed;  // by group, by sequence number
  for (const Json& entry : dump["entries"]) {
    if (!entry.is_object() || jf::Bool(entry, "is_p2p").value_or(false)) continue;
    std::string group = GroupName(entry, pg_config);
    auto seq = jf::Integer(entry, "collective_seq_id");
    if (group.empty() || !seq || *seq < 0) continue;
    GroupProgress& progress = groups[group];
    progress.group = group;
    progress.last_enqueued = std::max(progress.last_enqueued, *seq);
    if (jf::Text(entry, "state") == "completed") {
      progress.last_completed = std::max(progress.last_completed, *seq);
    } else {
      not_completed[group].emplace(*seq, &entry);
    }
  }
  const Json& status = jf::Object(dump, "pg_status");  // newer releases: counts past the buffer's oldest entry
  for (auto& [name, progress] : groups) {
    std::string id = name.substr(0, name.find(' '));
    const Json& group_status = jf::Object(status, id.c_str());
    if (auto enqueued = jf::Integer(group_status, "last_enqueued_collective")) {
      progress.last_enqueued = std::max(progress.last_enqueued, *enqueued);
    }
    if (auto completed = jf::Integer(group_status, "last_completed_collective")) {
      progress.last_completed = std::max(progress.last_completed, *completed);
    }
    // The oldest collective not completed (one whose entry is older than
    // its completion is not pending).
    for (const auto& [seq, entry] : not_completed[name]) {
      if (seq <= progress.last_completed) continue;
      progress.pending_seq = seq;
      progress.pending_op = OpName(jf::Text(*entry, "profiling_name"));
      progress.pending_sizes = entry->contains("input_sizes") ? (*entry)["input_sizes"].dump() : "";
      progress.pending_state = jf::Text(*entry, "state");
      progress.pending_frame = UserFrame(entry->contains("frames") ? (*entry)["frames"] : Json());
      break;
    }
    record.groups.push_back(std::move(progress));
  }
  return record;
}

}  // namespace primus::analyze
