// A table taken from a pinned release of another project (Megatron-LM's
// options, TorchTitan's job-config keys), as the data/*.tsv files hold it:
// a first line "# <Project> <release> <commit>", more "#" comment lines, then
// rows of tab-separated fields. Reading it is the same for every such table;
// what the fields mean is the caller's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::train {

struct PinnedTable {
  struct Row {
    int line = 0;                     // 1-based, for the caller's messages
    std::vector<std::string> fields;  // split at tabs
  };
  std::string release;
  std::string commit;
  std::vector<Row> rows;
};

// `project` is the first word of the header ("Megatron-LM"); a table
// without that header is a ConfigError naming `description`.
Result<PinnedTable> ReadPinnedTable(std::string_view tsv, std::string_view project, std::string_view description);

}  // namespace primus::train
