// data/signatures.yaml as compiled into the binary (embed_signatures.cmake).
#pragma once

#include <string_view>

namespace primus::analyze {

std::string_view BuiltinSignaturesYaml();

}  // namespace primus::analyze
