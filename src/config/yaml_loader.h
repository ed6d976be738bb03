// Loading configuration files: YAML with `${VAR}` interpolation and
// `extends:`, giving one merged, located Value. Used for experiment files
// (train --config exp.yaml) and for the launcher's own config files.
//
//   extends: base.yaml            # or a list: [a.yaml, b.yaml]
//
// `extends:` is only read at the top level of a file. Each path is relative
// to the directory of the file naming it; each base is loaded the same way
// (its own extends first), the bases are deep-merged in order, and the file
// itself is merged last, so it wins. The `extends` key is removed. A cycle is
// an error naming the whole cycle; a missing base is an error at the entry
// that named it. Nodes from a base remember the chain of files that led there.
//
// A file is read only when it is a regular file of at most
// kMaxConfigFileBytes (/dev/zero, a directory or a FIFO is refused before a
// byte is read); see yaml_parser.h for the limits on what the text may expand to.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/environment.h"
#include "config/value.h"
#include "util/error.h"

namespace primus::config {

// 64 MiB: far above any real configuration, far below what would strain a node.
inline constexpr size_t kMaxConfigFileBytes = size_t{64} << 20;

// The top level of a file must be a map; an empty file gives an empty map.
Result<Value> LoadYamlFile(const std::string& path, const Environment& env);

// The same for text in memory. `display_name` names it in origins and errors;
// relative `extends:` paths are resolved from its directory.
Result<Value> LoadYamlString(std::string_view text, const std::string& display_name,
                             const Environment& env);

}  // namespace primus::config
