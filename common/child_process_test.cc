#include "etwh/child_process.h"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

etwh::ChildOptions sh(const std::string& script) {
  etwh::ChildOptions o;
  o.executable = "/bin/sh";
  o.args = {"-c", script};
  return o;
}

std::string read_all(asio::readable_pipe& pipe) {
  std::string text;
  boost::system::error_code ec;
  asio::read(pipe, asio::dynamic_buffer(text), ec);
  return text;
}

// True once `pid` no longer runs (gone, or a zombie its new parent has not reaped yet).
bool gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (!stat || paren == std::string::npos || paren + 2 >= text.size()) return true;
  const char state = text[paren + 2];
  return state == 'Z' || state == 'X';
}

bool gone_within(int pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!gone(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::set<std::string> open_fds(int pid) {
  std::set<std::string> fds;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    fds.insert(e.path().filename().string());
  }
  return fds;
}

TEST(ChildProcess, ReportsTheExitCode) {
  asio::io_context io;
  etwh::ChildProcess child(io, sh("exit 3"));
  const etwh::ExitStatus s = child.wait();
  EXPECT_FALSE(s.signaled);
  EXPECT_EQ(s.code, 3);
  EXPECT_FALSE(s.success());
  EXPECT_EQ(s.describe(), "exited with code 3");
}

TEST(ChildProcess, ReportsTheSignalThatEndedIt) {
  asio::io_context io;
  etwh::ChildProcess child(io, sh("kill -TERM $$; sleep 5"));
  const etwh::ExitStatus s = child.wait();
  EXPECT_TRUE(s.signaled);
  EXPECT_EQ(s.signal, SIGTERM);
  EXPECT_EQ(s.describe(), "killed by signal 15 (SIGTERM)");
}

TEST(ChildProcess, WaitForGivesUpAtItsDeadlineAndKillEndsTheChild) {
  asio::io_context io;
  etwh::ChildProcess child(io, sh("exec sleep 10"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(child.wait_for(150ms).has_value());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 150ms);
  EXPECT_LT(waited, 2s);
  child.kill();
  const auto s = child.wait_for(2s);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->signaled);
  EXPECT_EQ(s->signal, SIGKILL);
  child.kill();  // after the reap: must not signal anything
}

TEST(ChildProcess, TerminateSendsSigterm) {
  asio::io_context io;
  etwh::ChildProcess child(io, sh("exec sleep 10"));
  child.terminate();
  const etwh::ExitStatus s = child.wait();
  EXPECT_TRUE(s.signaled);
  EXPECT_EQ(s.signal, SIGTERM);
}

TEST(ChildProcess, TalksThroughItsPipes) {
  asio::io_context io;
  etwh::ChildProcess child(io, sh("read x; echo \"got $x\"; echo oops >&2"));
  asio::write(child.stdin_pipe(), asio::buffer(std::string("hello\n")));
  child.stdin_pipe().close();
  EXPECT_EQ(read_all(child.stdout_pipe()), "got hello\n");
  EXPECT_EQ(read_all(child.stderr_pipe()), "oops\n");
  EXPECT_TRUE(child.wait().success());
}

TEST(ChildProcess, WritesStdoutAndStderrToTheLogFile) {
  const fs::path log =
      fs::temp_directory_path() / ("child_process_test_" + std::to_string(getpid()) + ".log");
  { std::ofstream(log) << "old content that must go\n"; }
  asio::io_context io;
  etwh::ChildOptions o = sh("echo out; echo err >&2; read x || echo eof");
  o.log_file = log;
  o.stdin_mode = etwh::Stdio::kNull;
  etwh::ChildProcess child(io, o);
  EXPECT_TRUE(child.wait().success());
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "out\nerr\neof\n");
  fs::remove(log);
}

TEST(ChildProcess, AddsAndOverridesEnvironmentVariables) {
  asio::io_context io;
  etwh::ChildOptions o =
      sh("echo \"$ETWH_CHILD_TEST_A $HOME\"; command -v sh >/dev/null && echo path");
  o.env = {{"ETWH_CHILD_TEST_A", "added"}, {"HOME", "/overridden"}};
  etwh::ChildProcess child(io, o);
  EXPECT_EQ(read_all(child.stdout_pipe()), "added /overridden\npath\n");
  EXPECT_TRUE(child.wait().success());
}

