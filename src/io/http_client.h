// A small blocking HTTP/1.1 client for plain http://host:port servers on the
// job's own network, such as the etcd server a torchrun-style rendezvous
// (`--rdzv-backend etcd-v2`) meets at. It sends one request per connection
// (Connection: close), optionally with a form-encoded body, and reads the
// status code and the body (Content-Length, chunked, or up to the close).
//
// Every call has one total deadline covering connect, send and receive, and a
// bounded response (1 MiB by default): a server that stalls or streams
// without end cannot hold an agent. There is no TLS, no redirect and no
// proxy: the agents talk to a service inside the cluster, and anything more
// would be a library we do not want in a static binary.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace primus::io {

// Where a server listens. host may be a name, an IPv4 or an IPv6 address.
struct HttpEndpoint {
  std::string host;
  int port = 80;

  // "host:port", "[::1]:2379" for an IPv6 address: how messages name it.
  std::string Describe() const;
};

// Reads "host", "host:port", "[v6]:port" or any of them after "http://" (a
// trailing "/" is accepted). "https://" and paths are refused with a hint.
// `what` names the value in messages ("--rdzv-endpoint").
Result<HttpEndpoint> ParseHttpEndpoint(std::string_view text, int default_port, std::string_view what);

// name=value pairs joined by '&', each side percent-encoded
// (application/x-www-form-urlencoded; also fit for a query string).
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

struct HttpRequest {
  std::string method = "GET";
  std::string target = "/";  // path and query, already encoded
  // Sent as application/x-www-form-urlencoded when not empty (see FormEncode).
  std::string form_body;
};

struct HttpResponse {
  int status = 0;
  std::string content_type;  // "" when the server sent none
  std::string body;
};

inline constexpr size_t kMaxHttpResponseBytes = 1 << 20;

// Sends `request` and reads the whole response within `timeout_s` seconds.
// Any HTTP status is a response; an Error (exit code 4) names the endpoint
// and what failed: unknown host, connection refused, timeout, a malformed
// response, or a body over `max_body_bytes`.
Result<HttpResponse> SendHttpRequest(const HttpEndpoint& endpoint, const HttpRequest& request, double timeout_s,
                                     size_t max_body_bytes = kMaxHttpResponseBytes);

}  // namespace primus::io
