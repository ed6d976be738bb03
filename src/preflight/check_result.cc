#include "preflight/check_result.h"

#include "util/json_fields.h"
#include "util/strings.h"

#include <fmt/format.h>

namespace primus::preflight {

std::string StatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kWarn: return "WARN";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kSkip: return "SKIP";
  }
  return "FAIL";
}

CheckResult Pass(std::string category, std::string name, std::string value, std::string expected) {
  return {std::move(category), std::move(name), CheckStatus::kPass, std::move(value), std::move(expected), ""};
}
CheckResult Warn(std::string category, std::string name, std::string value, std::string expected, std::string fix) {
  return {std::move(category), std::move(name), CheckStatus::kWarn, std::move(value), std::move(expected), std::move(fix)};
}
CheckResult Fail(std::string category, std::string name, std::string value, std::string expected, std::string fix) {
  return {std::move(category), std::move(name), CheckStatus::kFail, std::move(value), std::move(expected), std::move(fix)};
}
CheckResult Skip(std::string category, std::string name, std::string why) {
  return {std::move(category), std::move(name), CheckStatus::kSkip, std::move(why), "", ""};
}

nlohmann::ordered_json CheckToJson(const CheckResult& r) {
  return {{"category", r.category}, {"name", r.name}, {"status", StatusName(r.status)},
          {"value", r.value},       {"expected", r.expected}, {"fix", r.fix}};
}

CheckResult CheckFromJson(const nlohmann::json& json) {
  // Another node's report: every field read safely, its text on one line.
  auto text = [&](const char* key) { return EscapeControlCharacters(json_fields::Text(json, key)); };
  CheckStatus status = CheckStatus::kFail;
  for (CheckStatus known : {CheckStatus::kPass, CheckStatus::kWarn, CheckStatus::kSkip}) {
    if (json_fields::Text(json, "status") == StatusName(known)) status = known;
  }
  return {text("category"), text("name"), status, text("value"), text("expected"), text("fix")};
}

CheckStatus Worst(const std::vector<CheckResult>& results) {
  CheckStatus worst = CheckStatus::kPass;
  for (const CheckResult& result : results) {
    if (result.status == CheckStatus::kFail) return CheckStatus::kFail;
    if (result.status == CheckStatus::kWarn) worst = CheckStatus::kWarn;
  }
  return worst;
}

std::string Bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) bytes /= 1024, ++unit;
  std::string number = fmt::format("{:.{}f}", bytes, unit == 0 || bytes >= 100 ? 0 : 1);
  if (number.ends_with(".0")) number.resize(number.size() - 2);
  return number + " " + units[unit];
}

}  // namespace primus::preflight
