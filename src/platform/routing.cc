#include "platform/routing.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <bit>
#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace primus::platform {
namespace {

constexpr unsigned kRouteUp = 0x1;  // RTF_UP

std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> fields;
  for (const std::string& field : Split(ReplaceAll(std::string(line), "\t", " "), ' ')) {
    if (!field.empty()) fields.push_back(field);
  }
  return fields;
}

int PrefixLength(uint32_t mask) { return std::popcount(mask); }

}  // namespace

std::vector<RouteEntry> ParseRouteTable(std::string_view text, const std::string& source,
                                        Diagnostics& diagnostics) {
  std::vector<RouteEntry> routes;
  int malformed = 0;
  bool header = true;
  for (const std::string& line : Split(text, '\n')) {
    if (Trim(line).empty()) continue;
    if (header) {  // "Iface Destination Gateway Flags RefCnt Use Metric Mask ..."
      header = false;
      if (line.rfind("Iface", 0) == 0) continue;
    }
    std::vector<std::string> fields = Fields(line);
    if (fields.size() < 8) {
      ++malformed;
      continue;
    }
    auto destination = ParseUnsigned(fields[1], 16);
    auto gateway = ParseUnsigned(fields[2], 16);
    auto flags = ParseUnsigned(fields[3], 16);
    auto metric = ParseInt(fields[6]);
    auto mask = ParseUnsigned(fields[7], 16);
    if (!destination || !gateway || !flags || !metric || !mask) {
      ++malformed;
      continue;
    }
    routes.push_back({fields[0], static_cast<uint32_t>(*destination), static_cast<uint32_t>(*gateway),
                      static_cast<uint32_t>(*mask), static_cast<unsigned>(*flags), static_cast<int>(*metric)});
  }
  if (malformed > 0) diagnostics.Warn(fmt::format("{}: {} malformed route(s) ignored", source, malformed));
  return routes;
}

std::vector<RouteEntry> ReadRoutes(const Roots& roots, Diagnostics& diagnostics) {
  std::string path = roots.Proc("net/route");
  auto content = ReadFile(path);
  if (!content.ok()) {
    diagnostics.Warn("cannot read " + path + ": the interface towards MASTER_ADDR cannot be chosen");
    return {};
  }
  return ParseRouteTable(*content, path, diagnostics);
}

Result<uint32_t> ResolveIpv4(const std::string& host) {
  in_addr parsed{};
  if (::inet_pton(AF_INET, host.c_str(), &parsed) == 1) return parsed.s_addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  int status = ::getaddrinfo(host.c_str(), nullptr, &hints, &results);
  if (status != 0 || !results) {
    return UnavailableError("cannot resolve '" + host + "' to an IPv4 address: " + ::gai_strerror(status),
                            "check MASTER_ADDR, /etc/hosts and DNS on this node");
  }
  uint32_t address = reinterpret_cast<sockaddr_in*>(results->ai_addr)->sin_addr.s_addr;
  ::freeaddrinfo(results);
  return address;
}

std::string FormatIpv4(uint32_t address) {
  char text[INET_ADDRSTRLEN] = {};
  in_addr value{};
  value.s_addr = address;
  ::inet_ntop(AF_INET, &value, text, sizeof(text));
  return text;
}

bool IsLoopbackAddress(uint32_t address) { return (ntohl(address) >> 24) == 127; }

RouteChoice InterfaceForAddress(const HostInfo& host, uint32_t target) {
  if (IsLoopbackAddress(target)) {
    for (const NetInterface& interface : host.interfaces) {
      if (interface.loopback) return {interface.name, "loopback"};
    }
    return {"lo", "loopback"};
  }
  for (const NetInterface& interface : host.interfaces) {
    for (const Ipv4Address& address : interface.ipv4) {
      if (address.address == target) return {interface.name, "local address"};
    }
  }
  const RouteEntry* best = nullptr;
  for (const RouteEntry& route : host.routes) {
    if (!(route.flags & kRouteUp) || (target & route.mask) != route.destination) continue;
    if (!best || PrefixLength(route.mask) > PrefixLength(best->mask) ||
        (PrefixLength(route.mask) == PrefixLength(best->mask) && route.metric < best->metric)) {
      best = &route;
    }
  }
  if (!best) return {"", "no route"};
  if (best->mask == 0) return {best->interface, "default route"};
  return {best->interface, fmt::format("route {}/{}", FormatIpv4(best->destination), PrefixLength(best->mask))};
}

}  // namespace primus::platform
