// Fuzz target: an experiment's metadata.json, as `--replay`, `analyze run`
// and the report read it (snapshot::MetadataFromJson, StatusNow, the root
// cause in words). The file may be damaged or edited: it must never end the
// reader.
//
// Input: the metadata.json text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analyze/run_summary.h"
#include "snapshot/metadata.h"
#include "util/json_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto json = primus::json_fields::Parse(text);
  if (!json) return 0;
  auto metadata = primus::snapshot::MetadataFromJson(*json);
  if (!metadata.ok()) return 0;
  (void)primus::snapshot::StatusNow(*metadata);
  (void)primus::analyze::DescribeRootCause(metadata->root_cause);
  (void)primus::snapshot::MetadataToJson(*metadata, primus::snapshot::Redactor());
  return 0;
}
