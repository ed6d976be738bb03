// `analyze logs` output: the first failure of each attempt with its meaning
// and fix, every known failure (first occurrence, count, ranks), and the
// error-looking lines no signature explains; as text for people or JSON for
// tools.
#pragma once

#include <string>

#include "analyze/log_scan.h"
#include "analyze/signature_db.h"

namespace primus::analyze {

std::string FormatLogReport(const LogScan& scan, const SignatureDb& db);
std::string LogReportJson(const LogScan& scan, const SignatureDb& db);

// "2026-11-24T09:19:28.495" (local time, milliseconds), "-" for 0.
std::string ShortTime(double seconds);

}  // namespace primus::analyze
