// Which interface reaches a given IPv4 address: the kernel's main routing
// table from /proc/net/route (longest prefix, then lowest metric), a local
// address's own interface, loopback for 127.0.0.0/8. NCCL_SOCKET_IFNAME and
// GLOO_SOCKET_IFNAME are set from this (an interface *name*, never an
// address). Host names are resolved forward only; a user's address is never
// reverse-resolved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/host_info.h"
#include "platform/roots.h"
#include "platform/sysfs_files.h"
#include "util/error.h"

namespace primus::platform {

// Rows of /proc/net/route; a malformed row is skipped with a warning.
std::vector<RouteEntry> ParseRouteTable(std::string_view text, const std::string& source,
                                        Diagnostics& diagnostics);
std::vector<RouteEntry> ReadRoutes(const Roots& roots, Diagnostics& diagnostics);

// A dotted quad, or the first IPv4 address a host name resolves to
// (getaddrinfo, AF_INET). Network byte order.
Result<uint32_t> ResolveIpv4(const std::string& host);
std::string FormatIpv4(uint32_t address);
bool IsLoopbackAddress(uint32_t address);

struct RouteChoice {
  std::string interface;  // "" when nothing routes there
  std::string reason;     // "local address", "route 10.0.0.0/16", "default route", "loopback"
};
RouteChoice InterfaceForAddress(const HostInfo& host, uint32_t target);

}  // namespace primus::platform
