#include "runtime/hostfile.h"

#include <set>

#include "util/hostlist.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// What ssh and a shell accept as a host without surprises: letters, digits,
// '.', '-', '_', ':' (IPv6 in brackets is not supported), an optional user@.
// A leading '-' would read as an ssh option.
bool ValidHost(std::string_view host) {
  if (host.empty() || host.front() == '-' || host.size() > 255) return false;
  size_t at = host.find('@');
  if (at != std::string_view::npos && (at == 0 || at + 1 == host.size() || host.find('@', at + 1) != std::string_view::npos)) {
    return false;
  }
  std::string_view name = at == std::string_view::npos ? host : host.substr(at + 1);
  if (name.front() == '-' || name.front() == '.') return false;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_' || c == '@';
    if (!ok) return false;
  }
  return true;
}

Result<int> ParseSlots(std::string_view text, const std::string& where, std::string_view written) {
  std::optional<int64_t> value = ParseInt(text);
  if (!value || *value < 1 || *value > 1024) {
    return ConfigError(where + ": '" + std::string(written) + "': slots must be a whole number from 1 to 1024",
                       "write 'host slots=8' (OpenMPI, DeepSpeed) or 'host:8' (MPICH)");
  }
  return static_cast<int>(*value);
}

}  // namespace

std::string HostName(const std::string& host) {
  size_t at = host.find('@');
  return at == std::string::npos ? host : host.substr(at + 1);
}

Result<std::vector<HostEntry>> ParseHostfile(std::string_view text, const std::string& path) {
  std::vector<HostEntry> hosts;
  std::set<std::string> seen;
  size_t line_number = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_number;
    std::string where = path + ":" + std::to_string(line_number);
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string> words;
    for (std::string_view word : Split(std::string(line), ' ')) {
      for (std::string_view part : Split(std::string(word), '\t')) {
        std::string_view trimmed = Trim(part);
        if (!trimmed.empty() && trimmed != "\r") words.emplace_back(trimmed);
      }
    }
    if (words.empty()) continue;
    HostEntry entry;
    entry.where = where;
    std::string first = words.front();
    if (size_t colon = first.find(':'); colon != std::string::npos) {  // MPICH host:N
      Result<int> slots = ParseSlots(first.substr(colon + 1), where, first);
      if (!slots.ok()) return slots.error();
      entry.slots = *slots;
      first = first.substr(0, colon);
    }
    if (!ValidHost(first)) {
      return ConfigError(where + ": '" + EscapeControlCharacters(first) + "' is not a host name",
                         "a host is letters, digits, '.', '-' and '_', optionally user@host, not starting with '-'");
    }
    entry.host = first;
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& word = words[i];
      size_t equals = word.find('=');
      std::string key = equals == std::string::npos ? word : word.substr(0, equals);
      if (equals == std::string::npos) {
        return ConfigError(where + ": '" + EscapeControlCharacters(word) + "' after the host: expected slots=N",
                           "one host per line: 'host', 'host slots=N' or 'host:N'");
      }
      if (key == "slots") {
        if (entry.slots != 0) return ConfigError(where + ": slots given twice for " + first);
        Result<int> slots = ParseSlots(word.substr(equals + 1), where, word);
        if (!slots.ok()) return slots.error();
        entry.slots = *slots;
      } else if (key == "max_slots" || key == "max-slots") {
        Result<int> slots = ParseSlots(word.substr(equals + 1), where, word);  // checked, not used
        if (!slots.ok()) return slots.error();
      } else {
        return ConfigError(where + ": unknown setting '" + EscapeControlCharacters(key) + "' for host " + first,
                           "known: slots=N, max_slots=N");
      }
    }
    if (!seen.insert(HostName(entry.host)).second) {
      return ConfigError(where + ": host " + entry.host + " is listed twice",
                         "one node agent runs per host: list each host once, with slots=N for its workers");
    }
    hosts.push_back(std::move(entry));
  }
  if (hosts.empty()) return ConfigError(path + " names no host", "write one host per line");
  return hosts;
}

Result<std::vector<HostEntry>> HostsFromList(std::string_view expression, const std::string& origin) {
  Result<std::vector<std::string>> names = ExpandHostlist(expression);
  if (!names.ok()) return UsageError(origin + ": " + names.error().message, names.error().hint);
  std::vector<HostEntry> hosts;
  std::set<std::string> seen;
  for (const std::string& name : *names) {
    if (!ValidHost(name)) return UsageError(origin + ": '" + EscapeControlCharacters(name) + "' is not a host name");
    if (!seen.insert(HostName(name)).second) return UsageError(origin + ": host " + name + " is listed twice");
    hosts.push_back({name, 0, origin});
  }
  if (hosts.empty()) return UsageError(origin + " names no host");
  return hosts;
}

Result<std::vector<HostEntry>> SelectHosts(const std::vector<HostEntry>& hosts, std::string_view include,
                                           std::string_view exclude, int count) {
  std::set<std::string> known;
  for (const HostEntry& entry : hosts) known.insert(HostName(entry.host));
  auto names = [&](std::string_view list, const char* flag) -> Result<std::set<std::string>> {
    std::set<std::string> out;
    if (Trim(list).empty()) return out;
    Result<std::vector<std::string>> expanded = ExpandHostlist(Trim(list));
    if (!expanded.ok()) return UsageError(std::string(flag) + ": " + expanded.error().message);
    for (const std::string& name : *expanded) {
      if (!known.count(HostName(name))) {
        return UsageError(std::string(flag) + " names " + name + ", which is not among the hosts",
                          "the hosts are: " + Join(std::vector<std::string>(known.begin(), known.end()), ", "));
      }
      out.insert(HostName(name));
    }
    return out;
  };
  Result<std::set<std::string>> included = names(include, "--include");
  if (!included.ok()) return included.error();
  Result<std::set<std::string>> excluded = names(exclude, "--exclude");
  if (!excluded.ok()) return excluded.error();
  std::vector<HostEntry> out;
  for (const HostEntry& entry : hosts) {
    std::string name = HostName(entry.host);
    if (!included->empty() && !included->count(name)) continue;
    if (excluded->count(name)) continue;
    out.push_back(entry);
  }
  if (out.empty()) return UsageError("no host is left after --include/--exclude");
  if (count > 0) {
    if (static_cast<size_t>(count) > out.size()) {
      return UsageError("-N " + std::to_string(count) + " asks for more hosts than the " +
                            std::to_string(out.size()) + " available",
                        "add hosts to the hostfile, or ask for fewer");
    }
    out.resize(static_cast<size_t>(count));
  }
  return out;
}

Result<int> CommonSlots(const std::vector<HostEntry>& hosts) {
  const HostEntry* first = nullptr;
  for (const HostEntry& entry : hosts) {
    if (entry.slots == 0) continue;
    if (first == nullptr) {
      first = &entry;
    } else if (entry.slots != first->slots) {
      return ConfigError(entry.where + ": " + entry.host + " has slots=" + std::to_string(entry.slots) + " but " +
                             first->where + ": " + first->host + " has slots=" + std::to_string(first->slots),
                         "every node of a job runs the same number of workers: give every host the same slots");
    }
  }
  if (first == nullptr) return 0;
  for (const HostEntry& entry : hosts) {
    if (entry.slots == 0) {
      return ConfigError(entry.where + ": " + entry.host + " has no slots but " + first->where + ": " + first->host +
                             " has slots=" + std::to_string(first->slots),
                         "give every host the same slots, or none (one worker per GPU)");
    }
  }
  return first->slots;
}

}  // namespace primus::runtime
