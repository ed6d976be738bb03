#include "train/pinned_table.h"

#include "util/strings.h"

namespace primus::train {

Result<PinnedTable> ReadPinnedTable(std::string_view tsv, std::string_view project, std::string_view description) {
  PinnedTable table;
  int line_number = 0;
  for (const std::string& line : Split(tsv, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    if (line.starts_with("#")) {
      std::vector<std::string> words = Split(std::string(Trim(line.substr(1))), ' ');
      if (line_number == 1 && words.size() == 3 && words[0] == project) {
        table.release = words[1];
        table.commit = words[2];
      }
      continue;
    }
    table.rows.push_back({line_number, Split(line, '\t')});
  }
  if (table.release.empty()) {
    return ConfigError(std::string(description) + " has no '# " + std::string(project) + " <release> <commit>' line");
  }
  return table;
}

}  // namespace primus::train
