// Fuzz target: a job view (job.json from a log directory or the metrics
// port), parsed by monitor::ParseJobView and laid out for a small and an
// unlimited screen, as `monitor` does. A view written by another version, or
// damaged, must never end the monitor.
//
// Input: the job.json text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "monitor/job_source.h"
#include "monitor/job_view_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto view = primus::monitor::ParseJobView(text, "job.json");
  if (!view.ok()) return 0;
  (void)primus::monitor::EndedState(*view);
  for (auto options : {primus::monitor::ViewOptions{80, 24, false, 1764060000, 2},
                       primus::monitor::ViewOptions{0, 0, true, 0, 2}}) {
    (void)primus::monitor::LayoutJobView(*view, options);
  }
  return 0;
}
