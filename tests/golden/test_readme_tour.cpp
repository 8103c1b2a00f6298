// Every command of the README's tour runs as written (issue 32), after the
// README's build: in a scratch folder that sees the repository's examples/
// and scripts/ and the build's build/ as the top folder would, with
// build/stage/bin first on PATH. A command whose comment says `placeholder`
// names something blis does not ship and is skipped. A server (`blis serve`)
// runs until stopped: it is stopped by SIGINT after 3 s and must exit 0.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

// The commands of the first ```sh block after "## A tour", continuation
// lines joined.
std::vector<std::string> tour_commands() {
  std::ifstream in(fs::path(BLIS_TEST_SOURCE_DIR) / "README.md");
  std::string line, command;
  bool in_tour = false, in_block = false;
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    if (line == "## A tour") in_tour = true;
    if (!in_tour) continue;
    if (!in_block) {
      in_block = line == "```sh";
      continue;
    }
    if (line == "```") break;
    command += line;
    if (!command.empty() && command.back() == '\\') {
      command.pop_back();
      continue;
    }
    out.push_back(command);
    command.clear();
  }
  return out;
}

}  // namespace

TEST_CASE("README tour: every command runs as written", "[golden][readme]") {
  const std::vector<std::string> commands = tour_commands();
  REQUIRE(commands.size() >= 58);
  blis::test::TempDir dir("blis-tour");
  const fs::path stage(BLIS_TEST_STAGE);
  fs::create_directory_symlink(fs::path(BLIS_TEST_SOURCE_DIR) / "examples", dir.str() + "/examples");
  fs::create_directory_symlink(fs::path(BLIS_TEST_SOURCE_DIR) / "scripts", dir.str() + "/scripts");
  fs::create_directory_symlink(stage.parent_path(), dir.str() + "/build");
  int placeholders = 0;
  for (const std::string& command : commands) {
    const auto comment = command.find(" # ");
    if (comment != std::string::npos && command.find("placeholder", comment) != std::string::npos) {
      ++placeholders;
      continue;
    }
    const std::string script = dir.write("command.sh", "set -o pipefail\n" + command + "\n");
    // A server alone is stopped after 3 s; one the line stops itself (`kill $!`) runs to its end.
    const bool server = command.rfind("blis serve ", 0) == 0 && command.find("kill $!") == std::string::npos;
    const Result r = run_shell("cd '" + dir.str() + "' && PATH='" + stage.string() + "/bin':\"$PATH\" " +
                               (server ? "timeout --preserve-status -s INT 3" : "timeout 300") + " bash " + script +
                               " > /dev/null");
    INFO(command << "\nstderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("error") == std::string::npos);
  }
  // Placeholders are deliberate: a new one must be counted here.
  CHECK(placeholders == 1);
}
