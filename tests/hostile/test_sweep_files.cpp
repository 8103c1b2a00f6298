// Checkpoint journals and shard documents are checked, not trusted (issue 30,
// finding 7): rows of another sweep, edited indices or settings, and indices
// that are not whole numbers are refused; a torn last line is dropped and its
// configuration runs again.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include "run/rows.hpp"

#include <blis/errors.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

using blis::test::TempDir;
namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A sweep whose second configuration needs flaky.lua: absent, it fails and
// leaves a journal holding the first configuration's row.
const char* kSweep = R"(model = "qwen/qwen3-14b"
num-requests = 10
num-instances = 2
[[sweep]]
rate = 1
[[sweep]]
rate = 2
routing-policy = "weighted"
routing-scorers = "flaky.lua:1"
)";

const char* kScorer = "function score(n) for i = 0, n - 1 do scores[i] = i end end\n";

// Runs the sweep once without flaky.lua: returns the journal's text.
std::string broken_journal(const TempDir& dir) {
  fs::remove(dir.str() + "/flaky.lua");
  const Result r = run_blis("run s.toml --jobs 1 --rows-json rows.json", dir.str());
  INFO(r.err);
  REQUIRE(r.status == 2);
  const std::string journal = read(dir.str() + "/rows.json.journal");
  REQUIRE(std::count(journal.begin(), journal.end(), '\n') == 2);  // the header and row 0
  return journal;
}

}  // namespace

TEST_CASE("a checkpoint journal is resumed only by its own sweep", "[hostile][sweep]") {
  TempDir dir;
  dir.write("s.toml", kSweep);
  dir.write("other.toml", std::regex_replace(std::string(kSweep), std::regex("num-requests = 10"), "num-requests = 20"));
  dir.write("moved.toml", std::regex_replace(std::string(kSweep), std::regex("rate = 1"), "rate = 4"));
  const std::string journal_path = dir.str() + "/rows.json.journal";

  dir.write("flaky.lua", kScorer);
  const Result whole = run_blis("run s.toml --jobs 1", dir.str());
  REQUIRE(whole.status == 0);

  SECTION("a sweep whose failed configuration was fixed resumes too") {
    broken_journal(dir);
    dir.write("s.toml", std::regex_replace(std::string(kSweep), std::regex("flaky.lua"), "fixed.lua"));
    dir.write("fixed.lua", kScorer);
    const Result r = run_blis("run s.toml --rows-json rows.json --resume", dir.str());
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("[1/2]") == std::string::npos);
  }
  SECTION("resumed by its own sweep, it runs what is left") {
    broken_journal(dir);
    dir.write("flaky.lua", kScorer);
    const Result r = run_blis("run s.toml --rows-json rows.json --resume", dir.str());
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out == whole.out);
    CHECK_FALSE(fs::exists(journal_path));
  }
  SECTION("a torn last line is dropped and its configuration runs again") {
    const std::string journal = broken_journal(dir);
    write(journal_path, journal + "{\"index\": 1, \"settings\": [[\"rate\", ");
    dir.write("flaky.lua", kScorer);
    const Result r = run_blis("run s.toml --rows-json rows.json --resume", dir.str());
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("the last line was cut short") != std::string::npos);
    CHECK(r.out == whole.out);
  }
  SECTION("a journal of another sweep is refused") {
    broken_journal(dir);
    const Result r = run_blis("run other.toml --rows-json rows.json --resume", dir.str());
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("rows.json.journal:1: is the checkpoint of another sweep") != std::string::npos);
    // So is one whose configuration at a journaled index is another one.
    const Result moved = run_blis("run moved.toml --rows-json rows.json --resume", dir.str());
    CHECK(moved.status == 2);
    CHECK(moved.err.find("rows.json.journal:2: the row of configuration 0 has other settings") != std::string::npos);
    // So is one resumed with other flags that change the results.
    const Result flags = run_blis("run s.toml --rows-json rows.json --resume --seed 7", dir.str());
    CHECK(flags.status == 2);
    CHECK(flags.err.find("is the checkpoint of another sweep") != std::string::npos);
  }
  SECTION("an edited index or settings is refused") {
    const std::string journal = broken_journal(dir);
    write(journal_path, std::regex_replace(journal, std::regex("\"index\": 0"), "\"index\": 1"));
    const Result moved = run_blis("run s.toml --rows-json rows.json --resume", dir.str());
    CHECK(moved.status == 2);
    CHECK(moved.err.find("rows.json.journal:2: the row of configuration 1 has other settings") != std::string::npos);
    for (const char* index : {"1e30", "18446744073709551616", "0.0", "-0", "0e5", "-1"}) {
      write(journal_path, std::regex_replace(journal, std::regex("\"index\": 0"), std::string("\"index\": ") + index));
      const Result r = run_blis("run s.toml --rows-json rows.json --resume", dir.str());
      INFO(index << ": " << r.err);
      CHECK(r.status == 2);
      CHECK(r.err.find("rows.json.journal:2: ") != std::string::npos);
    }
    write(journal_path, "{\"index\": 0, \"settings\": [], \"metrics\": []}\n");
    const Result headless = run_blis("run s.toml --rows-json rows.json --resume", dir.str());
    CHECK(headless.status == 2);
    CHECK(headless.err.find("not the checkpoint of a blis sweep") != std::string::npos);
  }
}

