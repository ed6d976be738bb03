// The glibc an image must have for the host's primus-cli to run in it. The
// binary links libstdc++ and libgcc statically but glibc dynamically, so the
// image's libc.so.6 must define every GLIBC_x.y version the binary asks for
// (its .gnu.version_r section). That is read here from the ELF file itself,
// so the requirement is stated exactly, whatever machine built the binary.
//
// The check against the image needs no extra container start (which would
// double the launch time): the image's own dynamic loader performs it as
// the container starts, before primus-cli's first instruction and before
// any task, and ExplainLoaderFailure turns its refusal into a clear error.
#pragma once

#include <optional>
#include <string>

#include "util/error.h"

namespace primus::runtime {

// "2.36": the highest GLIBC_ version the ELF file at `path` needs from its
// libraries; an UnavailableError when the file is unreadable or not a
// 64-bit ELF file.
Result<std::string> RequiredGlibc(const std::string& path);

// Orders "2.9" < "2.34" < "2.36" numerically; <0, 0, >0.
int CompareVersions(const std::string& a, const std::string& b);

// What the loader in the image printed when it refused the binary, turned
// into a clear error (exit code 4), or nullopt when `output` shows no such
// refusal. Recognised: a missing GLIBC_x.y version (glibc too old) and a
// missing loader or libc (a musl image such as Alpine, or no libc at all).
std::optional<Error> ExplainLoaderFailure(const std::string& output, const std::string& image,
                                          const std::string& binary, const std::string& required);

}  // namespace primus::runtime
