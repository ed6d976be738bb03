// The flags `container` hands to the engine because primus-cli does not
// know them (`--cpus 16`, `--privileged`): each one is named in the plan of
// --dry-run and in the log of a real run ("passing --cpus 16 to podman as an
// engine option"), so that nothing reaches the engine unseen. Refused
// before anything runs, because they cannot be engine options:
//  - a word that is neither a flag nor follows one (`container foo -- ...`);
//  - a flag with '_' in its name (docker and podman have none: a typo or a
//    torchrun spelling meant for direct);
//  - a flag of `direct` that the engines do not have (`--nproc-per-node`,
//    `--numa`, `--single` ...): it belongs after `-- direct`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"
#include "util/option_parser.h"

namespace primus::runtime {

struct EngineOption {
  std::string flag;                 // "--cpus"
  std::vector<std::string> tokens;  // {"--cpus", "16"} or {"--cpus=16"}
};

// `passthrough`: the unknown tokens of `container`, in order.
// `direct_options`: direct's table, to recognise its flags.
Result<std::vector<EngineOption>> CheckEngineOptions(const std::vector<std::string>& passthrough,
                                                     const std::vector<OptionSpec>& direct_options);

// "passing --cpus 16 to podman as an engine option (primus-cli does not know it)"
std::string DescribeEngineOption(const EngineOption& option, std::string_view engine);

}  // namespace primus::runtime