TEST(ChildProcess, ThrowsWhenTheExecutableCannotStart) {
  asio::io_context io;
  etwh::ChildOptions o;
  o.executable = "/nonexistent/etwh-no-such-program";
  try {
    etwh::ChildProcess child(io, o);
    FAIL() << "started a program that does not exist";
  } catch (const etwh::ChildProcessError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/etwh-no-such-program"), std::string::npos);
  }
}

// A line from the child's stdout (the pipe, a byte at a time: nothing read past it).
std::string read_line(asio::readable_pipe& pipe) {
  std::string line;
  for (char c; line.find('\n') == std::string::npos;) {
    asio::read(pipe, asio::buffer(&c, 1));
    line += c;
  }
  return line;
}

// The child's descriptors are read from outside (/proc/<pid>/fd): a child listing its own
// would see the descriptor it reads the listing with. Each child is a shell that has said
// "ready" and waits in `read`: past its dynamic loader, which holds each library it maps open
// as fd 3 for a moment (a program just exec'd shows that fd now and then).
TEST(ChildProcess, InheritsNoDescriptorButStdio) {
  // Descriptors a careless parent leaves inheritable, and a sibling with its pipes.
  const int leaked_file = ::open("/dev/null", O_RDONLY);
  int leaked_pipe[2];
  ASSERT_EQ(::pipe(leaked_pipe), 0);
  asio::io_context io;
  etwh::ChildProcess sibling(io, sh("echo ready; while read line; do :; done"));
  etwh::ChildProcess child(io, sh("echo ready; read line || :"));
  EXPECT_EQ(read_line(sibling.stdout_pipe()), "ready\n");
  EXPECT_EQ(read_line(child.stdout_pipe()), "ready\n");
  EXPECT_EQ(open_fds(child.pid()), (std::set<std::string>{"0", "1", "2"}));
  // The sibling holds no end of its own stdin pipe either: closing ours is its EOF.
  EXPECT_EQ(open_fds(sibling.pid()), (std::set<std::string>{"0", "1", "2"}));
  sibling.stdin_pipe().close();
  const auto s = sibling.wait_for(2s);
  ASSERT_TRUE(s.has_value()) << "the sibling never saw the end of its input";
  EXPECT_TRUE(s->success());
  child.stdin_pipe().close();
  EXPECT_TRUE(child.wait().success());
  ::close(leaked_file);
  ::close(leaked_pipe[0]);
  ::close(leaked_pipe[1]);
}

TEST(ChildProcess, KillInItsOwnGroupEndsWhatTheChildStarted) {
  asio::io_context io;
  etwh::ChildOptions o = sh("sleep 30 & echo $!; wait");
  o.own_process_group = true;
  etwh::ChildProcess child(io, o);
  const int grandchild = std::stoi(read_line(child.stdout_pipe()));
  child.kill();
  EXPECT_TRUE(child.wait().signaled);
  EXPECT_TRUE(gone_within(grandchild, 1s)) << "the shell's sleep " << grandchild << " survived";
}

// The parent-death signal: a process that spawns a child and dies takes the child with it.
TEST(ChildProcess, EndsWhenItsParentDies) {
  asio::io_context io;
  etwh::ChildOptions o;
  o.executable = fs::read_symlink("/proc/self/exe");
  o.args = {"--spawn-sleep-and-die"};
  etwh::ChildProcess parent(io, o);
  const std::string text = read_all(parent.stdout_pipe());
  ASSERT_FALSE(text.empty()) << "the helper printed no pid";
  const int orphan = std::stoi(text);
  EXPECT_EQ(parent.wait().code, 0);
  EXPECT_TRUE(gone_within(orphan, 1s)) << "child " << orphan << " outlived its parent";
  if (!gone(orphan)) ::kill(orphan, SIGKILL);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--spawn-sleep-and-die") == 0) {
    // Helper for EndsWhenItsParentDies: start a long child, say its pid, die without a word.
    asio::io_context io;
    etwh::ChildOptions o = sh("exec sleep 30");
    o.stdout_mode = etwh::Stdio::kNull;
    auto* child = new etwh::ChildProcess(io, o);  // never destroyed: that would kill it
    std::cout << child->pid() << std::endl;
    std::_Exit(0);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
