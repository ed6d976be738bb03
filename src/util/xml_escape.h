// Text made safe for HTML and XML (the run report's page and its SVG
// charts): every string of the user's (a configuration value, a host name,
// a log line) goes through EscapeXml before it enters markup, so it shows
// as text and is never read as a tag or an attribute.
#pragma once

#include <string>
#include <string_view>

namespace primus {

// & < > " ' as entities, fit for element text and quoted attribute values;
// control characters as EscapeControlCharacters writes them (\x1b), line
// breaks and tabs kept.
std::string EscapeXml(std::string_view text);

}  // namespace primus
