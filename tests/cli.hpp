// Runs the blis binary of the build for CLI tests: stdout and stderr
// captured separately, and a metrics lookup in the printed report.
#pragma once

#include "catch.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs a shell command line, capturing stdout and stderr.
inline Result run_shell(const std::string& command) {
  static int counter = 0;
  const std::string err_file =
      (std::filesystem::temp_directory_path() / ("blis_cli_err_" + std::to_string(::getpid()) + "_" +
                                                 std::to_string(counter++)))
          .string();
  const std::string cmd = "{ " + command + " ; } 2>" + err_file;
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(err_file);
  r.err.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_file);
  return r;
}

// Runs `blis <args>` (a shell command line: quote as in a shell), in `cwd`
// when given, under `wrapper` (a command prefix such as "timeout 60") when
// given.
inline Result run_blis(const std::string& args, const std::string& cwd = "", const std::string& wrapper = "") {
  return run_shell((cwd.empty() ? "" : "cd '" + cwd + "' && ") + wrapper + (wrapper.empty() ? "" : " ") +
                   BLIS_TEST_STAGE + "/bin/blis " + args);
}

// blis refuses `args`: exit status 2, nothing on stdout, `message` on stderr.
inline Result check_refused(const std::string& args, const std::string& message, const std::string& cwd = "") {
  Result r = run_blis(args, cwd);
  INFO("blis " << args << "\nstderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(message) != std::string::npos);
  return r;
}

// The value of "key" in the first metrics block whose instance_id is `id`.
inline double metric(const std::string& out, const std::string& key, const std::string& id = "cluster") {
  auto at = out.find("\"instance_id\": \"" + id + "\"");
  REQUIRE(at != std::string::npos);
  std::smatch m;
  std::string rest = out.substr(at);
  REQUIRE(std::regex_search(rest, m, std::regex("\"" + key + "\": ([-0-9.e+]+)")));
  return std::stod(m[1]);
}

}  // namespace
