#include "agent/output_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <thread>
#include <regex>

#include "agent/agent_test_util.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

// One worker's two pipes feeding a log file and a console file.
class OutputStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-output-XXXXXX";
    dir_ = mkdtemp(pattern);
    console_fd_ = ::open((dir_ + "/console").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    console_ = std::make_unique<ConsoleSink>(console_fd_);
    auto log = RankLog::Open(dir_ + "/rank0.log");
    ASSERT_TRUE(log.ok());
    log_ = std::make_unique<RankLog>(std::move(*log));
    ASSERT_TRUE(io::MakePipe(&out_pipe_) && io::MakePipe(&err_pipe_));
    out_ = std::make_unique<OutputStream>(std::move(out_pipe_.read), 'O', log_.get(), console_.get(), "[h:0] ");
    err_ = std::make_unique<OutputStream>(std::move(err_pipe_.read), 'E', log_.get(), console_.get(), "[h:0e] ");
    scratch_.reset(new char[OutputStream::kReadSize]);
  }
  void TearDown() override {
    ::close(console_fd_);
    std::filesystem::remove_all(dir_);
  }

  void Write(io::PipeEnds& pipe, std::string_view data) { ASSERT_TRUE(io::WriteAll(pipe.write.get(), data.data(), data.size())); }
  // Reads everything available from `stream`, flushing like the supervisor.
  void Pump(OutputStream& stream) {
    while (stream.ReadOnce(scratch_.get(), stamp_) == OutputStream::ReadStatus::kData) log_->Flush();
    console_->Flush();
  }
  void CloseAndFinish() {
    out_pipe_.write.Reset();
    err_pipe_.write.Reset();
    for (OutputStream* stream : {out_.get(), err_.get()}) {
      while (stream->ReadOnce(scratch_.get(), stamp_) == OutputStream::ReadStatus::kData) log_->Flush();
      EXPECT_EQ(stream->ReadOnce(scratch_.get(), stamp_), OutputStream::ReadStatus::kEof);
      stream->Finish(stamp_);
    }
    log_->Flush();
    console_->Flush();
  }
  std::string LogText() { return *ReadFile(dir_ + "/rank0.log"); }
  std::string ConsoleText() { return *ReadFile(dir_ + "/console"); }
  // Log lines without their stamps ("O text").
  std::vector<std::string> LogLines() {
    std::vector<std::string> lines = Split(LogText(), '\n');
    lines.pop_back();
    for (std::string& line : lines) {
      EXPECT_GE(line.size(), LineStamp::kLength + 3);
      line = line.substr(LineStamp::kLength + 1);
    }
    return lines;
  }

  std::string dir_;
  int console_fd_ = -1;
  std::unique_ptr<ConsoleSink> console_;
  std::unique_ptr<RankLog> log_;
  io::PipeEnds out_pipe_, err_pipe_;
  std::unique_ptr<OutputStream> out_, err_;
  std::unique_ptr<char[]> scratch_;
  LineStamp stamp_;
};

TEST_F(OutputStreamTest, LinesKeepArrivalOrderWithStampsAndMarkers) {
  Write(out_pipe_, "step 1\n");
  Pump(*out_);
  Write(err_pipe_, "warning: slow\n");
  Pump(*err_);
  Write(out_pipe_, "step 2\nstep 3\n");
  Pump(*out_);
  CloseAndFinish();
  std::vector<std::string> expected = {"O step 1", "E warning: slow", "O step 2", "O step 3"};
  EXPECT_EQ(LogLines(), expected);
  std::regex stamped(R"((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6} [OE] .*\n)+)");
  EXPECT_TRUE(std::regex_match(LogText(), stamped)) << LogText();
  EXPECT_EQ(ConsoleText(), "[h:0] step 1\n[h:0e] warning: slow\n[h:0] step 2\n[h:0] step 3\n");
}

TEST_F(OutputStreamTest, PartialLinesWaitForTheirEnd) {
  Write(out_pipe_, "half of a ");
  Pump(*out_);
  Write(err_pipe_, "other stream\n");
  Pump(*err_);
  EXPECT_EQ(ConsoleText(), "[h:0e] other stream\n");
  Write(out_pipe_, "line\n");
  Pump(*out_);
  EXPECT_EQ(ConsoleText(), "[h:0e] other stream\n[h:0] half of a line\n");
}

