#include "runtime/container_engine.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/files.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

std::string Lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  auto found = env.find(name);
  return found == env.end() ? "" : found->second;
}

std::string SearchPath(const std::string& name, const std::map<std::string, std::string>& env) {
  std::string path = Lookup(env, "PATH");
  for (const std::string& dir : Split(path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

// Waits for a non-blocking connect to finish; true when it succeeded.
bool FinishConnect(int fd, int timeout_ms) {
  pollfd entry{fd, POLLOUT, 0};
  if (poll(&entry, 1, timeout_ms) != 1) return false;
  int error = 0;
  socklen_t length = sizeof(error);
  return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
}

bool UnixSocketAnswers(const std::string& path, int timeout_ms) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  bool ok = rc == 0 || (errno == EINPROGRESS && FinishConnect(fd, timeout_ms));
  close(fd);
  return ok;
}

bool TcpAnswers(const std::string& host_port, int timeout_ms) {
  std::string rest = host_port.substr(0, host_port.find('/'));
  size_t colon = rest.rfind(':');
  std::string host = colon == std::string::npos ? rest : rest.substr(0, colon);
  std::string port = colon == std::string::npos ? "2375" : rest.substr(colon + 1);
  if (host.starts_with("[") && host.ends_with("]")) host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return false;
  bool ok = false;
  for (addrinfo* entry = found; entry && !ok; entry = entry->ai_next) {
    int fd = socket(entry->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int rc = connect(fd, entry->ai_addr, entry->ai_addrlen);
    ok = rc == 0 || (errno == EINPROGRESS && FinishConnect(fd, timeout_ms));
    close(fd);
  }
  freeaddrinfo(found);
  return ok;
}

Error NoEngine(const std::string& podman_state, const std::string& docker_state) {
  return Error{ExitCode::kUnavailable,
               "no container engine: podman " + podman_state + ", and docker " + docker_state,
               "install podman (scripts/setup.sh does: podman, crun) or start a docker daemon (DOCKER_HOST); "
               "or run the task without a container: primus-cli direct -- <task>"};
}

}  // namespace

std::string DockerEndpoint(const std::map<std::string, std::string>& env) {
  std::string host = Lookup(env, "DOCKER_HOST");
  return host.empty() ? "unix:///var/run/docker.sock" : host;
}

bool EndpointAnswers(const std::string& endpoint, int timeout_ms) {
  if (endpoint.starts_with("unix://")) return UnixSocketAnswers(endpoint.substr(7), timeout_ms);
  if (endpoint.starts_with("tcp://")) return TcpAnswers(endpoint.substr(6), timeout_ms);
  if (endpoint.starts_with("/")) return UnixSocketAnswers(endpoint, timeout_ms);
  return true;
}

Result<Engine> FindEngine(std::string_view requested, const std::map<std::string, std::string>& env,
                          const std::string& where) {
  std::string choice = ToLower(Trim(requested));
  if (choice.empty()) choice = "auto";
  if (choice != "auto" && choice != "docker" && choice != "podman") {
    return UsageError(where + ": unknown container engine '" + std::string(requested) + "'" +
                          DidYouMean(choice, {"auto", "docker", "podman"}),
                      "use docker, podman or auto");
  }
  std::string podman = SearchPath("podman", env);
  std::string docker = SearchPath("docker", env);
  std::string endpoint = DockerEndpoint(env);
  bool docker_answers = !docker.empty() && EndpointAnswers(endpoint);

  std::string podman_state = podman.empty() ? "is not installed (not on PATH)" : "is at " + podman;
  std::string docker_state = docker.empty() ? "is not installed (not on PATH)"
                             : docker_answers
                                 ? "answers at " + endpoint
                                 : "is installed (" + docker + ") but no daemon answers at " + endpoint;
  if (choice == "podman") {
    if (podman.empty()) {
      return Error{ExitCode::kUnavailable, where + " is podman, but podman " + podman_state,
                   "install it (apt-get install podman crun), use --engine docker (docker " + docker_state +
                       "), or run the task without a container: primus-cli direct -- <task>"};
    }
    return Engine{EngineKind::kPodman, podman, ""};
  }
  if (choice == "docker") {
    if (!docker_answers) {
      return Error{ExitCode::kUnavailable, where + " is docker, but docker " + docker_state,
                   "start the docker daemon or point DOCKER_HOST at one, use --engine podman (podman " + podman_state +
                       "), or run the task without a container: primus-cli direct -- <task>"};
    }
    return Engine{EngineKind::kDocker, docker, endpoint};
  }
  if (docker_answers) return Engine{EngineKind::kDocker, docker, endpoint};
  if (!podman.empty()) return Engine{EngineKind::kPodman, podman, ""};
  return NoEngine(podman_state, docker_state);
}

}  // namespace primus::runtime
