// The program: parse the command line, build the layered launcher
// configuration, then print help, show the configuration, print the plan
// (--dry-run), or hand the launch to the outermost runtime. Every error is
// printed once, here, with its hint, and mapped to its documented exit code.
// Invoked through a link named torchrun, the command line is torchrun's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace primus::cli {

// `program` is argv[0], `args` the rest.
int Main(std::string_view program, const std::vector<std::string>& args);

}  // namespace primus::cli
