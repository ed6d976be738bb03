// Keeps the binary loadable by glibc 2.35 (Ubuntu 22.04, the base of most
// rocm/* and NGC images), not only 2.36+.
//
// The static libstdc++ of GCC 12 calls arc4random (new in glibc 2.36) from
// std::random_device, which comes in with std::string's exception paths even
// though primus-cli never uses it. Defining the symbol here, in an object
// linked directly into primus-cli, binds that reference to this definition
// instead of glibc's GLIBC_2.36 one. getrandom(2) has been in glibc since
// 2.25. The container runtime reads the version the binary needs from its
// own ELF file (runtime/container_glibc.h), so it follows automatically.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" uint32_t arc4random(void) {
  uint32_t value = 0;
  for (;;) {
    ssize_t got = getrandom(&value, sizeof(value), 0);
    if (got == static_cast<ssize_t>(sizeof(value))) return value;
    if (got < 0 && errno != EINTR) std::abort();  // as glibc's: no fallback source
  }
}
