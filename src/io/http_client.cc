#include "io/http_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "io/message_socket.h"
#include "util/seconds_left.h"
#include "util/strings.h"

namespace primus::io {
namespace {

using Clock = std::chrono::steady_clock;

// Status line and headers together; etcd sends a few hundred bytes.
constexpr size_t kMaxHeaderBytes = 64 << 10;

bool IsHostCharacter(char c, bool bracketed) {
  if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') return true;
  return bracketed && (c == ':' || c == '%');
}

std::string ShowText(std::string_view text) {
  constexpr size_t kShown = 80;
  std::string shown = EscapeControlCharacters(text.substr(0, kShown));
  return text.size() > kShown ? shown + "..." : shown;
}

// Headers as sent: names compared without case.
std::optional<std::string_view> FindHeader(const std::vector<std::pair<std::string, std::string_view>>& headers,
                                           std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

struct Parsed {
  enum class State { kIncomplete, kComplete, kError } state = State::kIncomplete;
  std::string error;
};

Parsed Incomplete() { return {}; }
Parsed Complete() { return {Parsed::State::kComplete, ""}; }
Parsed Failed(std::string why) { return {Parsed::State::kError, std::move(why)}; }

std::string TooLarge(size_t limit) {
  return "the response body is larger than the limit of " + std::to_string(limit) + " bytes";
}

// Decodes a chunked body starting at `data`; kIncomplete until the last chunk
// and the trailers arrived.
Parsed ParseChunked(std::string_view data, bool eof, size_t max_body, std::string* body) {
  body->clear();
  size_t at = 0;
  while (true) {
    size_t line_end = data.find("\r\n", at);
    if (line_end == std::string_view::npos) {
      if (data.size() - at > 1024) return Failed("a chunk size line longer than 1024 bytes");
      return eof ? Failed("the connection closed inside a chunked body") : Incomplete();
    }
    std::string_view size_text = data.substr(at, line_end - at);
    size_text = Trim(size_text.substr(0, size_text.find(';')));  // chunk extensions are ignored
    if (size_text.empty() || size_text.size() > 8 ||
        !std::all_of(size_text.begin(), size_text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
      return Failed("a malformed chunk size \"" + ShowText(size_text) + "\"");
    }
    size_t size = std::stoul(std::string(size_text), nullptr, 16);
    at = line_end + 2;
    if (size == 0) {
      // Trailers, if any, end with an empty line.
      size_t end = data.substr(at).starts_with("\r\n") ? at : data.find("\r\n\r\n", at);
      if (end == std::string_view::npos) {
        return eof ? Failed("the connection closed inside the chunked trailers") : Incomplete();
      }
      return Complete();
    }
    if (body->size() + size > max_body) return Failed(TooLarge(max_body));
    if (data.size() < at + size + 2) {
      return eof ? Failed("the connection closed inside a chunk") : Incomplete();
    }
    if (data.substr(at + size, 2) != "\r\n") return Failed("a chunk not followed by CRLF");
    body->append(data.substr(at, size));
    at += size + 2;
  }
}

// Parses what arrived so far into `response`; `eof` says the server closed.
Parsed ParseResponse(std::string_view data, bool eof, size_t max_body, HttpResponse* response) {
  size_t header_end = data.find("\r\n\r\n");
  if (header_end == std::string_view::npos) {
    if (data.size() > kMaxHeaderBytes) return Failed("response headers longer than 64 KiB");
    if (!eof) return Incomplete();
    return Failed(data.empty() ? "the server closed the connection without a response"
                               : "the connection closed inside the response headers");
  }
  std::vector<std::string> lines = Split(data.substr(0, header_end), '\n');
  for (std::string& line : lines) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  // "HTTP/1.1 200 OK": the version, a space, three digits, then a space or nothing.
  const std::string& status_line = lines.front();
  bool well_formed = status_line.starts_with("HTTP/1.") && status_line.size() >= 12 && status_line[8] == ' ' &&
                     std::all_of(status_line.begin() + 9, status_line.begin() + 12,
                                 [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
                     (status_line.size() == 12 || status_line[12] == ' ');
  if (!well_formed) return Failed("a malformed status line \"" + ShowText(status_line) + "\"");
  response->status = std::stoi(status_line.substr(9, 3));

  std::vector<std::pair<std::string, std::string_view>> headers;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == std::string::npos || colon == 0) return Failed("a malformed header line \"" + ShowText(lines[i]) + "\"");
    headers.emplace_back(ToLower(Trim(std::string_view(lines[i]).substr(0, colon))),
                         Trim(std::string_view(lines[i]).substr(colon + 1)));
  }
  response->content_type = std::string(FindHeader(headers, "content-type").value_or(""));

  std::string_view rest = data.substr(header_end + 4);
  if (response->status / 100 == 1 || response->status == 204 || response->status == 304) {
    response->body.clear();
    return Complete();
  }
  if (auto encoding = FindHeader(headers, "transfer-encoding")) {
    if (ToLower(*encoding) != "chunked") return Failed("an unsupported Transfer-Encoding \"" + ShowText(*encoding) + "\"");
    return ParseChunked(rest, eof, max_body, &response->body);
  }
  if (auto length_text = FindHeader(headers, "content-length")) {
    auto length = ParseInt(*length_text);
    if (!length || *length < 0) return Failed("a malformed Content-Length \"" + ShowText(*length_text) + "\"");
    auto expected = static_cast<size_t>(*length);
    if (expected > max_body) return Failed(TooLarge(max_body));
    if (rest.size() < expected) {
      if (!eof) return Incomplete();
      return Failed("the connection closed after " + std::to_string(rest.size()) + " of " +
                    std::to_string(expected) + " body bytes");
    }
    response->body = std::string(rest.substr(0, expected));
    return Complete();
  }
  // No framing: the body runs to the close.
  if (rest.size() > max_body) return Failed(TooLarge(max_body));
  if (!eof) return Incomplete();
  response->body = std::string(rest);
  return Complete();
}

}  // namespace

std::string HttpEndpoint::Describe() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<HttpEndpoint> ParseHttpEndpoint(std::string_view text, int default_port, std::string_view what) {
  auto refuse = [&](const std::string& why, const std::string& hint) {
    return ConfigError(std::string(what) + " \"" + ShowText(text) + "\" " + why, hint);
  };
  const std::string kForm = "write host:port, e.g. 10.0.0.1:2379 or http://etcd.example:2379";
  std::string_view rest = Trim(text);
  std::string lower = ToLower(rest);
  if (lower.starts_with("https://")) {
    return refuse("uses https", "the agents speak plain http to the rendezvous server: " + kForm);
  }
  if (lower.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return refuse("has an unsupported scheme", kForm);
  }
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) return refuse("has a path", kForm);

  HttpEndpoint endpoint;
  endpoint.port = default_port;
  std::string_view port_text;
  bool bracketed = rest.starts_with('[');
  if (bracketed) {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return refuse("has no closing ']'", kForm);
    endpoint.host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (!after.starts_with(':')) return refuse("has text after ']'", kForm);
      port_text = after.substr(1);
    }
  } else if (std::count(rest.begin(), rest.end(), ':') > 1) {
    endpoint.host = std::string(rest);  // a bare IPv6 address, no port
    bracketed = true;
  } else {
    size_t colon = rest.find(':');
    endpoint.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port_text = rest.substr(colon + 1);
  }
  if (endpoint.host.empty()) return refuse("names no host", kForm);
  for (char c : endpoint.host) {
    if (!IsHostCharacter(c, bracketed)) return refuse("is not a host name or address", kForm);
  }
  if (!port_text.empty() || rest.ends_with(':')) {
    auto port = ParseInt(port_text);
    if (!port || *port < 1 || *port > 65535) return refuse("has no valid port (1-65535)", kForm);
    endpoint.port = static_cast<int>(*port);
  }
  return endpoint;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  auto encode = [](const std::string& text, std::string* out) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
        out->push_back(static_cast<char>(c));
      } else {
        out->push_back('%');
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
      }
    }
  };
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out.push_back('&');
    encode(name, &out);
    out.push_back('=');
    encode(value, &out);
  }
  return out;
}