TEST_CASE("blis merge takes shards of one sweep with whole-number indices only", "[hostile][sweep]") {
  TempDir dir;
  dir.write("flaky.lua", kScorer);
  dir.write("s.toml", kSweep);
  dir.write("other.toml", std::regex_replace(std::string(kSweep), std::regex("rate = 2"), "rate = 3"));
  for (const char* shard : {"0", "1"}) {
    REQUIRE(run_blis(std::string("run s.toml --shard ") + shard + "/2 > s" + shard + ".json", dir.str()).status == 0);
    REQUIRE(run_blis(std::string("run other.toml --shard ") + shard + "/2 > o" + shard + ".json", dir.str()).status ==
            0);
  }
  CHECK(read(dir.str() + "/s0.json").find("\"sweep\": \"fnv1a64:") != std::string::npos);
  const Result ok = run_blis("merge s0.json s1.json", dir.str());
  REQUIRE(ok.status == 0);
  CHECK(ok.out == run_blis("run s.toml", dir.str()).out);

  const Result mixed = run_blis("merge s0.json o1.json", dir.str());
  CHECK(mixed.status == 2);
  CHECK(mixed.err.find("o1.json: is a shard of") != std::string::npos);

  const std::string shard1 = read(dir.str() + "/s1.json");
  for (const char* index : {"1e30", "18446744073709551616", "0.0", "-0", "0e5"}) {
    write(dir.str() + "/bad.json", std::regex_replace(shard1, std::regex("\"index\": 1"), std::string("\"index\": ") + index));
    const Result r = run_blis("merge s0.json bad.json", dir.str());
    INFO(index << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("bad.json") != std::string::npos);
  }
}

TEST_CASE("a shard report whose fields have the wrong types is refused as a configuration error", "[hostile][sweep]") {
  // fuzz/sweep_rows: a scenario that is not a text escaped as nlohmann's
  // type_error (an internal failure, exit 1) instead of a ConfigError.
  TempDir dir;
  const std::string tail = R"(, "sweep": "fnv1a64:0123456789abcdef", "shard": "1/2", "configurations": 4, "rows": []})";
  for (const char* scenario : {"5", "null", "[]", "{}", "true"}) {
    const std::string path = dir.write("bad.json", std::string(R"({"scenario": )") + scenario + tail);
    blis::ShardRows rows;
    INFO(scenario);
    CHECK_THROWS_AS(blis::read_shard_document(path, rows), blis::ConfigError);
  }
  const std::string ok = dir.write("ok.json", std::string(R"({"scenario": "s.toml")") + tail);
  blis::ShardRows rows;
  blis::read_shard_document(ok, rows);
  CHECK(rows.scenario == "s.toml");
  CHECK(rows.total == 4);
}
