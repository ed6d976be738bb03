#include "job/etcd_rendezvous.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "job/control_protocol.h"
#include "io/http_client.h"
#include "io/message_socket.h"
#include "util/json_fields.h"
#include "util/seconds_left.h"
#include "util/strings.h"

namespace primus::job {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

constexpr int kDefaultEtcdPort = 2379;
constexpr size_t kMaxRunIdLength = 128;
// etcd v2 error codes (etcd's error/error.go).
constexpr int kKeyNotFound = 100;
constexpr int kCompareFailed = 101;
constexpr int kNodeExist = 105;

bool IsNameCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool IsKeySegment(std::string_view text) {
  return !text.empty() && text.size() <= kMaxRunIdLength && text != "." && text != ".." &&
         std::all_of(text.begin(), text.end(), IsNameCharacter);
}

// The server and the job's key, checked.
struct EtcdKey {
  io::HttpEndpoint endpoint;
  std::string path;  // "/v2/keys/primus/rdzv/<run_id>/coordinator"
  std::string run_id;

  // The same job's fence: "/v2/keys/primus/rdzv/<run_id>/fence".
  EtcdKey Fence() const {
    EtcdKey fence = *this;
    fence.path = path.substr(0, path.rfind('/')) + "/fence";
    return fence;
  }
};

Result<EtcdKey> Locate(const EtcdSettings& etcd, const std::string& run_id) {
  if (Status valid = ValidateRunId(run_id); !valid) return valid.error();
  std::string_view prefix = etcd.prefix;
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  std::vector<std::string> segments = Split(prefix.substr(std::min<size_t>(1, prefix.size())), '/');
  if (!prefix.starts_with('/') || !std::all_of(segments.begin(), segments.end(), IsKeySegment)) {
    return ConfigError("etcd key prefix \"" + EscapeControlCharacters(etcd.prefix) + "\" is not a key directory",
                       "write it as /name/name with letters, digits, '-', '_' and '.' between the slashes");
  }
  auto endpoint = io::ParseHttpEndpoint(etcd.endpoint, kDefaultEtcdPort, "etcd endpoint");
  if (!endpoint.ok()) return endpoint.error();
  return EtcdKey{*endpoint, "/v2/keys" + std::string(prefix) + "/" + run_id + "/coordinator", run_id};
}

// One answer of etcd: the HTTP status and, for its JSON bodies, the v2 error code.
struct Reply {
  int status = 0;
  int error_code = 0;  // 0: none
  Json body;
};

struct CallError {
  Error error;
  bool retry = false;  // etcd unreachable or busy: worth another try
};

std::string Hint(const EtcdKey& key) {
  return "start etcd at " + key.endpoint.Describe() +
         " with --enable-v2=true, or pass the endpoint it listens on (--rdzv-endpoint)";
}

std::variant<Reply, CallError> Call(const EtcdKey& key, const std::string& method, const std::string& query,
                                    const std::string& form, double timeout_s) {
  io::HttpRequest request{method, key.path + (query.empty() ? "" : "?" + query), form};
  auto response = io::SendHttpRequest(key.endpoint, request, timeout_s);
  if (!response.ok()) {
    return CallError{UnavailableError("rendezvous \"" + key.run_id + "\": cannot reach the etcd server at " +
                                          key.endpoint.Describe() + ": " + response.error().message,
                                      Hint(key)),
                     true};
  }
  Reply reply;
  reply.status = response->status;
  reply.body = json_fields::Parse(response->body).value_or(Json());
  reply.error_code = json_fields::SmallInteger(reply.body, "errorCode").value_or(0);
  if (reply.status == 404 && reply.error_code == 0) {
    // A v2 "key not found" carries errorCode 100; a bare 404 is the router's.
    return CallError{UnavailableError("rendezvous \"" + key.run_id + "\": the etcd server at " +
                                          key.endpoint.Describe() + " does not serve the v2 keys API (" +
                                          method + " /v2/keys answered 404)",
                                      "start etcd with --enable-v2=true: etcd 3.4 and later serve the v2 API "
                                      "only when asked"),
                     false};
  }
  if (reply.status >= 500) {
    return CallError{UnavailableError("rendezvous \"" + key.run_id + "\": the etcd server at " +
                                          key.endpoint.Describe() + " answered " + std::to_string(reply.status) +
                                          ": " + EscapeControlCharacters(Trim(response->body).substr(0, 200)),
                                      Hint(key)),
                     true};
  }
  return reply;
}

Error Unexpected(const EtcdKey& key, const std::string& what, const Reply& reply) {
  std::string detail = EscapeControlCharacters(json_fields::Text(reply.body, "message", "no etcd error message"));
  return UnavailableError("rendezvous \"" + key.run_id + "\": etcd at " + key.endpoint.Describe() + " refused to " +
                              what + " " + key.path + " (HTTP " + std::to_string(reply.status) + ": " + detail + ")",
                          "check the server's authentication and that the key prefix is not in use otherwise");
}

std::string TtlField(const EtcdSettings& etcd) {
  return std::to_string(std::max<long>(1, std::lround(std::ceil(etcd.ttl_s))));
}

std::string Nonce() {
  std::random_device random;
  uint64_t bits = (static_cast<uint64_t>(random()) << 32) ^ random();
  return fmt::format("{:016x}", bits);
}

// "host:port:nonce" -> host and port (the host may hold colons: IPv6).
bool ParseValue(const std::string& value, RendezvousPoint* point) {
  size_t nonce_colon = value.rfind(':');
  if (nonce_colon == std::string::npos || nonce_colon == 0) return false;
  size_t port_colon = value.rfind(':', nonce_colon - 1);
  if (port_colon == std::string::npos || port_colon == 0) return false;
  auto port = ParseInt(std::string_view(value).substr(port_colon + 1, nonce_colon - port_colon - 1));
  if (!port || *port < 1 || *port > 65535) return false;
  point->host = value.substr(0, port_colon);
  if (!IsHostAddress(point->host)) return false;
  point->port = static_cast<int>(*port);
  point->value = value;
  return true;
}

// The winner of an election reads the fence before it coordinates: a fence
// naming another coordinator that still answers means that one's key expired
// while it runs the job (an etcd outage): the winner withdraws and joins it.
// Otherwise the fence names the winner from now on.
Result<RendezvousPoint> TakeOffice(const EtcdKey& key, const RendezvousPoint& self, double timeout_s,
                                   const InOffice& in_office) {
  EtcdKey fence = key.Fence();
  auto read = Call(fence, "GET", "", "", timeout_s);
  if (auto* failure = std::get_if<CallError>(&read)) return failure->error;
  const Reply& current = std::get<Reply>(read);
  RendezvousPoint previous;
  if (current.status == 200) {
    std::string value = json_fields::Text(json_fields::Object(current.body, "node"), "value");
    bool alive = value != self.value && ParseValue(value, &previous) &&
                 (in_office ? in_office(previous.host, previous.port) : CoordinatorAccepts(previous.host, previous.port));
    if (alive) {
      // Withdraw this claim, so that the running coordinator re-claims its key.
      auto withdrawn = Call(key, "DELETE", io::FormEncode({{"prevValue", self.value}}), "", timeout_s);
      if (auto* failure = std::get_if<CallError>(&withdrawn)) return failure->error;
      previous.coordinator = false;
      previous.fenced = true;
      return previous;
    }
  } else if (current.error_code != kKeyNotFound) {
    return Unexpected(fence, "read", current);
  }
  auto written = Call(fence, "PUT", "", io::FormEncode({{"value", self.value}}), timeout_s);
  if (auto* failure = std::get_if<CallError>(&written)) return failure->error;
  const Reply& reply = std::get<Reply>(written);
  if (reply.status != 200 && reply.status != 201) return Unexpected(fence, "write", reply);
  return self;
}

}  // namespace

