#include "config/yaml_loader.h"

#include <stdlib.h>

#include <memory>

#include "config/merge.h"
#include "config/yaml_parser.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::config {
namespace {

// "a/./b/../c.yaml" -> "a/c.yaml", purely lexical, so that paths in messages
// read the way a user would write them.
std::string NormalizePath(const std::string& path) {
  bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string> parts;
  for (const std::string& part : Split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else if (part != ".." || !absolute) {
      parts.push_back(part);
    }
  }
  std::string joined = Join(parts, "/");
  if (absolute) return "/" + joined;
  return joined.empty() ? "." : joined;
}

// Two names of one file (relative and absolute, via a symlink) are the same
// file for cycle detection.
std::string FileIdentity(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> resolved(realpath(path.c_str(), nullptr), &free);
  return resolved ? std::string(resolved.get()) : NormalizePath(path);
}

class ExtendsLoader {
 public:
  explicit ExtendsLoader(const Environment& env) : env_(env) {}

  Result<Value> LoadText(std::string_view text, const std::string& display_name,
                         const std::string& identity) {
    std::vector<std::string> chain;
    for (const OpenFile& file : open_files_) chain.push_back(file.display_name);
    YamlParseOptions options{display_name, chain, &env_};
    Result<Value> parsed = ParseYaml(text, options);
    if (!parsed.ok()) return parsed;
    Value own = std::move(*parsed);
    if (own.IsNull()) own = Value::EmptyMap(own.origin());
    if (!own.IsMap()) {
      return ConfigErrorAt(own.origin(),
                           "expected a map of settings at the top level, found " +
                               own.DescribeForMessage(),
                           "a configuration file looks like 'key: value' lines");
    }

    std::vector<Value> bases;
    if (const Value* extends = own.Get("extends")) {
      Result<std::vector<Value>> entries = ExtendsEntries(*extends);
      if (!entries.ok()) return entries.error();
      open_files_.push_back({display_name, identity});
      for (const Value& entry : *entries) {
        Result<Value> base = LoadBase(entry, display_name);
        if (!base.ok()) return base;
        bases.push_back(std::move(*base));
      }
      open_files_.pop_back();
      own.Remove("extends");
    }

    Value merged;
    for (const Value& base : bases) merged = Merge(merged, base);
    return Merge(merged, own);
  }

 private:
  struct OpenFile {
    std::string display_name;
    std::string identity;
  };

  static Result<std::vector<Value>> ExtendsEntries(const Value& extends) {
    std::vector<Value> entries;
    if (extends.IsNull()) return entries;
    if (extends.IsString()) return std::vector<Value>{extends};
    if (extends.IsList()) {
      for (const Value& entry : extends.AsList()) {
        if (!entry.IsString()) {
          return ConfigErrorAt(entry.origin(),
                               "extends: expected a file path, found " + entry.DescribeForMessage(),
                               "write extends: base.yaml or extends: [a.yaml, b.yaml]");
        }
        entries.push_back(entry);
      }
      return entries;
    }
    return ConfigErrorAt(extends.origin(),
                         "extends: expected a file path or a list of paths, found " +
                             extends.DescribeForMessage(),
                         "write extends: base.yaml or extends: [a.yaml, b.yaml]");
  }

  Result<Value> LoadBase(const Value& entry, const std::string& including_file) {
    const std::string& named = entry.AsString();
    std::string path = NormalizePath(JoinPath(DirName(including_file), named));
    std::string identity = FileIdentity(path);
    for (size_t i = 0; i < open_files_.size(); ++i) {
      if (open_files_[i].identity != identity) continue;
      std::vector<std::string> cycle;
      for (size_t j = i; j < open_files_.size(); ++j) cycle.push_back(open_files_[j].display_name);
      cycle.push_back(path);
      return ConfigErrorAt(entry.origin(), "extends cycle: " + Join(cycle, " -> "),
                           "remove one of these extends: entries");
    }
    if (!PathExists(path)) {
      return ConfigErrorAt(entry.origin(),
                           "extends: cannot find '" + named + "' (looked for " + path + ")",
                           "paths in extends: are relative to the directory of the file naming "
                           "them (" + DirName(including_file) + ")");
    }
    Result<std::string> text = ReadRegularFile(path, kMaxConfigFileBytes);
    if (!text.ok()) {
      return ConfigErrorAt(entry.origin(), "extends: " + text.error().message,
                           text.error().hint.empty() ? "a configuration file is a regular file of at most 64 MiB"
                                                     : text.error().hint);
    }
    return LoadText(*text, path, identity);
  }

  const Environment& env_;
  std::vector<OpenFile> open_files_;  // the extends stack, outermost first
};

}  // namespace

Result<Value> LoadYamlFile(const std::string& path, const Environment& env) {
  Result<std::string> text = ReadRegularFile(path, kMaxConfigFileBytes);
  if (!text.ok()) {
    if (!text.error().hint.empty()) return ConfigError(text.error().message, text.error().hint);
    return ConfigError(text.error().message, "check the path; relative paths start at the current "
                                             "directory (" + CurrentDir() + "); a configuration file "
                                             "is a regular file of at most 64 MiB");
  }
  return ExtendsLoader(env).LoadText(*text, path, FileIdentity(path));
}

Result<Value> LoadYamlString(std::string_view text, const std::string& display_name,
                             const Environment& env) {
  return ExtendsLoader(env).LoadText(text, display_name, FileIdentity(display_name));
}

}  // namespace primus::config
