#include "snapshot/snapshot_files.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "util/files.h"
#include "util/json_fields.h"
#include "util/private_files.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace primus::snapshot {

Result<std::vector<std::string>> WriteConfigFiles(const ExperimentDir& dir, const std::vector<std::string>& sources,
                                                  const std::string& resolved_yaml, const Redactor& redactor) {
  std::vector<std::string> written;
  for (const std::string& source : sources) {
    auto content = ReadFile(source);
    if (!content.ok()) return content.error();
    std::string name = Split(source, '/').back();
    std::string candidate = name;
    for (int n = 2; std::find(written.begin(), written.end(), candidate) != written.end() || candidate == "resolved.yaml"; ++n) {
      candidate = std::to_string(n) + "_" + name;
    }
    if (Status status = WriteFileAtomic(dir.config_dir() + "/" + candidate, redactor.Yaml(*content)); !status.ok()) {
      return status.error();
    }
    written.push_back(candidate);
  }
  if (Status status = WriteFileAtomic(dir.config_dir() + "/resolved.yaml", redactor.Yaml(resolved_yaml)); !status.ok()) {
    return status.error();
  }
  return written;
}

Status WriteEnvironment(const ExperimentDir& dir, const EnvWithOrigins& env, const Redactor& redactor) {
  std::string dump;
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [name, entry] : env) {
    std::string value = redactor.Value(name, entry.value);
    dump += name + "=" + value + "\n";
    json[name] = {{"value", value}, {"origin", redactor.Text(entry.origin)}};
  }
  if (Status status = WriteFileAtomic(dir.env_dir() + "/primus_env_dump.txt", dump); !status.ok()) return status;
  return WriteFileAtomic(dir.env_dir() + "/env.json", json.dump(2) + "\n");
}

Result<EnvWithOrigins> ReadEnvironment(const ExperimentDir& dir) {
  std::string path = dir.env_dir() + "/env.json";
  auto text = ReadRegularFile(path, 64 << 20);
  if (!text.ok()) return text.error();
  std::optional<nlohmann::json> json = json_fields::ParseObject(*text);
  if (!json) return ConfigError(path + ": not a JSON object of variables");
  EnvWithOrigins env;
  for (const auto& [name, entry] : json->items()) {
    if (!entry.is_object() || !entry.contains("value") || !entry["value"].is_string()) {
      return ConfigError(path + ": entry " + EscapeControlCharacters(name) + " has no string value",
                         "the file is damaged or was edited: replay another run, or fix the entry");
    }
    env[name] = {json_fields::Text(entry, "value"), json_fields::Text(entry, "origin")};
  }
  return env;
}

Result<std::string> FileSha256(const std::string& path) {
  auto text = ReadRegularFile(path, 64 << 20);
  if (!text.ok()) return text.error();
  return DigestHex(Sha256(*text));
}

Result<RecordedScript> KeepScriptCopy(const ExperimentDir& dir, size_t index, const std::string& kind,
                                      const std::string& path) {
  auto text = ReadRegularFile(path, 16 << 20);
  if (!text.ok()) return text.error();
  std::string hooks_dir = dir.root + "/hooks";
  if (Status made = MakePrivateDir(hooks_dir); !made.ok()) return made.error();
  RecordedScript recorded;
  recorded.kind = kind;
  recorded.path = path;
  recorded.copy = fmt::format("hooks/{:02d}_{}", index, Split(path, '/').back());
  recorded.sha256 = DigestHex(Sha256(*text));
  struct stat info {};
  bool executable = ::stat(path.c_str(), &info) == 0 && (info.st_mode & S_IXUSR) != 0;
  if (Status written = WriteFileAtomic(dir.root + "/" + recorded.copy, *text, executable ? 0700 : 0600); !written.ok()) {
    return written.error();
  }
  return recorded;
}

Status WriteSystemInfo(const ExperimentDir& dir, const nlohmann::ordered_json& info, const Redactor& redactor) {
  if (Status written = WriteFileAtomic(dir.env_dir() + "/system_info.json", redactor.Json(info).dump(2) + "\n");
      !written.ok()) {
    return written;
  }
  // The blog's plain-text files beside it, for a reader without a JSON tool.
  auto text = [&](const char* key) {
    return info.contains(key) && info[key].is_string() ? info[key].get<std::string>() : std::string();
  };
  std::string count = info.contains("gpu_count") ? info["gpu_count"].dump() : "0";
  std::string model = text("gpu_model").empty()
                          ? "no GPU found\n"
                          : fmt::format("{} x {} ({}, {}, driver {})\n", count, text("gpu_model"), text("gpu_vendor"),
                                        text("gpu_arch").empty() ? "-" : text("gpu_arch"),
                                        text("driver").empty() ? "-" : text("driver"));
  if (Status written = WriteFileAtomic(dir.env_dir() + "/gpu_model.txt", model); !written.ok()) return written;
  if (!text("rocm").empty()) {
    std::string rocm = fmt::format("ROCm {}\nHIP {}\nRCCL {}\n", text("rocm"), text("hip").empty() ? "-" : text("hip"),
                                   text("rccl").empty() ? "-" : text("rccl"));
    if (Status written = WriteFileAtomic(dir.env_dir() + "/rocm_version.txt", rocm); !written.ok()) return written;
  }
  if (!text("cuda").empty() || !text("nccl").empty()) {
    std::string cuda = fmt::format("CUDA {}\nNCCL {}\n", text("cuda").empty() ? "-" : text("cuda"),
                                   text("nccl").empty() ? "-" : text("nccl"));
    if (Status written = WriteFileAtomic(dir.env_dir() + "/cuda_version.txt", cuda); !written.ok()) return written;
  }
  return Status::Ok();
}

Result<nlohmann::json> ReadSystemInfo(const ExperimentDir& dir) {
  std::string path = dir.env_dir() + "/system_info.json";
  auto text = ReadRegularFile(path, 64 << 20);
  if (!text.ok()) return text.error();
  std::optional<nlohmann::json> json = json_fields::Parse(*text);
  if (!json) return ConfigError(path + ": not valid JSON");
  return *json;
}

}  // namespace primus::snapshot
