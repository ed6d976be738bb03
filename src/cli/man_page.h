// Manual pages in roff, made from the same help texts and option tables as
// --help: primus-cli(1), one page per mode (primus-cli-direct(1), ...) and
// one per task (primus-cli-train(1), ...). The build writes them with the
// hidden `primus-cli __man --dir DIR`, so they always match the binary
// they are installed with.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::cli {

// "primus-cli", then "primus-cli-<mode>" for every mode and "primus-cli-<task>" for every task.
std::vector<std::string> ManPageNames();

// The page in roff (man(7) macros); a usage error for an unknown name.
Result<std::string> ManPage(const std::string& name);

// Writes every page as DIR/NAME.1; the number of pages written.
Result<int> WriteManPages(const std::string& dir);

}  // namespace primus::cli
