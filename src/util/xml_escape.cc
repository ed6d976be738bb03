#include "util/xml_escape.h"

#include "util/strings.h"

namespace primus {

std::string EscapeXml(std::string_view text) {
  std::string plain = EscapeControlCharacters(text, /*keep_line_breaks=*/true);
  std::string out;
  out.reserve(plain.size() + 16);
  for (char c : plain) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace primus
