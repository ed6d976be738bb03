#include "util/pickle_reader.h"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

namespace primus {
namespace {

// The most nodes the JSON may have once shared values are expanded (a memo
// can make a small pickle name the same list many times over).
constexpr size_t kMaxOutputNodes = 4'000'000;

// Nodes live in the reader's arena: a pickle's memo can make cycles.
struct Node;
using NodePtr = Node*;

struct Node {
  enum class Kind { kNone, kBool, kInt, kFloat, kText, kList, kTuple, kDict, kGlobal, kMark };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;  // kText; kGlobal: "module.name"
  std::vector<NodePtr> items;                       // kList, kTuple
  std::vector<std::pair<NodePtr, NodePtr>> entries;  // kDict
};

// TorchScript's pickler wraps plain data in calls of these (and protocol 2
// writes bytes as one); each returns its first argument.
bool DataWrapper(const std::string& name) {
  return name == "torch.jit._pickle.restore_type_tag" || name == "torch.jit._pickle.build_intlist" ||
         name == "torch.jit._pickle.build_doublelist" || name == "torch.jit._pickle.build_boollist" ||
         name == "torch.jit._pickle.build_stringlist" || name == "torch.jit._pickle.build_tensorlist" ||
         name == "torch.jit._pickle.build_complexlist" ||
         name == "_codecs.encode";  // protocol 2's bytes: encode(text, "latin1"), read as the text
}

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& source) : in_(bytes), source_(source) {}

  Result<nlohmann::json> Run() {
    while (true) {
      if (at_ >= in_.size()) return Fail("the pickle ends without its STOP opcode (truncated?)");
      size_t opcode_at = at_;
      uint8_t op = static_cast<uint8_t>(in_[at_++]);
      if (op == '.') break;
      if (auto failed = Step(op, opcode_at)) return *failed;
    }
    if (stack_.size() != 1 || stack_.back()->kind == Node::Kind::kMark) {
      return Fail(fmt::format("the pickle leaves {} values, not one", stack_.size()));
    }
    size_t budget = kMaxOutputNodes;
    nlohmann::json out;
    if (auto failed = ToJson(stack_.back(), 0, budget, out)) return *failed;
    return out;
  }

 private:
  using Failure = std::optional<Error>;

  Error Fail(const std::string& what) const {
    return ConfigError(fmt::format("{}: not a readable pickle at byte {}: {}", source_, at_, what),
                       "the file may be truncated or not a pickle of plain data");
  }

