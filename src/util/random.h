// Unpredictable bytes from the kernel (getrandom): run ids, job tokens,
// nonces of the control channel's handshake, names of temporary files.
#pragma once

#include <cstddef>
#include <string>

#include "util/error.h"

namespace primus {

// `bytes` random bytes (at most 64) as 2*bytes lowercase hex digits, from
// getrandom(2) or /dev/urandom. Only when the kernel gives neither do time
// and pid make it unique, though not secret.
std::string RandomHex(size_t bytes);

// A new job token (PRIMUS_JOB_TOKEN): 128 bits from the kernel as 32 hex
// digits; an UnavailableError when the kernel gives none (a token made of
// the time and the pid could be guessed).
Result<std::string> NewJobToken();

}  // namespace primus
