// Unpredictable bytes from the kernel (getrandom): run ids, job tokens,
// nonces of the control channel's handshake, names of temporary files.
#pragma once

#include <cstddef>
#include <string>

namespace primus {

// `bytes` random bytes (at most 64) as 2*bytes lowercase hex digits. When the
// kernel has no entropy to give (very early boot), time and pid still make
// it unique, though not secret.
std::string RandomHex(size_t bytes);

}  // namespace primus
