#include "runtime/slurm_job_token.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace primus::runtime {

Result<std::string> NewJobToken() {
  unsigned char bytes[16];
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return EnvironmentError(std::string("cannot open /dev/urandom for the job token: ") + std::strerror(errno),
                            "or set PRIMUS_JOB_TOKEN yourself (32 random hex characters)");
  }
  size_t have = 0;
  while (have < sizeof(bytes)) {
    ssize_t n = ::read(fd, bytes + have, sizeof(bytes) - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  if (have != sizeof(bytes)) {
    return EnvironmentError("cannot read 16 bytes from /dev/urandom for the job token",
                            "or set PRIMUS_JOB_TOKEN yourself (32 random hex characters)");
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : bytes) {
    token.push_back(kDigits[byte >> 4]);
    token.push_back(kDigits[byte & 15]);
  }
  return token;
}

Result<std::map<std::string, std::string>> JobTokenEnvironment(const std::map<std::string, std::string>& environment) {
  auto existing = environment.find(kJobTokenVariable);
  if (existing != environment.end() && !existing->second.empty()) return std::map<std::string, std::string>{};
  Result<std::string> token = NewJobToken();
  if (!token.ok()) return token.error();
  return std::map<std::string, std::string>{{kJobTokenVariable, *token}};
}

}  // namespace primus::runtime
