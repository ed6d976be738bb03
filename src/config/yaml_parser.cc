#include "config/yaml_parser.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "config/interpolation.h"
#include "config/scalar_types.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace primus::config {
namespace {

constexpr std::string_view kPlainTag = "?";    // yaml-cpp's tag for untagged plain scalars
constexpr std::string_view kQuotedTag = "!";   // quoted, literal or folded scalars
constexpr std::string_view kCoreTagPrefix = "tag:yaml.org,2002:";

// Builds the Value tree from yaml-cpp's parse events. Callbacks cannot return
// errors, so the first error is kept and every later event is ignored.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::string_view text, const YamlParseOptions& options)
      : text_(text), options_(options) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }

  Result<Value> Finish() {
    if (error_) return *error_;
    if (!root_) return Value::Null(Origin::File(options_.source, 0, 0, options_.extends_chain));
    return std::move(*root_);
  }

  // Where to point for a yaml-cpp exception. yaml-cpp reports an unclosed
  // flow collection at 1:1; the '[' or '{' that was never closed is better.
  Origin LocateSyntaxError(const YAML::Exception& exception) const {
    bool open_list = exception.msg.find("end of sequence flow") != std::string::npos;
    bool open_map = exception.msg.find("end of map flow") != std::string::npos;
    if (open_list || open_map) {
      for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
        if (it->flow && it->node.IsList() == open_list) return it->node.origin();
      }
    }
    if (exception.mark.is_null()) return Origin::File(options_.source, 0, 0, options_.extends_chain);
    return At(exception.mark);
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (failed()) return;
    if (++documents_ > 1) {
      Fail(ConfigErrorAt(At(mark), "a second YAML document ('---') starts here; a configuration "
                                   "file holds one document",
                         "remove the '---' line, or split the file and use extends:"));
    }
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (failed()) return;
    if (AwaitingKey()) {
      Fail(ConfigErrorAt(At(mark), "a map key is empty or null",
                         "write a name before the ':' (quote it, \"null\", to use that word)"));
      return;
    }
    Complete(Value::Null(At(mark)), 1, anchor, /*is_alias=*/false);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (failed()) return;
    if (AwaitingKey()) {
      Fail(ConfigErrorAt(At(mark), "an alias (*name) cannot be a map key",
                         "map keys must be plain strings"));
      return;
    }
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {  // yaml-cpp reports unknown anchors itself; be safe
      Fail(ConfigErrorAt(At(mark), "the alias refers to an anchor that is not defined"));
      return;
    }
    // Checked before the copy: a "billion laughs" document doubles with every alias.
    alias_nodes_ += it->second.nodes;
    if (alias_nodes_ > kMaxAliasNodes) {
      return Fail(ConfigErrorAt(
          At(mark),
          "the alias " + AliasText(mark) + " expands the document past " + std::to_string(kMaxAliasNodes) +
              " nodes copied by aliases (it copies " + std::to_string(it->second.nodes) + " nodes)",
          "aliases here repeat anchors that themselves repeat anchors; write the values out, or use "
          "extends: to share settings between files"));
    }
    Complete(it->second.value, it->second.nodes, 0, /*is_alias=*/true);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    if (failed()) return;
    if (tag == kQuotedTag && !QuoteIsClosed(mark)) {
      return Fail(ConfigErrorAt(At(mark), "invalid YAML: this quoted string is never closed",
                                "add the closing quote"));
    }
    Origin origin = At(mark);
    if (Status status = CheckScalarText(origin, text, AwaitingKey()); !status.ok()) {
      return Fail(status.error());
    }
    if (AwaitingKey()) {
      if (anchor != 0) anchors_[anchor] = {Value::String(text, origin), 1};
      AcceptKey(std::move(origin), tag, text);
      return;
    }
    Result<Value> value = ResolveScalar(origin, tag, text);
    if (!value.ok()) return Fail(value.error());
    Complete(std::move(*value), 1, anchor, /*is_alias=*/false);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    OpenCollection(mark, tag, anchor, style, Value::EmptyList(At(mark)));
  }
  void OnSequenceEnd() override { CloseCollection(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    OpenCollection(mark, tag, anchor, style, Value::EmptyMap(At(mark)));
  }
  void OnMapEnd() override { CloseCollection(); }

 private:
  // A list or map under construction.
  struct Frame {
    Value node;
    size_t nodes = 1;  // this collection and everything in it so far
    YAML::anchor_t anchor = 0;
    bool flow = false;
    // Maps only: the key waiting for its value, and every key seen so far.
    std::optional<std::string> pending_key;
    Origin pending_key_origin;
    bool pending_key_is_merge = false;
    // Line and column of each key (the file is the frame's): cheap to keep
    // for a map of 100,000 keys.
    std::unordered_map<std::string, std::pair<int, int>> key_origins;
    // `<<: ...` sources (earlier wins), and how many explicit keys preceded
    // it, so that merged keys appear where the `<<` line was.
    std::optional<std::vector<Value>> merge_sources;
    Origin merge_origin;
    size_t merge_position = 0;
  };

  // yaml-cpp 0.7 accepts `name: "gpt` followed by a newline, swallowing the
  // rest of the file into the string. Check that a quote opened at `mark` is
  // closed before the end of the text.
  bool QuoteIsClosed(const YAML::Mark& mark) const {
    if (mark.line < 0 || mark.line >= static_cast<int>(line_starts_.size())) return true;
    // yaml-cpp columns count bytes, after a byte-order mark it skipped.
    size_t at = line_starts_[mark.line] + mark.column;
    if (mark.line == 0 && text_.starts_with("\xEF\xBB\xBF")) at += 3;
    if (at >= text_.size()) return true;
    char quote = text_[at];
    if (quote != '"' && quote != '\'') return true;  // a block scalar
    for (size_t i = at + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' is an escaped quote
        } else {
          return true;
        }
      }
    }
    return false;
  }

  // "*name" as written at an alias's mark, for messages.
  std::string AliasText(const YAML::Mark& mark) const {
    if (mark.line < 0 || mark.line >= static_cast<int>(line_starts_.size())) return "here";
    size_t at = line_starts_[mark.line] + mark.column;
    if (mark.line == 0 && text_.starts_with("\xEF\xBB\xBF")) at += 3;
    if (at >= text_.size() || text_[at] != '*') return "here";
    size_t end = text_.find_first_of(" \t\r\n,[]{}", at);
    return "'" + std::string(text_.substr(at, std::min<size_t>(end, at + 80) - at)) + "'";
  }

  // A NUL cuts every C string the value will become (an argument, a
  // variable); escapes such as "\0" or "\uD800" can still produce one, or
  // bytes that are not UTF-8, after the text itself was checked.
  static Status CheckScalarText(const Origin& origin, std::string_view text, bool key) {
    std::string_view what = key ? "a map key" : "a value";
    if (text.find('\0') != std::string_view::npos) {
      return ConfigErrorAt(origin, "a NUL character (\\0) in " + std::string(what) +
                                       "; it would cut the text short where it is used",
                           "remove the \\0 (or \\x00, \\u0000) escape");
    }
    if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
      return ConfigErrorAt(origin,
                           std::string(what) + " that is not valid UTF-8 (byte " + std::to_string(bad + 1) +
                               " of it)",
                           "remove the escape that produces it (\\uD800 to \\uDFFF are not characters)");
    }
    return Status::Ok();
  }

  Origin At(const YAML::Mark& mark) const {
    return Origin::File(options_.source, mark.line + 1, mark.column + 1, options_.extends_chain);
  }

  void Fail(Error error) {
    if (!error_) error_ = std::move(error);
  }

  bool AwaitingKey() const {
    return !frames_.empty() && frames_.back().node.IsMap() && !frames_.back().pending_key;
  }

  void AcceptKey(Origin origin, const std::string& tag, const std::string& key) {
    Frame& frame = frames_.back();
    bool is_merge = tag == kPlainTag && key == "<<";
    if (is_merge && frame.merge_sources) {
      return Fail(ConfigErrorAt(origin, "a second merge key '<<' in the same map (the first is at " +
                                            frame.merge_origin.Describe() + ")",
                                "merge several maps with one key: <<: [*first, *second]"));
    }
    if (!is_merge) {
      if (auto first = frame.key_origins.find(key); first != frame.key_origins.end()) {
        Origin first_origin = origin;
        first_origin.line = first->second.first;
        first_origin.column = first->second.second;
        return Fail(ConfigErrorAt(
            origin,
            "duplicate key '" + key + "' in the same map (first at " + first_origin.Describe() + ")",
            "remove one of them: within one file a later key does not override an earlier one "
            "(use extends: or --set for that)"));
      }
      frame.key_origins.emplace(key, std::pair{origin.line, origin.column});
    }
    frame.pending_key = key;
    frame.pending_key_origin = std::move(origin);
    frame.pending_key_is_merge = is_merge;
  }

  Result<Value> ResolveScalar(const Origin& origin, const std::string& tag, const std::string& raw) {
    std::string text = raw;
    if (options_.environment != nullptr) {
      Result<std::string> interpolated = Interpolate(raw, *options_.environment, origin);
      if (!interpolated.ok()) return interpolated.error();
      text = std::move(*interpolated);
    }
    if (tag == kPlainTag) return InferScalar(text, origin);
    if (tag == kQuotedTag) return Value::String(std::move(text), origin);
    if (tag.starts_with(kCoreTagPrefix)) {
      std::string_view core = std::string_view(tag).substr(kCoreTagPrefix.size());
      Value typed = InferScalar(Trim(text), origin);
      if (core == "str") return Value::String(std::move(text), origin);
      if (core == "int" && typed.IsInt()) return typed;
      if (core == "float" && typed.IsNumber()) return Value::Double(typed.AsDouble(), origin);
      if (core == "bool" && typed.IsBool()) return typed;
      if (core == "null" && typed.IsNull()) return typed;
      if (core == "int" || core == "float" || core == "bool" || core == "null") {
        return ConfigErrorAt(origin, "'" + text + "' is not a valid !!" + std::string(core),
                             "remove the tag, or write a value of that type");
      }
    }
    return ConfigErrorAt(origin, "unsupported YAML tag '" + tag + "'",
                         "only !!str, !!int, !!float, !!bool and !!null are understood");
  }

  void OpenCollection(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                      YAML::EmitterStyle::value style, Value node) {
    if (failed()) return;
    if (AwaitingKey()) {
      return Fail(ConfigErrorAt(At(mark), "a list or map cannot be a map key",
                                "map keys must be plain strings"));
    }
    bool known_tag = tag == kPlainTag || tag == kQuotedTag || tag.empty() ||
                     tag == std::string(kCoreTagPrefix) + "map" ||
                     tag == std::string(kCoreTagPrefix) + "seq";
    if (!known_tag) {
      return Fail(ConfigErrorAt(At(mark), "unsupported YAML tag '" + tag + "'",
                                "remove the tag; lists and maps need none"));
    }
    Frame frame;
    frame.node = std::move(node);
    frame.anchor = anchor;
    frame.flow = style == YAML::EmitterStyle::Flow;
    frames_.push_back(std::move(frame));
  }

  void CloseCollection() {
    if (failed() || frames_.empty()) return;
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    if (frame.node.IsMap() && frame.merge_sources) ApplyMergeKey(&frame);
    Complete(std::move(frame.node), frame.nodes, frame.anchor, /*is_alias=*/false);
  }

  // Merge-key semantics (yaml.org/type/merge): a key of the map itself wins
  // over a merged one; among the merged maps, the earlier one wins. Merged
  // keys take the place of the `<<` line.
  static void ApplyMergeKey(Frame* frame) {
    Value::Map explicit_entries = std::move(frame->node.AsMap());
    Value merged = Value::EmptyMap(frame->node.origin());
    Value::Map& entries = merged.AsMap();
    std::unordered_set<std::string_view> merged_keys;  // views into the sources, which outlive this
    auto add_merged_keys = [&] {
      for (const Value& source : *frame->merge_sources) {
        for (const auto& [key, item] : source.AsMap()) {
          if (frame->key_origins.count(key) == 0 && merged_keys.insert(key).second) {
            entries.emplace_back(key, item);
          }
        }
      }
    };
    // Explicit keys are distinct, and distinct from every merged one.
    for (size_t i = 0; i < explicit_entries.size(); ++i) {
      if (i == frame->merge_position) add_merged_keys();
      entries.emplace_back(std::move(explicit_entries[i].first), std::move(explicit_entries[i].second));
    }
    if (frame->merge_position >= explicit_entries.size()) add_merged_keys();
    frame->node = std::move(merged);
  }

  // A finished node of `nodes` nodes goes to its parent (or becomes the root).
  void Complete(Value value, size_t nodes, YAML::anchor_t anchor, bool is_alias) {
    if (failed()) return;
    if (frames_.empty()) {
      if (anchor != 0) anchors_[anchor] = {value, nodes};
      root_ = std::move(value);
      return;
    }
    Frame& parent = frames_.back();
    parent.nodes += nodes;
    if (parent.node.IsList()) {
      if (anchor != 0) anchors_[anchor] = {value, nodes};
      parent.node.Append(std::move(value));
      return;
    }
    // A map value. An empty value or a block collection is marked by yaml-cpp
    // at the next token (often the next line); the key's position is where
    // the user looks.
    if (!is_alias && value.origin().line != parent.pending_key_origin.line) {
      value.set_origin(parent.pending_key_origin);
    }
    value.set_key_origin(parent.pending_key_origin);
    if (anchor != 0) anchors_[anchor] = {value, nodes};
    std::string key = std::move(*parent.pending_key);
    parent.pending_key.reset();
    if (parent.pending_key_is_merge) {
      AcceptMergeSources(&parent, std::move(value));
    } else {
      // AcceptKey refused duplicates already: append, without Put's linear search.
      parent.node.AsMap().emplace_back(std::move(key), std::move(value));
    }
  }

  void AcceptMergeSources(Frame* frame, Value value) {
    std::vector<Value> sources;
    if (value.IsMap()) {
      sources.push_back(std::move(value));
    } else if (value.IsList()) {
      for (Value& item : value.AsList()) {
        if (!item.IsMap()) {
          return Fail(ConfigErrorAt(frame->pending_key_origin,
                                    "the merge key '<<' lists " + item.DescribeForMessage() +
                                        "; every entry must be a map",
                                    "write <<: *anchor or <<: [*first, *second]"));
        }
        sources.push_back(std::move(item));
      }
    } else {
      return Fail(ConfigErrorAt(frame->pending_key_origin,
                                "the merge key '<<' expects a map or a list of maps, found " +
                                    value.DescribeForMessage(),
                                "write <<: *anchor or <<: [*first, *second]"));
    }
    frame->merge_sources = std::move(sources);
    frame->merge_origin = frame->pending_key_origin;
    frame->merge_position = frame->node.AsMap().size();
  }

  std::string_view text_;
  std::vector<size_t> line_starts_;  // byte offset of each line
  const YamlParseOptions& options_;
  std::vector<Frame> frames_;
  struct Anchored {
    Value value;
    size_t nodes = 0;
  };
  std::map<YAML::anchor_t, Anchored> anchors_;
  size_t alias_nodes_ = 0;  // nodes copied by aliases so far
  std::optional<Value> root_;
  std::optional<Error> error_;
  int documents_ = 0;
};

