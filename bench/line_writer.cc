// A worker that only logs: writes MEGABYTES of text lines (LINE_LENGTH bytes
// each, newline included) to stdout as fast as write(2) allows, WRITE_SIZE
// bytes per write (64 KiB by default; 4096 is what a C/C++ program's stdio
// buffer does on a pipe or file). The worst case for a launcher's log path:
// no compute to hide it.
//
// usage: line_writer MEGABYTES [LINE_LENGTH] [WRITE_SIZE]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: line_writer MEGABYTES [LINE_LENGTH]\n");
    return 2;
  }
  const size_t total = static_cast<size_t>(std::atof(argv[1]) * 1024 * 1024);
  const size_t line_length = argc > 2 ? static_cast<size_t>(std::atoi(argv[2])) : 100;
  const size_t write_size = argc > 3 ? static_cast<size_t>(std::atoi(argv[3])) : 64 * 1024;
  const char* rank = std::getenv("RANK");
  // One block of distinct lines, reused.
  std::string block;
  for (int step = 0; block.size() < 64 * 1024 - line_length; ++step) {
    std::string line = "rank " + std::string(rank ? rank : "?") + " step " + std::to_string(step) +
                       " loss 2.3456 lr 0.0003 tokens/s 123456 ";
    line.resize(line_length - 1, 'x');
    block += line + "\n";
  }
  size_t written = 0, offset = 0;
  while (written < total) {
    size_t chunk = std::min({write_size, block.size() - offset, total - written});
    ssize_t n = write(1, block.data() + offset, chunk);
    if (n <= 0) return 1;
    written += static_cast<size_t>(n);
    offset = (offset + static_cast<size_t>(n)) % block.size();
  }
  return 0;
}