bool CoordinatorAnswers(const std::string& host, int port, double patience_s) {
  auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(patience_s));
  while (true) {
    auto fd = io::ConnectToNode(host, port, 1);
    if (fd || fd.error().message.find("refused") == std::string::npos) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool CoordinatorAccepts(const std::string& host, int port, double patience_s) {
  auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(patience_s));
  while (true) {
    auto fd = io::ConnectToNode(host, port, 1);
    if (fd) return true;
    if (fd.error().message.find("refused") != std::string::npos || Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status ValidateRunId(const std::string& run_id) {
  if (IsKeySegment(run_id)) return Status::Ok();
  return ConfigError("rendezvous id \"" + EscapeControlCharacters(run_id.substr(0, kMaxRunIdLength)) +
                         "\" is not a valid id",
                     "use 1 to 128 letters, digits, '-', '_' or '.' (e.g. the scheduler's job id)");
}

Result<RendezvousPoint> ElectCoordinator(const EtcdSettings& etcd, const std::string& run_id,
                                         const std::string& self_host, int self_port, double timeout_s,
                                         const InOffice& in_office) {
  auto key = Locate(etcd, run_id);
  if (!key.ok()) return key.error();
  if (self_host.empty() || HasControlCharacter(self_host) || self_host.find(' ') != std::string::npos ||
      self_port < 1 || self_port > 65535) {
    return ConfigError("rendezvous \"" + run_id + "\": cannot publish \"" + EscapeControlCharacters(self_host) +
                       ":" + std::to_string(self_port) + "\" as this node's control address",
                       "the address must be a host name or IP address and the port 1-65535");
  }
  RendezvousPoint self{true, self_host, self_port, self_host + ":" + std::to_string(self_port) + ":" + Nonce()};
  std::string create_form = io::FormEncode({{"value", self.value}, {"ttl", TtlField(etcd)}});

  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  double backoff_s = 0.05;
  std::optional<Error> last_error;
  while (true) {
    double left = SecondsLeft(deadline);
    if (left <= 0) {
      if (!last_error) {
        return UnavailableError(fmt::format("rendezvous \"{}\": no coordinator elected within {:g} s", run_id,
                                            timeout_s),
                                Hint(*key));
      }
      last_error->message += fmt::format(" (tried for {:g} s)", timeout_s);
      return *last_error;
    }
    auto created = Call(*key, "PUT", "prevExist=false", create_form, left);
    if (auto* reply = std::get_if<Reply>(&created)) {
      if (reply->status == 201 || reply->status == 200) {
        return TakeOffice(*key, self, std::max(SecondsLeft(deadline), 1.0), in_office);
      }
      if (reply->status != 412 || reply->error_code != kNodeExist) return Unexpected(*key, "create", *reply);
      auto read = Call(*key, "GET", "", "", std::max(SecondsLeft(deadline), 0.001));
      if (auto* current = std::get_if<Reply>(&read)) {
        if (current->status == 404 && current->error_code == kKeyNotFound) continue;  // expired meanwhile
        if (current->status != 200) return Unexpected(*key, "read", *current);
        RendezvousPoint point;
        if (!ParseValue(json_fields::Text(json_fields::Object(current->body, "node"), "value"), &point)) {
          return UnavailableError("rendezvous \"" + run_id + "\": the key " + key->path + " on etcd at " +
                                      key->endpoint.Describe() + " does not hold a coordinator's host:port:nonce",
                                  "another program uses this key: choose another --rdzv-id, or delete the key");
        }
        return point;
      }
      created = std::move(std::get<CallError>(read));
    }
    CallError& failure = std::get<CallError>(created);
    if (!failure.retry) return failure.error;
    last_error = std::move(failure.error);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(backoff_s, std::max(0.0, SecondsLeft(deadline)))));
    backoff_s = std::min(backoff_s * 2, 1.0);
  }
}

Result<Refreshed> RefreshCoordinator(const EtcdSettings& etcd, const std::string& run_id, const RendezvousPoint& self,
                                     double timeout_s) {
  auto key = Locate(etcd, run_id);
  if (!key.ok()) return key.error();
  std::string query = "prevExist=true&refresh=true&" + io::FormEncode({{"prevValue", self.value}});
  auto refreshed = Call(*key, "PUT", query, io::FormEncode({{"ttl", TtlField(etcd)}}), timeout_s);
  if (auto* failure = std::get_if<CallError>(&refreshed)) return failure->error;
  const Reply& reply = std::get<Reply>(refreshed);
  if (reply.status == 200) return Refreshed::kRefreshed;
  if (reply.error_code == kKeyNotFound) {
    // It expired while etcd could not be reached: claim it again, as it was.
    std::string form = io::FormEncode({{"value", self.value}, {"ttl", TtlField(etcd)}});
    auto created = Call(*key, "PUT", "prevExist=false", form, timeout_s);
    if (auto* failure = std::get_if<CallError>(&created)) return failure->error;
    const Reply& again = std::get<Reply>(created);
    if (again.status == 200 || again.status == 201) return Refreshed::kReclaimed;
    if (again.error_code != kNodeExist) return Unexpected(*key, "re-create", again);
  } else if (reply.error_code != kCompareFailed) {
    return Unexpected(*key, "refresh", reply);
  }
  return UnavailableError("rendezvous \"" + run_id + "\": the coordinator key " + key->path + " on etcd at " +
                              key->endpoint.Describe() + " now names another agent",
                          "a late agent with this run id won the key while it had expired; it finds this "
                          "coordinator through the fence, withdraws and joins, and the key is re-claimed at the next "
                          "refresh");
}

Status ReleaseCoordinator(const EtcdSettings& etcd, const std::string& run_id, const RendezvousPoint& point,
                          double timeout_s) {
  auto key = Locate(etcd, run_id);
  if (!key.ok()) return key.error();
  for (const EtcdKey& target : {*key, key->Fence()}) {
    auto deleted = Call(target, "DELETE", io::FormEncode({{"prevValue", point.value}}), "", timeout_s);
    if (auto* failure = std::get_if<CallError>(&deleted)) return failure->error;
    const Reply& reply = std::get<Reply>(deleted);
    if (reply.status != 200 && reply.error_code != kKeyNotFound && reply.error_code != kCompareFailed) {
      return Unexpected(target, "delete", reply);
    }
  }
  return Status::Ok();
}

}  // namespace primus::job
