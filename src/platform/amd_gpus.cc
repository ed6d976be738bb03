#include "platform/amd_gpus.h"

#include <fmt/format.h>

#include <map>

#include "platform/device_table.h"
#include "platform/pci_devices.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

constexpr uint64_t kIoLinkTypeXgmi = 11;
constexpr uint64_t kHeapTypeFrameBufferPublic = 1;
constexpr uint64_t kHeapTypeFrameBufferPrivate = 2;

// The numeric properties of one KFD properties file. Lines that are not
// "name number" are reported once, with their line numbers.
std::map<std::string, uint64_t> ReadProperties(const std::string& path, Diagnostics& diagnostics) {
  std::map<std::string, uint64_t> properties;
  auto content = ReadFile(path);
  if (!content.ok()) {
    diagnostics.Warn("cannot read " + path + ": " + content.error().message);
    return properties;
  }
  std::vector<int> malformed;
  for (const KeyValueLine& line : ParseKeyValueLines(*content, ' ', &malformed)) {
    auto value = ParseUnsigned(line.value);
    if (value) {
      properties[line.key] = *value;
    } else {
      malformed.push_back(0);
    }
  }
  if (!malformed.empty()) {
    diagnostics.Warn(fmt::format("{}: {} malformed line(s) ignored (expected 'name number')", path,
                                 malformed.size()));
  }
  return properties;
}

uint64_t Property(const std::map<std::string, uint64_t>& properties, const std::string& key) {
  auto found = properties.find(key);
  return found == properties.end() ? 0 : found->second;
}

// Device memory from the node's memory banks (the kernel prints
// local_mem_size as 0 in the node properties since Linux 6.x).
int64_t FrameBufferBytes(const std::string& node_dir, Diagnostics& diagnostics) {
  int64_t total = 0;
  std::string banks = node_dir + "/mem_banks";
  for (const std::string& bank : ListDirectory(banks)) {
    auto properties = ReadProperties(banks + "/" + bank + "/properties", diagnostics);
    uint64_t heap = Property(properties, "heap_type");
    if (heap == kHeapTypeFrameBufferPublic || heap == kHeapTypeFrameBufferPrivate) {
      total += static_cast<int64_t>(Property(properties, "size_in_bytes"));
    }
  }
  return total;
}

// KFD node numbers this node has XGMI links to.
std::vector<int> XgmiPeerNodes(const std::string& node_dir, Diagnostics& diagnostics) {
  std::vector<int> peers;
  std::string links = node_dir + "/io_links";
  for (const std::string& link : ListDirectory(links)) {
    auto properties = ReadProperties(links + "/" + link + "/properties", diagnostics);
    if (Property(properties, "type") == kIoLinkTypeXgmi && properties.count("node_to")) {
      peers.push_back(static_cast<int>(Property(properties, "node_to")));
    }
  }
  return peers;
}

void DescribeFromProperties(const std::map<std::string, uint64_t>& properties, GpuInfo& gpu) {
  gpu.arch = GfxTargetName(Property(properties, "gfx_target_version"));
  gpu.vendor_id = static_cast<uint16_t>(Property(properties, "vendor_id"));
  gpu.device_id = static_cast<uint16_t>(Property(properties, "device_id"));
  gpu.hive_id = Property(properties, "hive_id");
  gpu.num_xcc = static_cast<int>(Property(properties, "num_xcc"));
  if (properties.count("drm_render_minor")) {
    gpu.render_minor = static_cast<int>(Property(properties, "drm_render_minor"));
  }
  if (uint64_t unique_id = Property(properties, "unique_id")) {
    gpu.uuid = fmt::format("GPU-{:016x}", unique_id);
  }
  if (properties.count("location_id")) {
    gpu.pci_bus_id = BusIdFromLocation(Property(properties, "domain"), Property(properties, "location_id"));
  }
  gpu.known = FindKnownDevice(gpu.vendor_id, gpu.device_id);
  if (gpu.known) {
    gpu.model = std::string(gpu.known->model);
    gpu.product = std::string(gpu.known->product);
    if (gpu.arch.empty()) gpu.arch = std::string(gpu.known->arch);
  } else if (gpu.device_id != 0) {  // 0: the properties could not be read (already warned)
    gpu.product = fmt::format("AMD GPU {} (device 0x{:04x})", gpu.arch.empty() ? "?" : gpu.arch, gpu.device_id);
    log::Info("AMD device 0x{:04x} ({}) is not in the device table: its profile comes from the "
              "architecture", gpu.device_id, gpu.arch.empty() ? "unknown architecture" : gpu.arch);
  } else {
    gpu.product = "AMD GPU (properties unreadable)";
  }
}

}  // namespace

