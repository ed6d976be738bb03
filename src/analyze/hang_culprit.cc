#include "analyze/hang_culprit.h"

#include <algorithm>
#include <map>

#include "util/strings.h"

namespace primus::analyze {
namespace {

struct Frame {
  std::string file;
  std::string line;
  std::string function;
};

// The frames of the main thread, innermost first. faulthandler: the
// "Current thread" block (the thread that took the signal: the main one),
// else the block holding "<module>"; py-spy: the "MainThread" block.
std::vector<Frame> MainThreadFrames(const std::string& text) {
  std::vector<std::vector<Frame>> blocks;
  std::vector<bool> main_block;
  for (const std::string& raw : Split(text, '\n')) {
    std::string_view line = Trim(raw);
    if (line.starts_with("Current thread ") || line.starts_with("Thread ")) {
      blocks.emplace_back();
      main_block.push_back(line.starts_with("Current thread ") || line.find("\"MainThread\"") != std::string_view::npos);
      continue;
    }
    if (blocks.empty()) continue;
    Frame frame;
    if (line.starts_with("File \"")) {  // faulthandler: File "x.py", line 20 in f
      size_t close = line.find('"', 6);
      size_t at = line.find(", line ");
      size_t in = line.find(" in ");
      if (close == std::string_view::npos || at == std::string_view::npos || in == std::string_view::npos) continue;
      frame.file = std::string(line.substr(6, close - 6));
      frame.line = std::string(line.substr(at + 7, in - at - 7));
      frame.function = std::string(line.substr(in + 4));
    } else if (line.ends_with(")") && line.find(" (") != std::string_view::npos) {  // py-spy: f (x.py:20)
      size_t open = line.rfind(" (");
      std::string_view where = line.substr(open + 2, line.size() - open - 3);
      size_t colon = where.rfind(':');
      if (colon == std::string_view::npos) continue;
      frame.function = std::string(line.substr(0, open));
      frame.file = std::string(where.substr(0, colon));
      frame.line = std::string(where.substr(colon + 1));
    } else {
      continue;
    }
    blocks.back().push_back(std::move(frame));
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (main_block[i]) return blocks[i];
  }
  for (const auto& block : blocks) {
    for (const Frame& frame : block) {
      if (frame.function == "<module>") return block;
    }
  }
  return blocks.empty() ? std::vector<Frame>{} : blocks.front();
}

bool LibraryFile(const std::string& file) {
  return file.starts_with("<frozen") || file.find("/site-packages/") != std::string::npos ||
         file.find("/dist-packages/") != std::string::npos || file.find("/lib/python3") != std::string::npos;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string RankList(const std::vector<int>& ranks) {
  std::vector<std::string> words;
  for (int rank : ranks) words.push_back(std::to_string(rank));
  return (ranks.size() == 1 ? "rank " : "ranks ") + Join(words, ", ");
}

}  // namespace

RankPlace PlaceOf(const RankStacks& stacks) {
  RankPlace place;
  place.rank = stacks.rank;
  place.host = stacks.host;
  std::vector<Frame> frames = MainThreadFrames(stacks.text);
  place.readable = !frames.empty();
  for (const Frame& frame : frames) {  // innermost first
    bool c10d = frame.file.find("torch/distributed/") != std::string::npos &&
                (frame.file.ends_with("distributed_c10d.py") || frame.file.ends_with("c10d_logger.py"));
    if (c10d && place.collective.empty() && frame.function != "wrapper" && !frame.function.starts_with("_")) {
      place.collective = frame.function;
    }
    if (place.frame.empty() && !LibraryFile(frame.file)) {
      place.frame = BaseName(frame.file) + ":" + frame.line + " in " + frame.function;
    }
  }
  return place;
}

HangVerdict JudgeHang(const std::vector<RankStacks>& ranks) {
  HangVerdict verdict;
  std::map<std::string, std::vector<int>> by_collective;  // "" = in none
  std::vector<int> unreadable;
  for (const RankStacks& stacks : ranks) {
    RankPlace place = PlaceOf(stacks);
    if (place.readable) by_collective[place.collective].push_back(place.rank);
    else unreadable.push_back(place.rank);
    verdict.places.push_back(std::move(place));
  }
  auto where = [&](int rank) {
    for (const RankPlace& place : verdict.places) {
      if (place.rank == rank) {
        std::string text = place.frame.empty() ? "in library code" : "at " + place.frame;
        return place.host.empty() ? text : text + " on " + place.host;
      }
    }
    return std::string();
  };
  std::vector<std::string> collectives;
  for (const auto& [name, members] : by_collective) {
    if (!name.empty()) collectives.push_back(name);
  }
  std::string tail = unreadable.empty() ? "" : "; no stack from " + RankList(unreadable);
  if (collectives.empty()) {
    verdict.summary = by_collective.empty() ? "no stack could be read" + tail
                                            : "no rank is inside a collective: the stacks do not name one the others "
                                              "wait for" + tail;
    return verdict;
  }
  if (by_collective.count("")) {
    const std::vector<int>& outside = by_collective[""];
    std::vector<int> waiting;
    for (const auto& [name, members] : by_collective) {
      if (!name.empty()) waiting.insert(waiting.end(), members.begin(), members.end());
    }
    std::sort(waiting.begin(), waiting.end());
    verdict.culprits = outside;
    std::vector<std::string> parts;
    for (int rank : outside) parts.push_back("rank " + std::to_string(rank) + " is " + where(rank));
    verdict.summary = RankList(outside) + (outside.size() == 1 ? " is" : " are") + " not in the " +
                      Join(collectives, "/") + " that " + RankList(waiting) + " wait" + (waiting.size() == 1 ? "s" : "") +
                      " in: " + Join(parts, "; ") + tail;
    return verdict;
  }
  if (collectives.size() > 1) {
    // Different collectives: the fewest in one are the odd ones out.
    std::string fewest;
    for (const std::string& name : collectives) {
      if (fewest.empty() || by_collective[name].size() < by_collective[fewest].size()) fewest = name;
    }
    verdict.culprits = by_collective[fewest];
    std::vector<std::string> parts;
    for (const std::string& name : collectives) parts.push_back(name + " (" + RankList(by_collective[name]) + ")");
    verdict.summary = "the ranks are in different collectives: " + Join(parts, ", ") + "; " +
                      RankList(verdict.culprits) + " in " + fewest + " " + (verdict.culprits.size() == 1 ? "is" : "are") +
                      " the odd one out" + tail;
    return verdict;
  }
  verdict.summary = "every rank is inside " + collectives.front() +
                    ": the stacks do not single one out (one may be behind in the sequence of collectives)" + tail;
  return verdict;
}

}  // namespace primus::analyze
