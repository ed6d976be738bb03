// Scalar typing as in the YAML 1.2 core schema, shared by the YAML loader,
// `key=value` overrides and the writers, so that `lr: 1e-3`, `--set lr=1e-3`
// and `PRIMUS_..=1e-3` read alike, and so that what we write reads back as
// the same type (the public Primus parser left every value a string).
#pragma once

#include <string>
#include <string_view>

#include "config/value.h"

namespace primus::config {

// The type a plain (unquoted, untagged) scalar resolves to:
//   null:  "", ~, null, Null, NULL
//   bool:  true/True/TRUE, false/False/FALSE   (not yes/no/on/off: YAML 1.2)
//   int:   [-+]?[0-9]+, 0x[0-9a-fA-F]+, 0o[0-7]+
//   float: [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?.inf, .nan
//   anything else: string.
// An integer too large for int64 becomes a double.
Value InferScalar(std::string_view text, Origin origin = {});

// Shortest text that reads back as the same double and as a float, not an
// int: 1.0 -> "1.0", 1e-3 -> "0.001", inf -> ".inf", NaN -> ".nan".
std::string FormatDouble(double value);

// The string as a YAML scalar: plain when it reads back as the same string,
// double-quoted with escapes otherwise ("" , "true", "1", "a: b", " x").
// Also quoted: what a YAML 1.1 reader such as PyYAML would not read as a
// string ("yes", "off", "1:00:00", "1.2.3"), since our output feeds Python.
std::string QuoteForYaml(std::string_view text);

// A scalar, or an empty list/map, as YAML text that reads back as the same
// value: strings through QuoteForYaml, "null", "true", "42", "0.5", "[]", "{}".
// With escape_dollars, '$' in strings is written '$$' (see Value::ToYaml).
std::string ScalarToYaml(const Value& value, bool escape_dollars = false);

}  // namespace primus::config
