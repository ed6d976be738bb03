#include "preflight/node_exchange.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "io/message_socket.h"
#include "util/clock.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/random.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace primus::preflight {
namespace {

// Version 2: "PRIMUS-PREFLIGHT 2 <node 0's nonce>", then each side proves
// that it holds the job token (HMAC-SHA256 over both nonces), which never
// crosses the wire.
const char* const kGreeting = "PRIMUS-PREFLIGHT 2 ";
constexpr size_t kBandwidthChunk = 4 << 20;
constexpr size_t kMaxBandwidthChunk = 64 << 20;
constexpr size_t kMaxLineBytes = 1 << 20;    // a report is a few KiB
constexpr double kHandshakeTimeoutS = 2;     // a peer that says nothing holds node 0 this long at most
constexpr double kGreetingWaitS = 5;         // a node waits this long for node 0's greeting
constexpr std::string_view kNodeProofLabel = "primus-cli preflight: node";
constexpr std::string_view kNode0ProofLabel = "primus-cli preflight: node 0";

bool IsNonce(std::string_view text) {
  return text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string Proof(std::string_view label, const std::string& token, const std::string& first, const std::string& second) {
  return DigestHex(HmacSha256(token, std::string(label) + "\n" + first + "\n" + second));
}

}  // namespace

// A blocking line/byte stream over one socket, every wait bounded.
// Outside the anonymous namespace: PeerConnections (declared in the header) holds it.
class PeerStream {
 public:
  explicit PeerStream(io::UniqueFd fd) : fd_(std::move(fd)) {
    int flags = ::fcntl(fd_.get(), F_GETFL);
    ::fcntl(fd_.get(), F_SETFL, flags & ~O_NONBLOCK);
  }
  bool WriteAll(const char* data, size_t size, double timeout_s) {
    double deadline = MonotonicSeconds() + timeout_s;
    while (size > 0) {
      if (!Wait(POLLOUT, deadline)) return false;
      ssize_t n = ::send(fd_.get(), data, size, MSG_NOSIGNAL);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }
  bool WriteLine(const std::string& line, double timeout_s) {
    std::string text = line + "\n";
    return WriteAll(text.data(), text.size(), timeout_s);
  }
  // The next line, or nullopt at the timeout, the end, or past kMaxLineBytes.
  std::optional<std::string> ReadLine(double timeout_s) {
    double deadline = MonotonicSeconds() + timeout_s;
    while (true) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        if (newline > kMaxLineBytes) return std::nullopt;
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      if (buffer_.size() > kMaxLineBytes || !Fill(deadline)) return std::nullopt;
    }
  }
  bool Skip(size_t bytes, double timeout_s) {
    double deadline = MonotonicSeconds() + timeout_s;
    while (bytes > 0) {
      if (buffer_.empty() && !Fill(deadline)) return false;
      size_t take = std::min(bytes, buffer_.size());
      buffer_.erase(0, take);
      bytes -= take;
    }
    return true;
  }

