// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): the control channel's and
// the preflight exchange's proof that a peer holds the job token without
// sending it, and content hashes. Small and dependency-free, so the binary
// stays self-contained; checked against the FIPS and RFC 4231 test vectors.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace primus {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
Sha256Digest HmacSha256(std::string_view key, std::string_view message);

// 64 lowercase hex digits.
std::string DigestHex(const Sha256Digest& digest);

// Compares two strings in time that depends only on their lengths, not on
// where they first differ (for proofs and tokens).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace primus
