// Which container engine runs the image. podman is daemonless: it is usable
// when its binary is on PATH. docker needs its client on PATH and a daemon
// that accepts a connection on its socket (DOCKER_HOST, else
// /var/run/docker.sock): a docker client alone, as on hosts where only the
// CLI was installed, is not an engine. `auto` prefers a reachable docker
// daemon (a site that runs one keeps its images there), then podman.
// Detection runs nothing: it searches PATH and opens a socket.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "util/error.h"

namespace primus::runtime {

enum class EngineKind { kDocker, kPodman };

struct Engine {
  EngineKind kind = EngineKind::kPodman;
  std::string executable;  // resolved path of the client
  std::string endpoint;    // docker: the daemon address it answered on; podman: ""

  std::string name() const { return kind == EngineKind::kDocker ? "docker" : "podman"; }
};

// The daemon address docker would use with this environment:
// DOCKER_HOST, else unix:///var/run/docker.sock.
std::string DockerEndpoint(const std::map<std::string, std::string>& env);

// Whether something accepts connections at a docker endpoint (unix:// path
// or tcp://host:port, within `timeout_ms`). Other schemes (ssh://) cannot be
// checked this cheaply and count as reachable.
bool EndpointAnswers(const std::string& endpoint, int timeout_ms = 300);

// `requested` is container.engine: auto, docker or podman. `env` supplies
// PATH and DOCKER_HOST. Errors (exit code 4) name both engines, what was
// found of each, and the `direct` alternative; an unknown name is a usage
// error naming `where` (the flag or configuration origin).
Result<Engine> FindEngine(std::string_view requested, const std::map<std::string, std::string>& env,
                          const std::string& where = "container.engine");

}  // namespace primus::runtime