std::vector<GpuInfo> DetectAmdGpus(const Roots& roots, const std::vector<PciDevice>& pci,
                                   Diagnostics& diagnostics) {
  std::vector<GpuInfo> gpus;
  std::string nodes_dir = roots.Sys("class/kfd/kfd/topology/nodes");
  int hidden_nodes = 0;
  std::map<int, std::vector<int>> peer_nodes;  // KFD node -> XGMI peer nodes
  for (const std::string& node : ListDirectory(nodes_dir)) {
    std::string node_dir = nodes_dir + "/" + node;
    auto gpu_id_text = ReadAttribute(node_dir + "/gpu_id");
    if (!gpu_id_text && PathExists(node_dir + "/gpu_id")) {
      // A device cgroup makes the GPUs a container may not use unreadable.
      ++hidden_nodes;
      log::Debug("KFD node {} is not accessible here (device cgroup); skipping it", node);
      continue;
    }
    auto properties = ReadProperties(node_dir + "/properties", diagnostics);
    auto gpu_id = gpu_id_text ? ParseUnsigned(*gpu_id_text) : std::nullopt;
    if (!gpu_id) {
      diagnostics.Warn(fmt::format("{}/gpu_id is {}; deciding from its properties whether it is a GPU",
                                   node_dir, gpu_id_text ? "malformed" : "missing"));
      bool looks_like_gpu = Property(properties, "simd_count") > 0 || Property(properties, "gfx_target_version") > 0;
      if (!looks_like_gpu) continue;
    } else if (*gpu_id == 0) {
      continue;  // a CPU node
    }

    GpuInfo gpu;
    gpu.vendor = "amd";
    gpu.kfd_node = static_cast<int>(ParseUnsigned(node).value_or(0));
    gpu.gpu_id = gpu_id.value_or(0);
    DescribeFromProperties(properties, gpu);
    if (gpu.vendor_id == 0) gpu.vendor_id = kAmdVendorId;

    if (int64_t local = static_cast<int64_t>(Property(properties, "local_mem_size")); local > 0) {
      gpu.memory_bytes = local;
    } else {
      gpu.memory_bytes = FrameBufferBytes(node_dir, diagnostics);
    }
    if (gpu.memory_bytes > 0) {
      gpu.memory_source = "kfd";
    } else if (gpu.known && gpu.known->memory_gib > 0) {
      gpu.memory_bytes = static_cast<int64_t>(gpu.known->memory_gib * (1LL << 30));
      gpu.memory_source = "device table";
    }

    if (!gpu.pci_bus_id.empty()) {
      gpu.pci = FindOrReadPciDevice(roots, pci, gpu.pci_bus_id);
      gpu.numa_node = gpu.pci.numa_node;
    }
    peer_nodes[gpu.kfd_node] = XgmiPeerNodes(node_dir, diagnostics);
    gpus.push_back(std::move(gpu));
  }

  // XGMI peers as GPU positions in this list.
  for (GpuInfo& gpu : gpus) {
    for (int peer_node : peer_nodes[gpu.kfd_node]) {
      for (size_t position = 0; position < gpus.size(); ++position) {
        if (gpus[position].kfd_node == peer_node) gpu.xgmi_peers.push_back(static_cast<int>(position));
      }
    }
  }

  // Instinct GPUs on the bus that KFD does not list cannot run ROCm work.
  if (hidden_nodes == 0) {
    int missing = 0;
    for (const GpuInfo& gpu : gpus) missing -= gpu.pci_bus_id.empty();  // listed, address unknown
    for (const PciDevice& device : pci) {
      if (device.vendor_id != kAmdVendorId || !FindKnownDevice(device.vendor_id, device.device_id)) continue;
      bool listed = false;
      for (const GpuInfo& gpu : gpus) listed = listed || gpu.pci_bus_id == device.bus_id;
      if (!listed) ++missing;
    }
    if (missing > 0) {
      diagnostics.Warn(fmt::format(
          "{} AMD GPU(s) on the PCI bus are not in the KFD topology ({}): is the amdgpu driver loaded?",
          missing, nodes_dir));
    }
  }
  return gpus;
}

}  // namespace primus::platform
