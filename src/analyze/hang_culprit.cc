#include "analyze/hang_culprit.h"

#include <algorithm>
#include <map>

#include "analyze/python_frame.h"
#include "util/strings.h"

namespace primus::analyze {
namespace {

using Frame = PythonFrame;

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

std::string RankList(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::vector<std::string> words;
  for (int rank : ranks) words.push_back(std::to_string(rank));
  return (ranks.size() == 1 ? "rank " : "ranks ") + Join(words, ", ");
}

const RankPlace* FindPlace(const std::vector<RankPlace>& places, int rank) {
  for (const RankPlace& place : places) {
    if (place.rank == rank) return &place;
  }
  return nullptr;
}

// "at train.py:20 in wait_for_peer on node1"
std::string Where(const std::vector<RankPlace>& places, int rank) {
  const RankPlace* place = FindPlace(places, rank);
  if (place == nullptr) return "";
  std::string text = place->frame.empty() ? "in library code" : "at " + place->frame;
  return place->host.empty() ? text : text + " on " + place->host;
}

// The verdict of the stacks alone.
HangVerdict JudgeStacks(const std::vector<RankPlace>& places) {
  HangVerdict verdict;
  std::map<std::string, std::vector<int>> by_collective;  // "" = in none
  std::vector<int> unreadable;
  for (const RankPlace& place : places) {
    if (place.readable) by_collective[place.collective].push_back(place.rank);
    else unreadable.push_back(place.rank);
  }
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
    verdict.culprits = outside;
    std::vector<std::string> parts;
    for (int rank : outside) parts.push_back("rank " + std::to_string(rank) + " is " + Where(places, rank));
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

// "all_reduce #42 [[3, 4]]"
std::string PendingText(const GroupProgress& group) {
  std::string text = (group.pending_op.empty() ? "a collective" : group.pending_op) + " #" +
                     std::to_string(group.pending_seq);
  if (!group.pending_sizes.empty() && group.pending_sizes != "[]") text += " " + group.pending_sizes;
  return text;
}

// The verdict of the flight records, group by group: the first group that
// singles a rank out decides; else the first group's observation is kept.
HangVerdict JudgeFlightRecords(const std::vector<RankPlace>& places) {
  HangVerdict verdict;
  std::map<std::string, std::vector<std::pair<int, const GroupProgress*>>> by_group;
  for (const RankPlace& place : places) {
    for (const GroupProgress& group : place.groups) by_group[group.group].emplace_back(place.rank, &group);
  }
  std::string observation;
  for (const auto& [name, members] : by_group) {
    if (members.size() < 2) continue;
    int64_t newest = -1;
    for (const auto& [rank, group] : members) newest = std::max(newest, group->last_enqueued);
    std::vector<int> behind, ahead;
    std::vector<std::string> behind_parts;
    const GroupProgress* waiting_in = nullptr;
    for (const auto& [rank, group] : members) {
      if (group->last_enqueued < newest) {
        behind.push_back(rank);
        behind_parts.push_back("rank " + std::to_string(rank) + " issued up to #" +
                               std::to_string(group->last_enqueued));
      } else {
        ahead.push_back(rank);
        if (waiting_in == nullptr && group->pending_seq >= 0) waiting_in = group;
      }
    }
    if (!behind.empty()) {
      verdict.culprits = behind;
      std::string waited = waiting_in ? PendingText(*waiting_in) : "collective #" + std::to_string(newest);
      if (waiting_in && !waiting_in->pending_frame.empty()) waited += " (issued at " + waiting_in->pending_frame + ")";
      verdict.summary = RankList(behind) + (behind.size() == 1 ? " is" : " are") + " behind in process group " + name +
                        ": " + Join(behind_parts, ", ") + ", while " + RankList(ahead) + " wait" +
                        (ahead.size() == 1 ? "s" : "") + " in " + waited;
      return verdict;
    }
    // Everyone issued as many: what is each one waiting in?
    std::map<std::string, std::vector<int>> by_pending;
    for (const auto& [rank, group] : members) {
      if (group->pending_seq >= 0) by_pending[PendingText(*group)].push_back(rank);
    }
    if (by_pending.size() > 1) {
      std::string fewest;
      std::vector<std::string> parts;
      for (const auto& [pending, ranks] : by_pending) {
        if (fewest.empty() || ranks.size() < by_pending[fewest].size()) fewest = pending;
        parts.push_back(pending + " (" + RankList(ranks) + ")");
      }
      verdict.culprits = by_pending[fewest];
      verdict.summary = "the ranks of process group " + name + " wait in different collectives: " + Join(parts, ", ") +
                        "; " + RankList(verdict.culprits) + " in " + fewest + " " +
                        (verdict.culprits.size() == 1 ? "is" : "are") + " the odd one out";
      return verdict;
    }
    if (!observation.empty()) continue;
    observation = by_pending.size() == 1
                      ? "every rank of process group " + name + " waits in " + by_pending.begin()->first +
                            ": none is behind, so the collective itself does not complete (network, GPU or NCCL)"
                      : "every rank of process group " + name + " completed collective #" + std::to_string(newest) +
                            " and none is pending";
  }
  verdict.summary = observation;
  return verdict;
}

}  // namespace

RankPlace PlaceOf(const RankStacks& stacks) {
  RankPlace place;
  place.rank = stacks.rank;
  place.host = stacks.host;
  place.local_rank = stacks.local_rank;
  place.gpu = stacks.gpu;
  place.last_step = stacks.last_step;
  std::vector<Frame> frames = MainThreadFrames(stacks.text);
  place.readable = !frames.empty();
  for (const Frame& frame : frames) {  // innermost first
    bool c10d = frame.file.find("torch/distributed/") != std::string::npos &&
                (frame.file.ends_with("distributed_c10d.py") || frame.file.ends_with("c10d_logger.py"));
    if (c10d && place.collective.empty() && frame.function != "wrapper" && !frame.function.starts_with("_")) {
      place.collective = frame.function;
    }
    if (place.frame.empty() && !IsLibraryFile(frame.file)) place.frame = FrameText(frame);
  }
  if (stacks.flight) {
    place.has_flight_record = true;
    place.groups = stacks.flight->groups;
  }
  return place;
}

HangVerdict JudgePlaces(std::vector<RankPlace> places) {
  std::sort(places.begin(), places.end(), [](const RankPlace& a, const RankPlace& b) { return a.rank < b.rank; });
  bool any_stack = std::any_of(places.begin(), places.end(), [](const RankPlace& p) { return p.readable; });
  bool any_record = std::any_of(places.begin(), places.end(), [](const RankPlace& p) { return p.has_flight_record; });
  HangVerdict verdict = JudgeStacks(places);
  if (verdict.culprits.empty() && any_record) {
    HangVerdict flight = JudgeFlightRecords(places);
    if (!flight.culprits.empty()) {
      verdict.culprits = flight.culprits;
      verdict.summary = flight.summary;
    } else if (!flight.summary.empty()) {
      verdict.summary = flight.summary + (any_stack ? "; the stacks: " + verdict.summary : "");
    }
  }
  verdict.evidence = any_stack && any_record ? "stacks and flight records" : any_record ? "flight records" : "stacks";
  for (int rank : verdict.culprits) {
    const RankPlace* place = FindPlace(places, rank);
    if (place == nullptr) continue;
    std::vector<std::string> facts;
    if (!place->host.empty()) facts.push_back("host " + place->host);
    if (place->local_rank >= 0) facts.push_back("local rank " + std::to_string(place->local_rank));
    if (!place->gpu.empty()) facts.push_back(place->gpu);
    if (place->last_step) facts.push_back("last step " + std::to_string(*place->last_step));
    if (place->readable) facts.push_back(place->frame.empty() ? "in library code" : "at " + place->frame);
    verdict.details.push_back("rank " + std::to_string(rank) + ": " + Join(facts, ", "));
  }
  verdict.places = std::move(places);
  return verdict;
}

HangVerdict JudgeHang(const std::vector<RankStacks>& ranks) {
  std::vector<RankPlace> places;
  for (const RankStacks& stacks : ranks) places.push_back(PlaceOf(stacks));
  return JudgePlaces(std::move(places));
}

std::string FormatVerdict(const HangVerdict& verdict) {
  std::string out = verdict.summary + "\n";
  for (const std::string& line : verdict.details) out += "  " + line + "\n";
  out += "evidence: " + verdict.evidence + "\n";
  for (const RankPlace& place : verdict.places) {
    std::string where = !place.readable              ? "no stack"
                        : place.collective.empty() ? "not in a collective"
                                                   : "in " + place.collective;
    if (!place.frame.empty()) where += ", at " + place.frame;
    out += "  rank " + std::to_string(place.rank) + (place.host.empty() ? "" : " (" + place.host + ")") + ": " + where;
    for (const GroupProgress& group : place.groups) {
      out += "; group " + group.group + ": completed #" + std::to_string(group.last_completed) + " of #" +
             std::to_string(group.last_enqueued);
      if (group.pending_seq >= 0) out += ", waits in " + PendingText(group);
    }
    out += "\n";
  }
  return out;
}

}  // namespace primus::analyze