// Tabs are the most common cause of yaml-cpp's terse messages; say so.
std::string SyntaxHint(std::string_view text, const Origin& where, const std::string& message) {
  std::vector<std::string> lines = Split(text, '\n');
  for (int line = where.line; line >= where.line - 1 && line >= 1; --line) {
    if (line > static_cast<int>(lines.size())) continue;
    const std::string& content = lines[line - 1];
    size_t indent_end = content.find_first_not_of(" \t");
    if (content.substr(0, indent_end).find('\t') != std::string::npos) {
      return "line " + std::to_string(line) + " is indented with a tab; YAML indentation must use spaces";
    }
  }
  if (message.find("end of sequence flow") != std::string::npos) return "close the list with ']'";
  if (message.find("end of map flow") != std::string::npos) return "close the map with '}'";
  if (message.find("EOF in scalar") != std::string::npos) {
    return "a quoted string is never closed; add the closing quote";
  }
  return "check the indentation and quoting on this line and the one before it";
}

// NUL, control characters and invalid UTF-8 in the text itself, at their
// line and column (counted in bytes, as yaml-cpp counts them).
Status CheckText(std::string_view text, const YamlParseOptions& options) {
  size_t bad = FindInvalidUtf8(text);
  size_t control = std::string_view::npos;
  for (size_t i = 0; i < std::min(bad, text.size()); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      control = i;
      break;
    }
  }
  size_t at = std::min(bad, control);
  if (at == std::string_view::npos) return Status::Ok();
  size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  line_start = (line_start == std::string_view::npos || at == 0) ? 0 : line_start + 1;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(line_start), '\n'));
  Origin where = Origin::File(options.source, line, static_cast<int>(at - line_start) + 1, options.extends_chain);
  unsigned char byte = static_cast<unsigned char>(text[at]);
  if (at == bad) {
    return ConfigErrorAt(where, fmt::format("the text is not valid UTF-8 (byte 0x{:02x})", byte),
                         "save the file as UTF-8");
  }
  if (byte == 0) {
    return ConfigErrorAt(where, "a NUL byte in the text", "remove it: a configuration file is UTF-8 text");
  }
  return ConfigErrorAt(where, fmt::format("a control character (0x{:02x}) in the text", byte),
                       "remove it, or write it as an escape inside double quotes (e.g. \"\\e\" for ESC)");
}

}  // namespace

Result<Value> ParseYaml(std::string_view text, const YamlParseOptions& options) {
  if (Status status = CheckText(text, options); !status.ok()) return status.error();
  std::istringstream input{std::string(text)};
  TreeBuilder builder(text, options);
  try {
    YAML::Parser parser(input);
    while (!builder.failed() && parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& exception) {
    // A syntax error wins over one of ours: before throwing, yaml-cpp may
    // have sent events for a structure that is not really there.
    Origin where = builder.LocateSyntaxError(exception);
    return ConfigErrorAt(where, "invalid YAML: " + exception.msg,
                         SyntaxHint(text, where, exception.msg));
  }
  return builder.Finish();
}

}  // namespace primus::config