Result<HttpResponse> SendHttpRequest(const HttpEndpoint& endpoint, const HttpRequest& request, double timeout_s,
                                     size_t max_body_bytes) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  auto fail = [&](const std::string& what) {
    return UnavailableError("HTTP " + request.method + " to " + endpoint.Describe() + " failed: " + what,
                            "check that the server runs and that this node can reach " + endpoint.Describe());
  };

  auto connected = io::ConnectToNode(endpoint.host, endpoint.port, std::max(SecondsLeft(deadline), 0.001));
  if (!connected.ok()) return fail(connected.error().message);
  int fd = connected->get();

  std::string text = request.method + " " + request.target + " HTTP/1.1\r\nHost: " + endpoint.Describe() +
                     "\r\nUser-Agent: primus-cli\r\nAccept: */*\r\nConnection: close\r\n";
  if (!request.form_body.empty()) text += "Content-Type: application/x-www-form-urlencoded\r\n";
  if (!request.form_body.empty() || request.method == "PUT" || request.method == "POST") {
    text += "Content-Length: " + std::to_string(request.form_body.size()) + "\r\n";
  }
  text += "\r\n" + request.form_body;
  for (size_t sent = 0; sent < text.size();) {
    ssize_t wrote = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return fail(std::string("sending the request: ") + std::strerror(errno));
    sent += static_cast<size_t>(wrote);
  }

  // Chunk framing may add a few bytes per body byte; past this the server is
  // sending something other than a response we would accept.
  const size_t max_raw = kMaxHeaderBytes + 2 * max_body_bytes + 1024;
  std::string data;
  HttpResponse response;
  bool eof = false;
  while (true) {
    Parsed parsed = ParseResponse(data, eof, max_body_bytes, &response);
    if (parsed.state == Parsed::State::kComplete) return response;
    if (parsed.state == Parsed::State::kError) return fail(parsed.error);
    if (data.size() > max_raw) return fail(TooLarge(max_body_bytes));
    double left = SecondsLeft(deadline);
    pollfd waiter{fd, POLLIN, 0};
    int ready = left > 0 ? ::poll(&waiter, 1, static_cast<int>(std::ceil(left * 1000))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      return fail("no complete response within " + fmt::format("{:g} s", timeout_s));
    }
    char chunk[64 * 1024];
    ssize_t got = ::recv(fd, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(std::string("reading the response: ") + std::strerror(errno));
    if (got == 0) eof = true;
    data.append(chunk, static_cast<size_t>(got));
  }
}

}  // namespace primus::io
