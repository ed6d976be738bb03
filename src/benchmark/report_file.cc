#include "benchmark/report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/files.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

std::string Quoted(const std::string& field, char separator) {
  if (field.find_first_of(std::string(1, separator) + "\"\n") == std::string::npos) return field;
  return "\"" + ReplaceAll(field, "\"", "\"\"") + "\"";
}

std::string Delimited(const std::vector<std::string>& fields, char separator) {
  std::vector<std::string> quoted;
  for (const std::string& field : fields) quoted.push_back(Quoted(field, separator));
  return Join(quoted, std::string(1, separator)) + "\n";
}

std::string MarkdownRow(const std::vector<std::string>& fields) {
  std::vector<std::string> cells;
  for (const std::string& field : fields) cells.push_back(ReplaceAll(ReplaceAll(field, "|", "\\|"), "\n", " "));
  return "| " + Join(cells, " | ") + " |\n";
}

}  // namespace

Result<ReportFileFormat> ReportFileFormatFor(const std::string& path, bool append, const std::string& flag) {
  std::string name = ToLower(path.substr(path.find_last_of('/') + 1));
  const std::string kinds = ".md, .csv, .tsv, .json or .jsonl";
  if (name.ends_with(".gz")) {
    return UsageError(flag + " " + path + ": compressed reports are not written here",
                      "write " + path.substr(0, path.size() - 3) + " and compress it afterwards");
  }
  ReportFileFormat format;
  if (name.ends_with(".md") || name.ends_with(".markdown")) format = ReportFileFormat::kMarkdown;
  else if (name.ends_with(".csv")) format = ReportFileFormat::kCsv;
  else if (name.ends_with(".tsv")) format = ReportFileFormat::kTsv;
  else if (name.ends_with(".jsonl")) format = ReportFileFormat::kJsonl;
  else if (name.ends_with(".json")) format = ReportFileFormat::kJson;
  else {
    return UsageError(flag + " " + path + ": the name must end in " + kinds + " (the format follows it)",
                      "e.g. " + flag + " gemm_report.md");
  }
  if (append && format == ReportFileFormat::kJson) {
    return UsageError("--append adds rows, which a .json document cannot take", "use a .jsonl, .csv, .tsv or .md file with --append");
  }
  return format;
}

std::string FormatReportDocument(const ReportDocument& document, ReportFileFormat format, bool continuing) {
  std::string out;
  switch (format) {
    case ReportFileFormat::kMarkdown:
      if (!continuing) {
        out += "# " + document.title + "\n\n";
        for (const std::string& line : document.settings) out += "- " + line + "\n";
        if (!document.settings.empty()) out += "\n";
        out += MarkdownRow(document.header);
        out += "|" + Join(std::vector<std::string>(document.header.size(), "---"), "|") + "|\n";
      }
      for (const auto& row : document.rows) out += MarkdownRow(row);
      return out;
    case ReportFileFormat::kCsv:
    case ReportFileFormat::kTsv: {
      char separator = format == ReportFileFormat::kCsv ? ',' : '\t';
      if (!continuing) out += Delimited(document.header, separator);
      for (const auto& row : document.rows) out += Delimited(row, separator);
      return out;
    }
    case ReportFileFormat::kJson:
      return document.json.dump(2) + "\n";
    case ReportFileFormat::kJsonl:
      for (const auto& record : document.records) out += record.dump() + "\n";
      return out;
  }
  return out;
}

Status WriteReportFile(const std::string& path, const ReportDocument& document, ReportFileFormat format, bool append) {
  std::string dir = DirName(path);
  if (!dir.empty() && dir != "." && !IsDirectory(dir)) {
    if (Status made = MakeDirs(dir); !made.ok()) return made;
  }
  if (!append) return WriteFileAtomic(path, FormatReportDocument(document, format, false), kUserOutputMode);
  auto existing = ReadFile(path);
  bool continuing = existing.ok() && !existing->empty();
  std::string text = FormatReportDocument(document, format, continuing);
  if (continuing && format == ReportFileFormat::kMarkdown && !existing->ends_with("\n")) text = "\n" + text;
  // Never through a link planted in the file's place, never into something
  // that is not a regular file.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return UnavailableError("cannot append to " + path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return UnavailableError("cannot append to " + path + ": not a regular file");
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t written = ::write(fd, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      int saved = errno;
      ::close(fd);
      return UnavailableError("cannot append to " + path + ": " + std::strerror(saved));
    }
    done += static_cast<size_t>(written);
  }
  ::close(fd);
  return Status::Ok();
}

std::string NodeReportPath(const std::string& path, int node_rank) {
  if (node_rank == 0) return path;
  size_t slash = path.find_last_of('/');
  size_t dot = path.find('.', slash == std::string::npos ? 0 : slash + 1);
  std::string suffix = ".node" + std::to_string(node_rank);
  if (dot == std::string::npos || dot == (slash == std::string::npos ? 0 : slash + 1)) return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

}  // namespace primus::benchmark
