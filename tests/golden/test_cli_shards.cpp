// Sweeps beyond one process: shards merged into exactly the unsharded report,
// and a stopped sweep resumed from its checkpoint journal.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <string>

using blis::test::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a sweep run as 4 shards and merged prints exactly what --jobs 1 prints", "[cli][scenario]") {
  TempDir dir;
  const std::string sweep = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/routing-comparison/routing.toml";
  const Result full = run_blis("run " + sweep + " --jobs 1");
  REQUIRE(full.status == 0);
  std::string files;
  for (int i = 0; i < 4; ++i) {
    const std::string f = dir.str() + "/rows-" + std::to_string(i) + ".json";
    const Result shard = run_blis("run " + sweep + " --shard " + std::to_string(i) + "/4 --rows-json " + f);
    REQUIRE(shard.status == 0);
    CHECK(shard.out == slurp(f));
    files += " " + f;
  }
  const std::string csv = dir.str() + "/merged.csv";
  const Result merged = run_blis("merge" + files + " --rows-csv " + csv);
  REQUIRE(merged.status == 0);
  CHECK(merged.out == full.out);
  CHECK(slurp(csv).rfind("routing_policy,", 0) == 0);
  // A missing shard is named, never silently dropped.
  const Result partial = run_blis("merge " + dir.str() + "/rows-0.json " + dir.str() + "/rows-1.json");
  CHECK(partial.status == 2);
  CHECK(partial.out.empty());
  CHECK(partial.err.find("2 of the 5 configurations") != std::string::npos);
  check_refused("run " + sweep + " --shard 4/4", "'4/4' is not a shard");
}

TEST_CASE("a stopped sweep resumes from its journal and finishes the rest", "[cli][scenario]") {
  TempDir dir;
  const std::string path = dir.write("s.toml", "num-requests = 50\n"
                                               "[[sweep]]\nmodel = \"qwen/qwen3-14b\"\nrate = 5\n"
                                               "[[sweep]]\nmodel = \"qwen/qwen3-14b\"\nrate = 10\n"
                                               "[[sweep]]\nmodel = \"no-such/model\"\nrate = 20\n");
  const std::string rows = dir.str() + "/rows.json";
  // The third configuration fails: the first two stay in the journal.
  const Result stopped = run_blis("run " + path + " --rows-json " + rows);
  CHECK(stopped.status == 2);
  CHECK_FALSE(std::filesystem::exists(rows));
  CHECK(slurp(rows + ".journal").find("\"index\": 1,") != std::string::npos);
  // Fixed, resumed: only the third runs, and the report is the whole sweep's.
  dir.write("s.toml", slurp(path).replace(slurp(path).find("no-such/model"), 13, "qwen/qwen3-14b"));
  const Result resumed = run_blis("run " + path + " --rows-json " + rows + " --resume");
  REQUIRE(resumed.status == 0);
  CHECK(resumed.err.find("[3/3] ") != std::string::npos);
  CHECK(resumed.err.find("[1/3] ") == std::string::npos);
  CHECK(resumed.out == run_blis("run " + path).out);
  CHECK(slurp(rows) == resumed.out);
  CHECK_FALSE(std::filesystem::exists(rows + ".journal"));
}

TEST_CASE("a sweep killed with SIGKILL resumes and prints the whole sweep's report", "[cli][scenario]") {
  TempDir dir;
  std::string text = "model = \"qwen/qwen3-14b\"\nnum-requests = 4000\n";
  for (int rate = 10; rate <= 80; rate += 10) text += "[[sweep]]\nrate = " + std::to_string(rate) + "\n";
  const std::string path = dir.write("s.toml", text);
  const std::string rows = dir.str() + "/rows.csv";
  const std::string blis = std::string(BLIS_TEST_STAGE) + "/bin/blis";
  // Killed as soon as the first row is checkpointed (after the journal's header): no chance to clean up.
  const Result killed = run_shell("( " + blis + " run " + path + " --rows-csv " + rows +
                                  " >/dev/null 2>&1 & pid=$!; for i in $(seq 1 1200); do "
                                  "if grep -q index " + rows + ".journal 2>/dev/null; then kill -9 $pid; break; fi; "
                                  "sleep 0.02; done; wait $pid; echo $? )");
  CHECK(killed.out == "137\n");  // 128 + SIGKILL
  CHECK_FALSE(std::filesystem::exists(rows));
  const std::string journal = slurp(rows + ".journal");
  REQUIRE_FALSE(journal.empty());
  const Result resumed = run_blis("run " + path + " --rows-csv " + rows + " --resume");
  REQUIRE(resumed.status == 0);
  CHECK(resumed.err.find("[8/8] ") != std::string::npos);
  CHECK(resumed.err.find("[1/8] ") == std::string::npos);  // checkpointed before the kill
  const Result whole = run_blis("run " + path + " --rows-csv " + dir.str() + "/whole.csv");
  CHECK(resumed.out == whole.out);
  CHECK(slurp(rows) == slurp(dir.str() + "/whole.csv"));
  CHECK_FALSE(std::filesystem::exists(rows + ".journal"));
}
