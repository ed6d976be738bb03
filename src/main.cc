#include <string>
#include <vector>

#include "cli/dispatch.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return primus::cli::Main(argc > 0 ? argv[0] : "primus-cli", args);
}
