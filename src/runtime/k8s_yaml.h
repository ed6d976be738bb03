// YAML text for Kubernetes manifests, built from nlohmann::ordered_json
// documents and written by yaml-cpp's emitter (never by string pasting).
// Keys keep their insertion order. Every string a YAML 1.1 reader (the one
// kubectl uses) could take for something else, such as "8", "yes", "null",
// "", "--", or text with spaces, quotes or colons, is double-quoted, so that
// a task argument like `--lr 1e-3` or `say "hi"` reaches the pod exactly as
// written and a numeric-looking env value stays a string. In double quotes,
// every byte outside printable ASCII is escaped (a line break, ESC, DEL,
// non-ASCII text as \uXXXX), and comment lines have their control
// characters escaped. YAML holds Unicode text only: strings must be valid
// UTF-8 (ValidateJob checks the pods' command).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace primus::runtime {

// One document, without a leading "---".
std::string ToYaml(const nlohmann::ordered_json& document);

// "# <line>" for each line of `comment`, then each document after a "---".
std::string ToYamlDocuments(const std::vector<nlohmann::ordered_json>& documents, std::string_view comment);

// True when `text` reads back as the same string when written plain.
bool IsPlainSafe(std::string_view text);

}  // namespace primus::runtime
