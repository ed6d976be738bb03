// One preflight check's outcome: PASS, WARN, FAIL or SKIP, with what was
// measured, what was expected and a one-line fix, so every line of the
// report says what to do. Checks are pure functions of what detection read,
// which is what lets them run on fixture trees.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace primus::preflight {

enum class CheckStatus { kPass, kWarn, kFail, kSkip };

std::string StatusName(CheckStatus status);  // "PASS", "WARN", "FAIL", "SKIP"

struct CheckResult {
  std::string category;  // "host", "gpu", "network", "software", "perf"
  std::string name;      // "memlock", "pcie-link GPU5"
  CheckStatus status = CheckStatus::kPass;
  std::string value;     // what was measured
  std::string expected;  // what passes
  std::string fix;       // one line; empty when it passed
};

CheckResult Pass(std::string category, std::string name, std::string value, std::string expected = "");
CheckResult Warn(std::string category, std::string name, std::string value, std::string expected, std::string fix);
CheckResult Fail(std::string category, std::string name, std::string value, std::string expected, std::string fix);
CheckResult Skip(std::string category, std::string name, std::string why);

// The worst status among the results (SKIP counts as PASS); PASS for none.
CheckStatus Worst(const std::vector<CheckResult>& results);

// One result as JSON ({category, name, status, value, expected, fix}): the
// --json report and the reports nodes send node 0 share this shape. An
// unknown status reads back as FAIL.
nlohmann::ordered_json CheckToJson(const CheckResult& result);
CheckResult CheckFromJson(const nlohmann::json& json);

// "1.5 GiB", "8 MiB", "unlimited" style sizes.
std::string Bytes(double bytes);

}  // namespace primus::preflight
