#include "platform/host_system.h"

#include <set>
#include <utility>

#include "util/files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

void DetectCpus(const Roots& roots, Diagnostics& diagnostics, HostInfo& host) {
  std::string path = roots.Proc("cpuinfo");
  auto content = ReadFile(path);
  if (!content.ok()) {
    diagnostics.Warn("cannot read " + path + ": CPU model and core counts are unknown");
    return;
  }
  std::set<std::string> sockets;
  std::set<std::pair<std::string, std::string>> cores;
  std::string socket;
  for (const KeyValueLine& line : ParseKeyValueLines(*content, ':')) {
    if (line.key == "processor") {
      ++host.logical_cpus;
      socket.clear();
    } else if (line.key == "model name" && host.cpu_model.empty()) {
      host.cpu_model = line.value;
    } else if (line.key == "physical id") {
      socket = line.value;
      sockets.insert(socket);
    } else if (line.key == "core id") {
      cores.insert({socket, line.value});
    }
  }
  host.sockets = sockets.empty() ? 1 : static_cast<int>(sockets.size());
  host.physical_cores = cores.empty() ? host.logical_cpus : static_cast<int>(cores.size());
  if (host.logical_cpus == 0) diagnostics.Warn(path + " lists no processors");
}

void DetectNumaNodes(const Roots& roots, Diagnostics& diagnostics, HostInfo& host) {
  std::string nodes_dir = roots.Sys("devices/system/node");
  for (const std::string& name : ListDirectory(nodes_dir)) {
    if (name.rfind("node", 0) != 0) continue;
    auto id = ParseUnsigned(name.substr(4));
    if (!id) continue;
    std::string path = nodes_dir + "/" + name + "/cpulist";
    auto text = ReadAttribute(path);
    auto cpus = text ? ParseCpuList(*text) : std::nullopt;
    if (!cpus) {
      diagnostics.Warn("cannot read a CPU list from " + path + "; NUMA node " + name.substr(4) +
                       " is left out of --numa-bind");
      continue;
    }
    host.numa_nodes.push_back({static_cast<int>(*id), std::move(*cpus)});
  }
}

void DetectAllowedCpus(const Roots& roots, Diagnostics& diagnostics, HostInfo& host) {
  std::string path = roots.Proc("self/status");
  auto content = ReadFile(path);
  if (!content.ok()) return;  // not worth a warning: no restriction is then assumed
  auto text = FindValue(ParseKeyValueLines(*content, ':'), "Cpus_allowed_list");
  if (!text) return;
  if (auto cpus = ParseCpuList(*text)) {
    host.allowed_cpus = std::move(*cpus);
  } else {
    diagnostics.Warn("malformed Cpus_allowed_list '" + *text + "' in " + path);
  }
}

void DetectMemory(const Roots& roots, Diagnostics& diagnostics, HostInfo& host) {
  std::string path = roots.Proc("meminfo");
  auto content = ReadFile(path);
  auto total = content.ok() ? FindValue(ParseKeyValueLines(*content, ':'), "MemTotal") : std::nullopt;
  auto kilobytes = total ? ParseInt(Split(*total, ' ')[0]) : std::nullopt;
  if (!kilobytes) {
    diagnostics.Warn("cannot read MemTotal from " + path);
    return;
  }
  host.memory_bytes = *kilobytes * 1024;
}

std::string OsName(const Roots& roots) {
  auto content = ReadFile(roots.Etc("os-release"));
  if (!content.ok()) return "";
  std::string name = FindValue(ParseKeyValueLines(*content, '='), "PRETTY_NAME").value_or("");
  if (name.size() >= 2 && (name.front() == '"' || name.front() == '\'') && name.back() == name.front()) {
    name = name.substr(1, name.size() - 2);
  }
  return name;
}

}  // namespace

void DetectHostSystem(const Roots& roots, Diagnostics& diagnostics, HostInfo& host) {
  host.hostname = ReadAttribute(roots.Proc("sys/kernel/hostname")).value_or("");
  host.kernel = ReadAttribute(roots.Proc("sys/kernel/osrelease")).value_or("");
  host.os = OsName(roots);
  DetectCpus(roots, diagnostics, host);
  DetectNumaNodes(roots, diagnostics, host);
  DetectAllowedCpus(roots, diagnostics, host);
  DetectMemory(roots, diagnostics, host);
}

}  // namespace primus::platform
