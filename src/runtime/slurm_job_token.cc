#include "runtime/slurm_job_token.h"

#include "util/random.h"

namespace primus::runtime {

Result<std::map<std::string, std::string>> JobTokenEnvironment(const std::map<std::string, std::string>& environment) {
  auto existing = environment.find(kJobTokenVariable);
  if (existing != environment.end() && !existing->second.empty()) return std::map<std::string, std::string>{};
  Result<std::string> token = NewJobToken();
  if (!token.ok()) return token.error();
  return std::map<std::string, std::string>{{kJobTokenVariable, *token}};
}

}  // namespace primus::runtime
