// The upstream tables compiled into the binary (embed_table.cmake): the
// options of Megatron-LM's parser and the keys of TorchTitan's job config at
// the releases we pin, extracted from their sources by tests/tools/.
#pragma once

#include <string_view>
#include <vector>

namespace primus::train {

// data/megatron_flags-<release>.tsv, one per pinned release, oldest first.
std::vector<std::string_view> BuiltinMegatronFlagsTsvs();
std::string_view BuiltinTorchTitanKeysTsv();   // data/torchtitan_keys-v0.2.2.tsv

}  // namespace primus::train
