#include "agent/etcd_rendezvous.h"

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

#include "agent/http_client.h"
#include "util/seconds_left.h"
#include "util/strings.h"

namespace primus::agent {
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
  HttpEndpoint endpoint;
  std::string path;  // "/v2/keys/primus/rdzv/<run_id>/coordinator"
  std::string run_id;
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
  auto endpoint = ParseHttpEndpoint(etcd.endpoint, kDefaultEtcdPort, "etcd endpoint");
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
  HttpRequest request{method, key.path + (query.empty() ? "" : "?" + query), form};
  auto response = SendHttpRequest(key.endpoint, request, timeout_s);
  if (!response.ok()) {
    return CallError{EnvironmentError("rendezvous \"" + key.run_id + "\": cannot reach the etcd server at " +
                                          key.endpoint.Describe() + ": " + response.error().message,
                                      Hint(key)),
                     true};
  }
  Reply reply;
  reply.status = response->status;
  reply.body = Json::parse(response->body, nullptr, false);
  if (reply.body.is_object() && reply.body.contains("errorCode") && reply.body["errorCode"].is_number_integer()) {
    reply.error_code = reply.body["errorCode"].get<int>();
  }
  if (reply.status == 404 && reply.error_code == 0) {
    // A v2 "key not found" carries errorCode 100; a bare 404 is the router's.
    return CallError{EnvironmentError("rendezvous \"" + key.run_id + "\": the etcd server at " +
                                          key.endpoint.Describe() + " does not serve the v2 keys API (" +
                                          method + " /v2/keys answered 404)",
                                      "start etcd with --enable-v2=true: etcd 3.4 and later serve the v2 API "
                                      "only when asked"),
                     false};
  }
  if (reply.status >= 500) {
    return CallError{EnvironmentError("rendezvous \"" + key.run_id + "\": the etcd server at " +
                                          key.endpoint.Describe() + " answered " + std::to_string(reply.status) +
                                          ": " + EscapeControlCharacters(Trim(response->body).substr(0, 200)),
                                      Hint(key)),
                     true};
  }
  return reply;
}

Error Unexpected(const EtcdKey& key, const std::string& what, const Reply& reply) {
  std::string detail = reply.body.is_object() && reply.body.contains("message") && reply.body["message"].is_string()
                           ? reply.body["message"].get<std::string>()
                           : "no etcd error message";
  return EnvironmentError("rendezvous \"" + key.run_id + "\": etcd at " + key.endpoint.Describe() + " refused to " +
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
  point->port = static_cast<int>(*port);
  point->value = value;
  return true;
}

}  // namespace

Status ValidateRunId(const std::string& run_id) {
  if (IsKeySegment(run_id)) return Status::Ok();
  return ConfigError("rendezvous id \"" + EscapeControlCharacters(run_id.substr(0, kMaxRunIdLength)) +
                         "\" is not a valid id",
                     "use 1 to 128 letters, digits, '-', '_' or '.' (e.g. the scheduler's job id)");
}

Result<RendezvousPoint> ElectCoordinator(const EtcdSettings& etcd, const std::string& run_id,
                                         const std::string& self_host, int self_port, double timeout_s) {
  auto key = Locate(etcd, run_id);
  if (!key.ok()) return key.error();
  if (self_host.empty() || HasControlCharacter(self_host) || self_host.find(' ') != std::string::npos ||
      self_port < 1 || self_port > 65535) {
    return ConfigError("rendezvous \"" + run_id + "\": cannot publish \"" + EscapeControlCharacters(self_host) +
                       ":" + std::to_string(self_port) + "\" as this node's control address",
                       "the address must be a host name or IP address and the port 1-65535");
  }
  RendezvousPoint self{true, self_host, self_port, self_host + ":" + std::to_string(self_port) + ":" + Nonce()};
  std::string create_form = FormEncode({{"value", self.value}, {"ttl", TtlField(etcd)}});

  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  double backoff_s = 0.05;
  std::optional<Error> last_error;
  while (true) {
    double left = SecondsLeft(deadline);
    if (left <= 0) {
      if (!last_error) {
        return EnvironmentError(fmt::format("rendezvous \"{}\": no coordinator elected within {:g} s", run_id,
                                            timeout_s),
                                Hint(*key));
      }
      last_error->message += fmt::format(" (tried for {:g} s)", timeout_s);
      return *last_error;
    }
    auto created = Call(*key, "PUT", "prevExist=false", create_form, left);
    if (auto* reply = std::get_if<Reply>(&created)) {
      if (reply->status == 201 || reply->status == 200) return self;
      if (reply->status != 412 || reply->error_code != kNodeExist) return Unexpected(*key, "create", *reply);
      auto read = Call(*key, "GET", "", "", std::max(SecondsLeft(deadline), 0.001));
      if (auto* current = std::get_if<Reply>(&read)) {
        if (current->status == 404 && current->error_code == kKeyNotFound) continue;  // expired meanwhile
        if (current->status != 200) return Unexpected(*key, "read", *current);
        const Json& node = current->body["node"];
        RendezvousPoint point;
        if (!node.is_object() || !node.contains("value") || !node["value"].is_string() ||
            !ParseValue(node["value"].get<std::string>(), &point)) {
          return EnvironmentError("rendezvous \"" + run_id + "\": the key " + key->path + " on etcd at " +
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

Status RefreshCoordinator(const EtcdSettings& etcd, const std::string& run_id, const RendezvousPoint& self,
                          double timeout_s) {
  auto key = Locate(etcd, run_id);
  if (!key.ok()) return key.error();
  std::string query = "prevExist=true&refresh=true&" + FormEncode({{"prevValue", self.value}});
  auto refreshed = Call(*key, "PUT", query, FormEncode({{"ttl", TtlField(etcd)}}), timeout_s);
  if (auto* failure = std::get_if<CallError>(&refreshed)) return failure->error;
  const Reply& reply = std::get<Reply>(refreshed);
  if (reply.status == 200) return Status::Ok();
  if (reply.error_code == kKeyNotFound || reply.error_code == kCompareFailed) {
    return EnvironmentError("rendezvous \"" + run_id + "\": the coordinator key " + key->path + " on etcd at " +
                                key->endpoint.Describe() +
                                (reply.error_code == kKeyNotFound ? " expired" : " now names another coordinator"),
                            fmt::format("it is refreshed every {:g} s and lives {} s: nodes joining later will not "
                                        "find this coordinator",
                                        etcd.RefreshInterval(), TtlField(etcd)));
  }
  return Unexpected(*key, "refresh", reply);
}

Status ReleaseCoordinator(const EtcdSettings& etcd, const std::string& run_id, const RendezvousPoint& point,
                          double timeout_s) {
  auto key = Locate(etcd, run_id);
  if (!key.ok()) return key.error();
  auto deleted = Call(*key, "DELETE", FormEncode({{"prevValue", point.value}}), "", timeout_s);
  if (auto* failure = std::get_if<CallError>(&deleted)) return failure->error;
  const Reply& reply = std::get<Reply>(deleted);
  if (reply.status == 200 || reply.error_code == kKeyNotFound || reply.error_code == kCompareFailed) {
    return Status::Ok();
  }
  return Unexpected(*key, "delete", reply);
}

}  // namespace primus::agent
