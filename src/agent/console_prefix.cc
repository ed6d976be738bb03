#include "agent/console_prefix.h"

namespace primus::agent {

Result<ConsolePrefix> ConsolePrefix::Parse(std::string_view text) {
  ConsolePrefix prefix;
  std::string literal;
  auto flush_literal = [&] {
    if (!literal.empty()) prefix.parts_.push_back({Piece::kLiteral, std::move(literal)});
    literal.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal.push_back(c);
      ++i;
      continue;
    }
    if (c == '}') {
      return UsageError("console prefix '" + std::string(text) + "' has an unmatched '}'",
                        "write '}}' for a literal brace");
    }
    if (c != '{') {
      literal.push_back(c);
      continue;
    }
    size_t close = text.find('}', i);
    if (close == std::string_view::npos) {
      return UsageError("console prefix '" + std::string(text) + "' has an unclosed '{'",
                        "write '{{' for a literal brace");
    }
    std::string_view name = text.substr(i + 1, close - i - 1);
    Piece piece;
    if (name == "host") piece = Piece::kHost;
    else if (name == "rank") piece = Piece::kRank;
    else if (name == "local_rank") piece = Piece::kLocalRank;
    else if (name == "node_rank") piece = Piece::kNodeRank;
    else if (name == "stream") piece = Piece::kStream;
    else {
      return UsageError("console prefix '" + std::string(text) + "' names an unknown field {" +
                            std::string(name) + "}",
                        "known fields: {host} {rank} {local_rank} {node_rank} {stream}");
    }
    flush_literal();
    prefix.parts_.push_back({piece, ""});
    i = close;
  }
  flush_literal();
  return prefix;
}

std::string ConsolePrefix::Render(const PrefixFields& fields) const {
  std::string out;
  for (const Part& part : parts_) {
    switch (part.piece) {
      case Piece::kLiteral: out += part.literal; break;
      case Piece::kHost: out += fields.host; break;
      case Piece::kRank: out += std::to_string(fields.rank); break;
      case Piece::kLocalRank: out += std::to_string(fields.local_rank); break;
      case Piece::kNodeRank: out += std::to_string(fields.node_rank); break;
      case Piece::kStream: out += fields.stream; break;
    }
  }
  return out;
}

}  // namespace primus::agent
