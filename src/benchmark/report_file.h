// --output-file of the benchmarks (as Primus's benchmarks write it): the
// report as a file whose format follows its name, besides what the task
// prints on stdout:
//
//   .md, .markdown  a title, the settings as a list, then a Markdown table
//   .csv, .tsv      a header row, then one row per measurement
//   .json           the whole report, as --json prints it
//   .jsonl          one JSON object per measurement
//
// --append adds rows to an existing .md/.csv/.tsv/.jsonl file (no second
// header or title). Compressed names (.gz) and other endings are usage
// errors naming the flag. In a multi-node job every node writes its own
// rows: nodes other than 0 insert ".node<R>" before the extension, so that
// files on shared storage never collide.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace primus::benchmark {

enum class ReportFileFormat { kMarkdown, kCsv, kTsv, kJson, kJsonl };

// `flag` names the option in errors ("--output-file").
Result<ReportFileFormat> ReportFileFormatFor(const std::string& path, bool append, const std::string& flag);

struct ReportDocument {
  std::string title;                              // "benchmark gemm-dense: Llama3.1_8B"
  std::vector<std::string> settings;              // "dtype: bf16", listed under the title
  std::vector<std::string> header;                // the table's columns
  std::vector<std::vector<std::string>> rows;     // one per measurement
  nlohmann::ordered_json json;                    // .json: the whole report
  std::vector<nlohmann::ordered_json> records;    // .jsonl: one per measurement
};

// The file's content; `continuing`: appended to a file that has a header.
std::string FormatReportDocument(const ReportDocument& document, ReportFileFormat format, bool continuing);

// Writes (or appends to) `path`, creating its directory.
Status WriteReportFile(const std::string& path, const ReportDocument& document, ReportFileFormat format, bool append);

// "out/gemm.md" on node 2 -> "out/gemm.node2.md"; node 0 keeps the name.
std::string NodeReportPath(const std::string& path, int node_rank);

}  // namespace primus::benchmark
