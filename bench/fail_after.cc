// A worker that fails on cue, for the teardown bench: sleeps MILLISECONDS,
// writes the wall-clock time (ns since the epoch) to STAMP_FILE just before
// exiting with CODE, so the bench can time failure -> launcher exit.
//
// usage: fail_after MILLISECONDS STAMP_FILE CODE
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: fail_after MILLISECONDS STAMP_FILE CODE\n");
    return 2;
  }
  long milliseconds = std::atol(argv[1]);
  timespec pause{milliseconds / 1000, (milliseconds % 1000) * 1000000L};
  nanosleep(&pause, nullptr);
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::string stamp = std::to_string(static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec) + "\n";
  int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = write(fd, stamp.data(), stamp.size());
    (void)ignored;
    close(fd);
  }
  return std::atoi(argv[3]);
}
