// The program: parse the command line, build the layered launcher
// configuration, then print help, show the configuration, print the plan
// (--dry-run), or hand the launch to the outermost runtime. Every error is
// printed once, here, with its hint, and mapped to its documented exit code.
#pragma once

#include <string>
#include <vector>

namespace primus::cli {

int Main(const std::vector<std::string>& args);

}  // namespace primus::cli
