// Host paths a task reads or writes that the container must see, found from
// the task's own arguments before anything runs. Today that is `train`: its
// experiment file and the files it extends (read), a --replay directory and
// a --resume checkpoint (read), and the experiment's workspace (written:
// experiment directories, checkpoints, snapshots). Paths under the working
// directory need nothing more (it is mounted); container.cc mounts the rest
// at their own paths. A file that cannot be read here is skipped: the task
// inside reports it with its usual error.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace primus::runtime {

struct TaskPaths {
  std::vector<std::string> read;
  std::vector<std::string> written;
};

TaskPaths FindTaskPaths(const std::string& task, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env);

}  // namespace primus::runtime
