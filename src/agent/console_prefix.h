// The console prefix template ("[{host}:{rank}] " by default) that tells the
// ranks' lines apart on the shared console. Parsed once, so an unknown
// placeholder is a usage error before anything starts, then rendered once per
// (worker, stream): the hot path only copies the rendered bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::agent {

struct PrefixFields {
  std::string_view host;
  int rank = 0;
  int local_rank = 0;
  int node_rank = 0;
  std::string_view stream;  // "out" or "err"
};

class ConsolePrefix {
 public:
  // Placeholders: {host} {rank} {local_rank} {node_rank} {stream}; "{{" and
  // "}}" are literal braces.
  static Result<ConsolePrefix> Parse(std::string_view text);
  std::string Render(const PrefixFields& fields) const;

 private:
  enum class Piece { kLiteral, kHost, kRank, kLocalRank, kNodeRank, kStream };
  struct Part {
    Piece piece;
    std::string literal;
  };
  std::vector<Part> parts_;
};

}  // namespace primus::agent
