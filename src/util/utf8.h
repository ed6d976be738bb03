// UTF-8 validity, for text a user hands us (configuration files): invalid
// bytes would otherwise travel into argument lists, file names and JSON,
// where each consumer treats them differently.
#pragma once

#include <cstddef>
#include <string_view>

namespace primus {

// The offset of the first byte that does not start or continue a valid
// UTF-8 sequence (overlong forms, surrogates and code points above U+10FFFF
// are invalid, as in RFC 3629), or npos when the whole text is valid.
size_t FindInvalidUtf8(std::string_view text);

}  // namespace primus
