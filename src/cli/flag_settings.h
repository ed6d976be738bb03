// The command line's configuration layer: every flag that sets a launcher
// configuration key, from the global options and each mode of the chain, in
// command-line order, with the flags that stand for several settings spelled
// out:
//  - `direct --single`: direct.nproc_per_node 1, direct.nnodes 1 and
//    direct.node_rank 0 (one worker on this node, on its own); a flag that
//    says otherwise for one of them is a usage error naming both.
//  - `direct --env FILE` (a value without '='): one direct.env entry per
//    KEY=VALUE line of FILE (config/env_file.h), origin "--env FILE:LINE".
//    An explicit --env KEY=VALUE wins over every file, wherever it is
//    written; among files the later one wins. A value without '=' that
//    names no readable file is a usage error.
#pragma once

#include <vector>

#include "cli/command_line.h"
#include "config/launcher_config.h"
#include "util/error.h"

namespace primus::cli {

Result<std::vector<config::FlagSetting>> FlagSettings(const CommandLine& command);

}  // namespace primus::cli
