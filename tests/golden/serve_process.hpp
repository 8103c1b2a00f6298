// A `blis serve` process for the tests that speak to one (test_cli_serve,
// test_cli_observe): started on a free port, stopped at the end.
#pragma once

#include "catch.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace blis_test {

// A `blis serve` process: started with `args`, its port read from the
// "listening on" line of its stderr.
class ServeProcess {
 public:
  explicit ServeProcess(const std::string& args) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      const std::string cmd = "exec " + std::string(BLIS_TEST_STAGE) + "/bin/blis serve " + args;
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    err_ = ::fdopen(fds[0], "r");
    char line[4096];
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    while (std::fgets(line, sizeof line, err_) != nullptr) {
      stderr_ += line;
      std::smatch m;
      const std::string l(line);
      if (std::regex_search(l, m, listening)) {
        port_ = static_cast<unsigned short>(std::stoi(m[1]));
        break;
      }
    }
    INFO(stderr_);
    REQUIRE(port_ != 0);
  }
  ~ServeProcess() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (err_ != nullptr) std::fclose(err_);
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  unsigned short port() const { return port_; }
  // SIGTERM, then the exit status (-1: killed by a signal or still running after 20 s).
  int terminate() {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 200; ++i) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        waited_ = true;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* err_ = nullptr;
  std::string stderr_;
  unsigned short port_ = 0;
  bool waited_ = false;
};

}  // namespace blis_test