 private:
  bool Wait(short events, double deadline) {
    pollfd poll_fd{fd_.get(), events, 0};
    double left = deadline - MonotonicSeconds();
    if (left <= 0) return false;
    return ::poll(&poll_fd, 1, static_cast<int>(left * 1000) + 1) > 0;
  }
  bool Fill(double deadline) {
    if (!Wait(POLLIN, deadline)) return false;
    char chunk[1 << 16];
    ssize_t n = ::recv(fd_.get(), chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  io::UniqueFd fd_;
  std::string buffer_;
};

struct PeerConnections {
  std::map<int, std::unique_ptr<PeerStream>> streams;  // by node rank
};

std::string ReportToJson(const NodeReport& report) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const CheckResult& r : report.results) results.push_back(CheckToJson(r));
  return nlohmann::ordered_json{{"node_rank", report.node_rank}, {"host", report.host}, {"results", results},
                                {"facts", report.facts}}
      .dump();
}

Result<NodeReport> ReportFromJson(const std::string& line) {
  std::optional<nlohmann::json> json = json_fields::ParseObject(line, kMaxLineBytes);
  if (!json) {
    return TaskError("a node sent a report that is not preflight's JSON", "are all nodes running the same primus-cli?");
  }
  std::optional<int> node_rank = json_fields::IntegerIn(*json, "node_rank", 0, 1 << 20);
  if (!node_rank || !json->contains("results")) {
    return TaskError("a node sent a report without a node rank or results",
                     "are all nodes running the same primus-cli?");
  }
  NodeReport report;
  report.node_rank = *node_rank;
  report.host = EscapeControlCharacters(json_fields::Text(*json, "host"));
  for (const auto& r : json_fields::Array(*json, "results")) {
    if (r.is_object()) report.results.push_back(CheckFromJson(r));
  }
  for (const auto& [key, value] : json_fields::Object(*json, "facts").items()) {
    if (value.is_string()) report.facts[EscapeControlCharacters(key)] = EscapeControlCharacters(value.get<std::string>());
  }
  return report;
}

Result<Gathered> GatherReports(int port, int nnodes, const NodeReport& own, const std::string& token, double timeout_s,
                               double bandwidth_seconds) {
  io::UniqueFd listener;
  int served = 0;
  std::string first_error;
  for (int i = 0; i < kPortFallbacks && !listener.valid(); ++i) {
    int candidate = port + (i == 0 ? 0 : i + 1);
    auto listening = io::ListenForNodes(candidate);
    if (listening.ok()) {
      listener = std::move(*listening);
      served = candidate;
    } else if (first_error.empty()) {
      first_error = listening.error().message;
    }
  }
  if (!listener.valid()) {
    return UnavailableError(fmt::format("node 0 cannot serve preflight on ports {}..{}: {}", port, port + kPortFallbacks,
                                        first_error),
                            "free MASTER_PORT on node 0 or choose another with --master-port");
  }
  Gathered result;
  result.port = served;
  result.nodes.resize(static_cast<size_t>(nnodes));
  result.nodes[0] = own;
  std::map<int, std::unique_ptr<PeerStream>> streams;
  double deadline = MonotonicSeconds() + timeout_s;
  int missing = nnodes - 1;
  while (missing > 0 && MonotonicSeconds() < deadline) {
    pollfd poll_fd{listener.get(), POLLIN, 0};
    if (::poll(&poll_fd, 1, 50) <= 0) continue;
    std::string address;
    io::UniqueFd fd = io::AcceptNode(listener.get(), &address);
    if (!fd.valid()) continue;
    auto stream = std::make_unique<PeerStream>(std::move(fd));
    std::string own_nonce = RandomHex(16);
    if (!stream->WriteLine(kGreeting + own_nonce, 2)) continue;
    // The peer proves it holds the job token before anything it says counts.
    auto auth = stream->ReadLine(kHandshakeTimeoutS);
    std::vector<std::string> words = auth ? Split(*auth, ' ') : std::vector<std::string>{};
    if (words.size() != 3 || words[0] != "auth" || !IsNonce(words[1]) ||
        !ConstantTimeEquals(words[2], Proof(kNodeProofLabel, token, own_nonce, words[1]))) {
      if (auth) {
        log::Warn("preflight: refused a connection from {}: it did not prove that it holds this job's "
                  "PRIMUS_JOB_TOKEN",
                  address);
        stream->WriteLine("verdict REFUSED: wrong job token (PRIMUS_JOB_TOKEN differs from node 0's)", 1);
      }
      continue;
    }
    if (!stream->WriteLine("proof " + Proof(kNode0ProofLabel, token, words[1], own_nonce), 2)) continue;
    auto line = stream->ReadLine(kHandshakeTimeoutS);
    if (!line) continue;
    auto report = ReportFromJson(*line);
    if (!report.ok() || report->node_rank <= 0 || report->node_rank >= nnodes ||
        result.nodes[static_cast<size_t>(report->node_rank)].has_value()) {
      stream->WriteLine("verdict REFUSED", 1);
      continue;
    }
    int rank = report->node_rank;
    result.nodes[static_cast<size_t>(rank)] = std::move(*report);
    streams[rank] = std::move(stream);
    --missing;
  }
  // Measure each peer in turn, so bandwidth tests do not share the links.
  std::string payload(kBandwidthChunk, '\0');
  for (auto& [rank, stream] : streams) {
    LinkMeasurement link;
    std::vector<double> rtts, offsets;
    for (int i = 0; i < 5; ++i) {
      double sent = WallSeconds();
      if (!stream->WriteLine("ping", 2)) break;
      auto pong = stream->ReadLine(2);
      double received = WallSeconds();
      if (!pong || !pong->starts_with("pong ")) break;
      double peer_time = ParseDouble(pong->substr(5)).value_or(0);
      rtts.push_back((received - sent) * 1000);
      offsets.push_back((peer_time - (sent + received) / 2) * 1000);
    }
    if (!rtts.empty()) {
      std::vector<double> sorted = rtts;
      std::sort(sorted.begin(), sorted.end());
      link.rtt_ms = sorted[sorted.size() / 2];
      size_t best = static_cast<size_t>(std::min_element(rtts.begin(), rtts.end()) - rtts.begin());
      link.clock_offset_ms = offsets[best];  // the tightest round trip bounds the offset best
    }
    double start = MonotonicSeconds();
    size_t bytes = 0;
    while (MonotonicSeconds() - start < bandwidth_seconds && bytes < (size_t{1} << 30)) {
      if (!stream->WriteLine("bw " + std::to_string(payload.size()), 2) ||
          !stream->WriteAll(payload.data(), payload.size(), 5)) {
        break;
      }
      auto ok = stream->ReadLine(5);
      if (!ok || *ok != "ok") break;
      bytes += payload.size();
    }
    double seconds = MonotonicSeconds() - start;
    if (bytes > 0 && seconds > 0) link.bandwidth_gbs = static_cast<double>(bytes) / seconds / 1e9;
    result.links[rank] = link;
  }
  result.peers = std::make_shared<PeerConnections>();
  result.peers->streams = std::move(streams);
  return result;
}

void SendVerdicts(Gathered& gathered, const std::string& verdict) {
  if (!gathered.peers) return;
  for (auto& [rank, stream] : gathered.peers->streams) stream->WriteLine("verdict " + verdict, 2);
  gathered.peers.reset();
}

Result<std::string> SendReport(const std::string& master_addr, int port, const NodeReport& report,
                               const std::string& token, double timeout_s) {
  double deadline = MonotonicSeconds() + timeout_s;
  std::string last_error = "no answer";
  std::string impostor;  // said over any later, vaguer error
  std::string refused;   // a refusal, which node 0 cannot prove either
  while (MonotonicSeconds() < deadline) {
    for (int i = 0; i < kPortFallbacks && MonotonicSeconds() < deadline; ++i) {
      int candidate = port + (i == 0 ? 0 : i + 1);
      auto fd = io::ConnectToNode(master_addr, candidate, std::min(2.0, std::max(0.1, deadline - MonotonicSeconds())));
      if (!fd.ok()) {
        last_error = fd.error().message;
        if (i == 0) break;  // nothing listens on MASTER_PORT yet: node 0 is not up; retry from the start
        continue;
      }
      PeerStream stream(std::move(*fd));
      auto greeting = stream.ReadLine(kGreetingWaitS);
      if (!greeting || !greeting->starts_with(kGreeting) || !IsNonce(greeting->substr(std::strlen(kGreeting)))) {
        last_error = fmt::format("port {} answers, but not as this version's preflight (another service holds it)",
                                 candidate);
        continue;
      }
      std::string node0_nonce = greeting->substr(std::strlen(kGreeting));
      std::string own_nonce = RandomHex(16);
      if (!stream.WriteLine("auth " + own_nonce + " " + Proof(kNodeProofLabel, token, node0_nonce, own_nonce), 5)) {
        last_error = "the connection dropped during the handshake";
        continue;
      }
      auto proof = stream.ReadLine(5);
      if (proof && proof->starts_with("verdict REFUSED: ")) {
        // Not proven: it may be node 0 with another token, or a stranger
        // sending it; the other ports are still tried.
        refused = fmt::format("node 0's preflight at {}:{} refused this node: {}", master_addr, candidate,
                              EscapeControlCharacters(proof->substr(17)));
        continue;
      }
      if (!proof || !proof->starts_with("proof ") ||
          !ConstantTimeEquals(proof->substr(6), Proof(kNode0ProofLabel, token, own_nonce, node0_nonce))) {
        impostor = fmt::format("what answers at port {} could not prove that it holds this job's PRIMUS_JOB_TOKEN "
                               "(another job's preflight, or another program)",
                               candidate);
        continue;
      }
      if (!stream.WriteLine(ReportToJson(report), 5)) {
        last_error = "the connection dropped while sending the report";
        continue;
      }
      while (true) {
        auto line = stream.ReadLine(std::max(5.0, deadline - MonotonicSeconds() + 30));
        if (!line) return TaskError(fmt::format("node 0 at {}:{} went away before its verdict", master_addr, candidate),
                                    "look at node 0's output");
        if (*line == "ping") {
          stream.WriteLine(fmt::format("pong {:.6f}", WallSeconds()), 2);
        } else if (line->starts_with("bw ")) {
          size_t bytes = static_cast<size_t>(std::clamp<int64_t>(ParseInt(line->substr(3)).value_or(0), 0,
                                                                  static_cast<int64_t>(kMaxBandwidthChunk)));
          if (!stream.Skip(bytes, 10)) return TaskError("the bandwidth test from node 0 broke off", "");
          stream.WriteLine("ok", 2);
        } else if (line->starts_with("verdict ")) {
          return EscapeControlCharacters(line->substr(8));
        }
      }
    }
    if (!refused.empty()) {
      return UnavailableError(refused, "give every node the same PRIMUS_JOB_TOKEN (the launcher sets it for Slurm, "
                                       "ssh and Kubernetes jobs)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return UnavailableError(fmt::format("cannot reach node 0's preflight at {}:{} within {:g} s: {}", master_addr, port,
                                      timeout_s, impostor.empty() ? last_error : impostor),
                          "check that node 0 runs preflight for this job, that MASTER_ADDR is node 0's address as this "
                          "node sees it, and that the port is open between the nodes");
}

}  // namespace primus::preflight
