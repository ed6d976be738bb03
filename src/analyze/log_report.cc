#include "analyze/log_report.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "util/strings.h"

namespace primus::analyze {
namespace {

constexpr size_t kShownTextLength = 200;

std::string Shorten(const std::string& text) {
  return text.size() <= kShownTextLength ? text : text.substr(0, kShownTextLength) + "...";
}

std::string Who(const Occurrence& where) {
  std::string who;
  if (where.rank >= 0) who = "rank " + std::to_string(where.rank);
  if (!where.host.empty()) who += (who.empty() ? "" : " on ") + where.host;
  return who.empty() ? "an unknown rank" : who;
}

std::string Where(const Occurrence& where) {
  return fmt::format("{}:{} ({}, {})", where.file, where.line, Who(where), ShortTime(where.time));
}

nlohmann::ordered_json OccurrenceJson(const Occurrence& where) {
  return {{"file", where.file},
          {"line", where.line},
          {"host", where.host.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(where.host)},
          {"rank", where.rank >= 0 ? nlohmann::ordered_json(where.rank) : nlohmann::ordered_json(nullptr)},
          {"attempt", where.attempt >= 0 ? nlohmann::ordered_json(where.attempt) : nlohmann::ordered_json(nullptr)},
          {"time", where.time > 0 ? nlohmann::ordered_json(ShortTime(where.time)) : nlohmann::ordered_json(nullptr)},
          {"text", where.text}};
}

std::string Attempt(int attempt) { return attempt >= 0 ? "attempt " + std::to_string(attempt) : "the logs"; }

}  // namespace

std::string ShortTime(double seconds) {
  if (seconds <= 0) return "-";
  long long total_millis = std::llround(seconds * 1000);
  time_t whole = static_cast<time_t>(total_millis / 1000);
  std::tm parts{};
  localtime_r(&whole, &parts);
  int millis = static_cast<int>(total_millis % 1000);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                     parts.tm_hour, parts.tm_min, parts.tm_sec, millis);
}

std::string FormatLogReport(const LogScan& scan, const SignatureDb& db) {
  const auto& signatures = db.signatures();
  std::string out = fmt::format("read {} file(s), {} line(s)\n", scan.files, scan.lines);
  if (scan.first_failures.empty() && scan.hits.empty()) {
    return out + "\nno failure found: no known signature and no error-looking line\n";
  }
  for (const FirstFailure& first : scan.first_failures) {
    out += fmt::format("\nFirst failure in {}: {} at {}\n", Attempt(first.attempt), Who(first.where),
                       ShortTime(first.where.time));
    out += fmt::format("  {}:{}: {}\n", first.where.file, first.where.line, Shorten(first.where.text));
    if (first.signature >= 0) {
      const Signature& signature = signatures[first.signature];
      out += fmt::format("  {} ({}): {}\n  fix: {}\n", signature.id, SeverityName(signature.severity),
                         signature.meaning, signature.fix);
    } else {
      out += "  no known signature: read the lines around it in that file\n";
    }
  }
  if (!scan.hits.empty()) out += "\nKnown failures (by first occurrence):\n";
  for (const SignatureHit& hit : scan.hits) {
    const Signature& signature = signatures[hit.signature];
    out += fmt::format("  [{}] {}: {} time(s){}{}\n", SeverityName(signature.severity), signature.id, hit.count,
                       hit.ranks.empty() ? "" : ", ranks " + JoinNumbers(hit.ranks, ","),
                       hit.hosts.empty() ? "" : ", hosts " + Join(hit.hosts, ","));
    out += fmt::format("      first: {}\n      {}\n", Where(hit.first), Shorten(hit.first.text));
    out += fmt::format("      meaning: {}\n      fix: {}\n", signature.meaning, signature.fix);
  }
  if (!scan.unrecognised.empty()) {
    out += "\nError-looking lines no signature explains (the first per rank):\n";
    for (const Occurrence& line : scan.unrecognised) {
      out += fmt::format("  {}\n      {}\n", Where(line), Shorten(line.text));
    }
  }
  return out;
}

std::string LogReportJson(const LogScan& scan, const SignatureDb& db) {
  const auto& signatures = db.signatures();
  nlohmann::ordered_json root;
  root["files"] = scan.files;
  root["lines"] = scan.lines;
  root["first_failures"] = nlohmann::ordered_json::array();
  for (const FirstFailure& first : scan.first_failures) {
    nlohmann::ordered_json entry = {{"attempt", first.attempt >= 0 ? nlohmann::ordered_json(first.attempt)
                                                                    : nlohmann::ordered_json(nullptr)},
                                    {"where", OccurrenceJson(first.where)}};
    entry["signature"] = first.signature >= 0 ? nlohmann::ordered_json(signatures[first.signature].id)
                                              : nlohmann::ordered_json(nullptr);
    root["first_failures"].push_back(entry);
  }
  root["failures"] = nlohmann::ordered_json::array();
  for (const SignatureHit& hit : scan.hits) {
    const Signature& signature = signatures[hit.signature];
    root["failures"].push_back({{"signature", signature.id},
                                {"severity", SeverityName(signature.severity)},
                                {"meaning", signature.meaning},
                                {"fix", signature.fix},
                                {"count", hit.count},
                                {"ranks", hit.ranks},
                                {"hosts", hit.hosts},
                                {"first", OccurrenceJson(hit.first)}});
  }
  root["unrecognised"] = nlohmann::ordered_json::array();
  for (const Occurrence& line : scan.unrecognised) root["unrecognised"].push_back(OccurrenceJson(line));
  return root.dump(2) + "\n";
}

}  // namespace primus::analyze
