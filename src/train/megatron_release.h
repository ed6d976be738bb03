// Which Megatron-LM option table an experiment is checked against and its
// command line built from. Megatron's options change with every release
// (core_v0.12 has 455, core_v0.19 809) and forks add their own (VCCL's
// --batch-p2p-communication), so the table is chosen per experiment:
//   megatron.release: auto (the default)
//     - a checkout at hand (megatron.path, else $MEGATRON_PATH, holding
//       megatron/training/arguments.py): its own table, read statically by
//       python/megatron_option_table.py with the experiment's interpreter and
//       cached under ${XDG_CACHE_HOME:-~/.cache}/primus-cli/megatron-options/
//       (the key: the checkout's path and its arguments.py, package_info.py
//       and the config sources' sizes and times); a fork's options are then
//       known. When that reading fails: the compiled table of the checkout's
//       release (megatron/core/package_info.py), with a warning;
//     - no checkout here (a submit host, a laptop): the newest compiled table.
//   megatron.release: core_v0.13 (or core_v0.13.1): that compiled table (a
//     prefix takes its newest patch release), whatever is at hand.
//   megatron.release: checkout: the checkout's own table, or an error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/value.h"
#include "train/megatron_flags.h"
#include "util/environment.h"
#include "util/error.h"

namespace primus::train {

struct MegatronTable {
  std::shared_ptr<const MegatronFlags> flags;
  // Where it came from, for the plan: "core_v0.13.1 (compiled in; megatron.release core_v0.13)".
  std::string source;
  std::vector<std::string> warnings;  // a checkout whose table could not be read
};

struct MegatronTableRequest {
  const config::Value* resolved = nullptr;  // the experiment (megatron.release, megatron.path)
  Environment environment;                  // MEGATRON_PATH, HOME, XDG_CACHE_HOME
  std::string interpreter = "python3";      // runs the reader
  std::string reader;                       // the reader script; "" = python/megatron_option_table.py beside the binary
};

// A ConfigError at megatron.release's origin for a release we have no table
// of, or (megatron.release: checkout) a checkout that cannot be read.
Result<MegatronTable> ChooseMegatronTable(const MegatronTableRequest& request);

// The compiled table of `release` ("core_v0.13.1", or a prefix such as
// "core_v0.13": its newest patch release); null when there is none.
std::shared_ptr<const MegatronFlags> CompiledMegatronTable(std::string_view release);
// Every compiled release, oldest first ("core_v0.12.3", ...).
std::vector<std::string> CompiledMegatronReleases();

// "core_v0.13.1" from a checkout's megatron/core/package_info.py
// (MAJOR, MINOR, PATCH); "" when it cannot be read.
std::string CheckoutMegatronRelease(const std::string& checkout);

}  // namespace primus::train
