#include "util/log.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <regex>

namespace primus::log {
namespace {

TEST(LogTest, LineHasTimeHostLevelAndMessage) {
  std::string line = FormatLine(Level::kWarn, "disk almost full");
  std::regex shape(R"(^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[[^\]]+\] \[WARN\] disk almost full\n$)");
  EXPECT_TRUE(std::regex_match(line, shape)) << line;
  EXPECT_NE(line.find("[" + HostName() + "]"), std::string::npos);
}

TEST(LogTest, LevelsFilter) {
  Level saved = GetLevel();
  SetLevel(Level::kWarn);
  EXPECT_FALSE(Enabled(Level::kInfo));
  EXPECT_TRUE(Enabled(Level::kError));
  SetLevel(saved);
}

TEST(LogTest, ParseLevelAcceptsKnownNamesOnly) {
  Level level;
  EXPECT_TRUE(ParseLevel("warning", &level));
  EXPECT_EQ(level, Level::kWarn);
  EXPECT_FALSE(ParseLevel("verbose", &level));
}

// What Write puts on stderr, captured through a temporary file.
std::string Written(Level level, std::string_view message) {
  char path[] = "/tmp/primus-log-test-XXXXXX";
  int file = mkstemp(path);
  int saved = dup(STDERR_FILENO);
  dup2(file, STDERR_FILENO);
  SetColor(false);
  Write(level, message);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string text(4096, '\0');
  ssize_t n = pread(file, text.data(), text.size(), 0);
  close(file);
  unlink(path);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

TEST(LogTest, MessagesCannotDriveTheTerminalAndPassTheFilter) {
  std::string line = Written(Level::kError, "unknown task 'x\x1b[2J\rfake'\nsecond line\tkept");
  EXPECT_NE(line.find("unknown task 'x\\x1b[2J\\rfake'\nsecond line\tkept\n"), std::string::npos) << line;
  SetMessageFilter([](std::string_view message) { return std::string(message) + " (filtered)"; });
  line = Written(Level::kError, "hello");
  SetMessageFilter(nullptr);
  EXPECT_NE(line.find("hello (filtered)\n"), std::string::npos) << line;
}

}  // namespace
}  // namespace primus::log