  bool Take(size_t count, std::string_view* out) {
    if (count > in_.size() - at_) return false;
    *out = in_.substr(at_, count);
    at_ += count;
    return true;
  }
  bool TakeUnsigned(size_t width, uint64_t* out) {  // little-endian
    std::string_view bytes;
    if (!Take(width, &bytes)) return false;
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) value |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
    *out = value;
    return true;
  }

  Failure Push(NodePtr node) {
    if (stack_.size() >= kPickleMaxStack) return Fail("too many values on the stack");
    stack_.push_back(std::move(node));
    return std::nullopt;
  }
  Failure Pop(NodePtr* out) {
    if (stack_.empty() || stack_.back()->kind == Node::Kind::kMark) return Fail("a value is missing on the stack");
    *out = std::move(stack_.back());
    stack_.pop_back();
    return std::nullopt;
  }
  // The values above the topmost mark, which is removed.
  Failure PopToMark(std::vector<NodePtr>* out) {
    size_t mark = stack_.size();
    while (mark > 0 && stack_[mark - 1]->kind != Node::Kind::kMark) --mark;
    if (mark == 0) return Fail("no MARK before this opcode");
    out->assign(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(mark)),
                std::make_move_iterator(stack_.end()));
    stack_.resize(mark - 1);
    return std::nullopt;
  }
  Failure Text(size_t length_width, bool is_unicode) {
    uint64_t length = 0;
    std::string_view bytes;
    if (!TakeUnsigned(length_width, &length) || length > in_.size() - at_ || !Take(length, &bytes)) {
      return Fail("a string runs past the end");
    }
    auto node = Make(Node::Kind::kText);
    if (is_unicode) {
      node->text = std::string(bytes);
    } else {  // bytes: one character per byte
      for (unsigned char c : bytes) {
        if (c < 0x80) {
          node->text += static_cast<char>(c);
        } else {
          node->text += static_cast<char>(0xC0 | (c >> 6));
          node->text += static_cast<char>(0x80 | (c & 0x3F));
        }
      }
    }
    return Push(std::move(node));
  }
  Failure Integer(int64_t value) {
    auto node = Make(Node::Kind::kInt);
    node->integer = value;
    return Push(std::move(node));
  }
  Failure Memoize(uint64_t key) {
    if (stack_.empty() || stack_.back()->kind == Node::Kind::kMark) return Fail("nothing to memoize");
    if (memo_.size() >= kPickleMaxStack && !memo_.count(key)) return Fail("too many memo entries");
    memo_[key] = stack_.back();
    return std::nullopt;
  }
  Failure Recall(uint64_t key) {
    auto found = memo_.find(key);
    if (found == memo_.end()) return Fail(fmt::format("memo entry {} was never stored", key));
    return Push(found->second);
  }
  Failure Global(std::string module, std::string name) {
    std::string full = module + "." + name;
    if (!DataWrapper(full)) {
      return Fail("it names " + full + ", and only plain data is read (no class or function is ever loaded)");
    }
    auto node = Make(Node::Kind::kGlobal);
    node->text = std::move(full);
    return Push(std::move(node));
  }
  Failure Line(std::string* out) {
    size_t end = in_.find('\n', at_);
    if (end == std::string_view::npos || end - at_ > 256) return Fail("a GLOBAL's name has no end");
    *out = std::string(in_.substr(at_, end - at_));
    at_ = end + 1;
    return std::nullopt;
  }
  Failure AddItems(NodePtr container, std::vector<NodePtr> items) {
    if (container->kind != Node::Kind::kList) return Fail("APPEND to something not a list");
    for (auto& item : items) container->items.push_back(std::move(item));
    return std::nullopt;
  }
  Failure AddEntries(NodePtr container, std::vector<NodePtr> items) {
    if (container->kind != Node::Kind::kDict) return Fail("SETITEM on something not a dict");
    if (items.size() % 2 != 0) return Fail("a dict item without its value");
    for (size_t i = 0; i < items.size(); i += 2) container->entries.emplace_back(items[i], items[i + 1]);
    return std::nullopt;
  }
  NodePtr& Top() { return stack_.back(); }
  NodePtr Make(Node::Kind kind) {
    arena_.push_back(std::make_unique<Node>());
    arena_.back()->kind = kind;
    return arena_.back().get();
  }

  Failure Step(uint8_t op, size_t opcode_at) {
    uint64_t value = 0;
    std::string_view bytes;
    switch (op) {
      case 0x80:  // PROTO
        if (!TakeUnsigned(1, &value)) return Fail("PROTO without its version");
        if (value < 2 || value > 5) return Fail(fmt::format("pickle protocol {} (2 to 5 are read)", value));
        return std::nullopt;
      case 0x95:  // FRAME: a length hint only
        if (!TakeUnsigned(8, &value)) return Fail("FRAME without its length");
        return std::nullopt;
      case '(': return Push(Make(Node::Kind::kMark));
      case ')': return Push(Make(Node::Kind::kTuple));
      case ']': return Push(Make(Node::Kind::kList));
      case '}': return Push(Make(Node::Kind::kDict));
      case 'N': return Push(Make(Node::Kind::kNone));
      case 0x88:
      case 0x89: {
        auto node = Make(Node::Kind::kBool);
        node->boolean = op == 0x88;
        return Push(std::move(node));
      }
      case 'J':
        if (!TakeUnsigned(4, &value)) return Fail("BININT runs past the end");
        return Integer(static_cast<int32_t>(static_cast<uint32_t>(value)));
      case 'K':
        if (!TakeUnsigned(1, &value)) return Fail("BININT1 runs past the end");
        return Integer(static_cast<int64_t>(value));
      case 'M':
        if (!TakeUnsigned(2, &value)) return Fail("BININT2 runs past the end");
        return Integer(static_cast<int64_t>(value));
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        uint64_t length = 0;
        if (!TakeUnsigned(op == 0x8a ? 1 : 4, &length) || length > in_.size() - at_ || !Take(length, &bytes)) {
          return Fail("a LONG runs past the end");
        }
        if (length > 8) return Fail("an integer wider than 64 bits");
        uint64_t raw = 0;
        for (size_t i = 0; i < length; ++i) raw |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
        if (length > 0 && length < 8 && (static_cast<uint8_t>(bytes[length - 1]) & 0x80)) {
          raw |= ~uint64_t{0} << (8 * length);  // sign-extend
        }
        return Integer(static_cast<int64_t>(raw));
      }
      case 'G': {  // BINFLOAT, big-endian
        if (!Take(8, &bytes)) return Fail("BINFLOAT runs past the end");
        uint64_t raw = 0;
        for (size_t i = 0; i < 8; ++i) raw = (raw << 8) | static_cast<uint8_t>(bytes[i]);
        auto node = Make(Node::Kind::kFloat);
        node->real = std::bit_cast<double>(raw);
        return Push(std::move(node));
      }
      case 0x8c: return Text(1, true);   // SHORT_BINUNICODE
      case 'X': return Text(4, true);    // BINUNICODE
      case 0x8d: return Text(8, true);   // BINUNICODE8
      case 'C': return Text(1, false);   // SHORT_BINBYTES
      case 'B': return Text(4, false);   // BINBYTES
      case 0x8e: return Text(8, false);  // BINBYTES8
      case 'U': return Text(1, false);   // SHORT_BINSTRING
      case 'T': return Text(4, false);   // BINSTRING
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        size_t count = op - 0x84u;
        auto node = Make(Node::Kind::kTuple);
        node->items.resize(count);
        for (size_t i = count; i-- > 0;) {
          if (auto failed = Pop(&node->items[i])) return failed;
        }
        return Push(std::move(node));
      }
      case 't':
      case 'l': {  // TUPLE, LIST
        auto node = Make(op == 't' ? Node::Kind::kTuple : Node::Kind::kList);
        if (auto failed = PopToMark(&node->items)) return failed;
        return Push(std::move(node));
      }
      case 'd': {  // DICT
        std::vector<NodePtr> items;
        if (auto failed = PopToMark(&items)) return failed;
        auto node = Make(Node::Kind::kDict);
        if (auto failed = AddEntries(node, std::move(items))) return failed;
        return Push(std::move(node));
      }
      case 'a': {  // APPEND
        NodePtr item;
        if (auto failed = Pop(&item)) return failed;
        if (stack_.empty()) return Fail("APPEND without a list");
        return AddItems(Top(), {std::move(item)});
      }
      case 'e': {  // APPENDS
        std::vector<NodePtr> items;
        if (auto failed = PopToMark(&items)) return failed;
        if (stack_.empty()) return Fail("APPENDS without a list");
        return AddItems(Top(), std::move(items));
      }
      case 's': {  // SETITEM
        NodePtr key, item;
        if (auto failed = Pop(&item)) return failed;
        if (auto failed = Pop(&key)) return failed;
        if (stack_.empty()) return Fail("SETITEM without a dict");
        return AddEntries(Top(), {std::move(key), std::move(item)});
      }
      case 'u': {  // SETITEMS
        std::vector<NodePtr> items;
        if (auto failed = PopToMark(&items)) return failed;
        if (stack_.empty()) return Fail("SETITEMS without a dict");
        return AddEntries(Top(), std::move(items));
      }
      case 'q':
        if (!TakeUnsigned(1, &value)) return Fail("BINPUT runs past the end");
        return Memoize(value);
      case 'r':
        if (!TakeUnsigned(4, &value)) return Fail("LONG_BINPUT runs past the end");
        return Memoize(value);
      case 0x94: return Memoize(memo_.size());  // MEMOIZE
      case 'h':
        if (!TakeUnsigned(1, &value)) return Fail("BINGET runs past the end");
        return Recall(value);
      case 'j':
        if (!TakeUnsigned(4, &value)) return Fail("LONG_BINGET runs past the end");
        return Recall(value);
      case 'c': {  // GLOBAL module\nname\n
        std::string module, name;
        if (auto failed = Line(&module)) return failed;
        if (auto failed = Line(&name)) return failed;
        return Global(std::move(module), std::move(name));
      }
      case 0x93: {  // STACK_GLOBAL
        NodePtr name, module;
        if (auto failed = Pop(&name)) return failed;
        if (auto failed = Pop(&module)) return failed;
        if (module->kind != Node::Kind::kText || name->kind != Node::Kind::kText) return Fail("STACK_GLOBAL of non-strings");
        return Global(module->text, name->text);
      }
      case 'R': {  // REDUCE: only the data wrappers were let in
        NodePtr args, callable;
        if (auto failed = Pop(&args)) return failed;
        if (auto failed = Pop(&callable)) return failed;
        if (callable->kind != Node::Kind::kGlobal || args->kind != Node::Kind::kTuple || args->items.empty()) {
          return Fail("REDUCE of something other than TorchScript's data wrappers");
        }
        return Push(args->items.front());
      }
      case '0': {  // POP
        if (stack_.empty()) return Fail("POP of an empty stack");
        stack_.pop_back();
        return std::nullopt;
      }
      case '1': {  // POP_MARK
        std::vector<NodePtr> dropped;
        return PopToMark(&dropped);
      }
      case '2':  // DUP
        if (stack_.empty()) return Fail("DUP of an empty stack");
        return Push(stack_.back());
      default:
        at_ = opcode_at;
        return Fail(fmt::format("opcode 0x{:02x} is not read (only plain data is)", op));
    }
  }

  Failure ToJson(const Node* node, size_t depth, size_t& budget, nlohmann::json& out) const {
    if (depth > kPickleMaxDepth) return Fail(fmt::format("containers nested more than {} deep", kPickleMaxDepth));
    if (budget == 0) return Fail("the data expands to too many values");
    --budget;
    switch (node->kind) {
      case Node::Kind::kNone: out = nullptr; return std::nullopt;
      case Node::Kind::kBool: out = node->boolean; return std::nullopt;
      case Node::Kind::kInt: out = node->integer; return std::nullopt;
      case Node::Kind::kFloat: out = node->real; return std::nullopt;
      case Node::Kind::kText: out = node->text; return std::nullopt;
      case Node::Kind::kList:
      case Node::Kind::kTuple:
        out = nlohmann::json::array();
        for (const NodePtr& item : node->items) {
          nlohmann::json element;
          if (auto failed = ToJson(item, depth + 1, budget, element)) return failed;
          out.push_back(std::move(element));
        }
        return std::nullopt;
      case Node::Kind::kDict:
        out = nlohmann::json::object();
        for (const auto& [key, item] : node->entries) {
          std::string name;
          if (key->kind == Node::Kind::kText) name = key->text;
          else if (key->kind == Node::Kind::kInt) name = std::to_string(key->integer);
          else if (key->kind == Node::Kind::kBool) name = key->boolean ? "True" : "False";
          else if (key->kind == Node::Kind::kNone) name = "None";
          else return Fail("a dict key that is not a string or a number");
          nlohmann::json element;
          if (auto failed = ToJson(item, depth + 1, budget, element)) return failed;
          out[name] = std::move(element);
        }
        return std::nullopt;
      case Node::Kind::kGlobal: return Fail("a wrapper function left uncalled");
      case Node::Kind::kMark: return Fail("a MARK left on the stack");
    }
    return std::nullopt;
  }

  std::string_view in_;
  const std::string& source_;
  size_t at_ = 0;
  std::vector<std::unique_ptr<Node>> arena_;
  std::vector<NodePtr> stack_;
  std::unordered_map<uint64_t, NodePtr> memo_;
};

}  // namespace

Result<nlohmann::json> ReadPickle(std::string_view bytes, const std::string& source) {
  return Reader(bytes, source).Run();
}

}  // namespace primus
