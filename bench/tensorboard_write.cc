// The cost of TensorBoard events on node 0: one Publish of a 64-node x
// 8-GPU job's view (its training scalars and 64 x (2 + 8 x 3) system
// scalars: what node 0 writes each telemetry interval), against the floor of
// write(2) of the same bytes to a file. Target: below 1% of a core at one
// publish per telemetry interval (5 s by default, 0.5 s at the fastest
// setting anyone uses).
//
// usage: build/bench/tensorboard_write [PUBLISHES]
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "telemetry/tensorboard_feed.h"

using nlohmann::json;

int main(int argc, char** argv) {
  int publishes = argc > 1 ? std::atoi(argv[1]) : 2000;
  json view = {{"job", {{"step", 1}, {"loss", 2.5}, {"tokens_per_s", 1e6}, {"progress", 0.1}, {"median_step_time_s", 0.4}}},
               {"nodes", json::array()}};
  for (int node = 0; node < 64; ++node) {
    json sample = {{"node_rank", node}, {"host_stats", {{"cpu_percent", 1500.0}, {"mem_used_bytes", 5e11}}},
                   {"gpus", json::array()}, {"workers", json::array()}};
    for (int gpu = 0; gpu < 8; ++gpu) {
      sample["gpus"].push_back({{"index", gpu}, {"utilization_percent", 97}, {"memory_used_bytes", 7e10}, {"power_watts", 650.0}});
      sample["workers"].push_back({{"rank", node * 8 + gpu}, {"lr", 3e-4}, {"grad_norm", 1.1}, {"mfu", 0.41}});
    }
    view["nodes"].push_back(sample);
  }
  std::string dir = std::filesystem::temp_directory_path() / ("primus-bench-tb-" + std::to_string(getpid()));
  primus::telemetry::TensorBoardFeed feed(dir, "bench");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < publishes; ++i) {
    view["job"]["step"] = i + 1;
    feed.Publish(view, 0, 1764000000.0 + i);
  }
  double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / publishes;
  uintmax_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  // The floor: the same bytes, one write(2) per publish.
  std::string chunk(bytes / static_cast<uintmax_t>(publishes), 'x');
  std::string floor_path = dir + "/floor";
  int fd = ::open(floor_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < publishes; ++i) {
    if (::write(fd, chunk.data(), chunk.size()) < 0) return 1;
  }
  double floor = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / publishes;
  ::close(fd);
  std::filesystem::remove_all(dir);
  std::printf("== TensorBoard events of a 64-node x 8-GPU view, %d publishes\n", publishes);
  std::printf("  per publish (ours)              %10.1f us  (%ju bytes)\n", ours * 1e6, bytes / static_cast<uintmax_t>(publishes));
  std::printf("  per publish (write(2) floor)    %10.1f us\n", floor * 1e6);
  std::printf("  ours / floor                    %10.2f x\n", ours / floor);
  std::printf("  share of a core at 5 s          %10.4f %%\n", ours / 5 * 100);
  std::printf("  share of a core at 0.5 s        %10.4f %%\n", ours / 0.5 * 100);
  return 0;
}