TEST_F(OutputStreamTest, LinesLongerThan64KiBStayWhole) {
  std::string huge(1 << 20, 'x');  // 1 MiB: several reads, several pipe fills
  huge[12345] = 'y';
  std::string sent = "before\n" + huge + "\nafter\n";
  std::thread writer([&] { Write(out_pipe_, sent); });
  while (ConsoleText().find("after") == std::string::npos) {
    Pump(*out_);
  }
  writer.join();
  CloseAndFinish();
  EXPECT_EQ(ConsoleText(), "[h:0] before\n[h:0] " + huge + "\n[h:0] after\n");
  std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "O " + huge);
}

TEST_F(OutputStreamTest, OutputWithoutFinalNewlineIsFlushedAtEof) {
  Write(out_pipe_, "done 100%");
  Pump(*out_);
  EXPECT_EQ(ConsoleText(), "");
  CloseAndFinish();
  EXPECT_EQ(ConsoleText(), "[h:0] done 100%\n");
  EXPECT_EQ(LogLines(), std::vector<std::string>{"O done 100%"});
}

TEST_F(OutputStreamTest, BinaryBytesPassThroughUntouched) {
  std::string binary("\x00\x01\xff\r\x1b[31m\xc3\x28 tail", 15);
  Write(err_pipe_, binary + "\n");
  CloseAndFinish();
  EXPECT_EQ(ConsoleText(), "[h:0e] " + binary + "\n");
  EXPECT_NE(LogText().find("E " + binary + "\n"), std::string::npos);
}

TEST_F(OutputStreamTest, FilteredRankWritesTheFileOnly) {
  io::PipeEnds pipe;
  ASSERT_TRUE(io::MakePipe(&pipe));
  OutputStream filtered(std::move(pipe.read), 'O', log_.get(), nullptr, "[h:1] ");
  Write(pipe, "only in the file\n");
  pipe.write.Reset();
  EXPECT_EQ(filtered.ReadOnce(scratch_.get(), stamp_), OutputStream::ReadStatus::kData);
  log_->Flush();
  console_->Flush();
  EXPECT_EQ(ConsoleText(), "");
  EXPECT_NE(LogText().find("O only in the file\n"), std::string::npos);
}

TEST(RankLogTest, BusyLogReservesAheadAndGivesTheSpaceBack) {
  testing::ScopedTempDir dir("ranklog");
  std::string path = dir.path() + "/rank.log";
  std::string chunk(300 * 1024, 'x');
  {
    auto log = RankLog::Open(path);
    ASSERT_TRUE(log.ok());
    for (int i = 0; i < 10; ++i) {  // 3 MB: past the 1 MiB threshold
      log->buffer().Append(chunk);
      log->Flush();
    }
    struct stat open_info;
    ASSERT_EQ(::stat(path.c_str(), &open_info), 0);
    EXPECT_EQ(open_info.st_size, 10 * static_cast<off_t>(chunk.size()));
  }
  struct stat closed;
  ASSERT_EQ(::stat(path.c_str(), &closed), 0);
  EXPECT_EQ(closed.st_size, 10 * static_cast<off_t>(chunk.size()));
  EXPECT_LE(closed.st_blocks * 512, closed.st_size + 4096);  // nothing reserved past the end
}

TEST(ConsoleSinkTest, DevNullIsInactive) {
  int null_fd = ::open("/dev/null", O_WRONLY);
  EXPECT_FALSE(ConsoleSink(null_fd).active());
  ::close(null_fd);
  io::PipeEnds pipe;
  ASSERT_TRUE(io::MakePipe(&pipe));
  EXPECT_TRUE(ConsoleSink(pipe.write.get()).active());
}

TEST(ConsoleSinkTest, BrokenConsoleStopsQuietly) {
  io::PipeEnds pipe;
  ASSERT_TRUE(io::MakePipe(&pipe));
  pipe.read.Reset();
  signal(SIGPIPE, SIG_IGN);
  ConsoleSink console(pipe.write.get());
  console.buffer().Append("line\n");
  console.Flush();
  EXPECT_FALSE(console.active());
  signal(SIGPIPE, SIG_DFL);
}

}  // namespace
}  // namespace primus::agent
