// Hostile scenario files (issue 30, findings 2 and 9): whatever route a
// scenario takes to name a native library, nothing of it is loaded, and it
// writes nowhere outside the current directory, symlinks followed. The rule
// lives in core/src/run/path_rules.hpp; these tests hold its reproducers.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include "run/path_rules.hpp"

#include <blis/settings.hpp>

#include <cstdlib>
#include <filesystem>

namespace {

using blis::test::TempDir;
namespace fs = std::filesystem;

const std::string kMarker = std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-marks-on-load.so";

// Runs blis with BLIS_TEST_LOAD_MARK set to `mark`: the fixture library
// writes that file as soon as anything opens it.
Result run_marked(const std::string& args, const std::string& mark, const std::string& cwd) {
  return run_blis(args, cwd, "env BLIS_TEST_LOAD_MARK='" + mark + "'");
}

}  // namespace

TEST_CASE("no route of a scenario file loads a native library", "[hostile][trust]") {
  TempDir dir;
  const std::string mark = dir.str() + "/loaded";
  const std::string policy_yaml =
      dir.write("policy.yaml", "pools:\n  - {name: evil, count: 1, latency_model: \"" + kMarker + "\"}\n");
  const std::string policy_toml =
      dir.write("policy.toml", "[[pools]]\nname = \"evil\"\ncount = 1\nlatency-model = \"" + kMarker + "\"\n");
  const std::pair<std::string, std::string> routes[] = {
      {"pools.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\n[[pools]]\nname = \"evil\"\ncount = 1\n"
                     "latency-model = \"" + kMarker + "\"\n"},
      {"pools.lua", "return { model = 'qwen/qwen3-14b', num_requests = 5,\n"
                    "  pools = {{ name = 'evil', count = 1, latency_model = '" + kMarker + "' }} }\n"},
      {"policy-yaml.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\npolicy-config = \"policy.yaml\"\n"},
      {"policy-toml.lua", "return { model = 'qwen/qwen3-14b', num_requests = 5, policy_config = 'policy.toml' }\n"},
      {"search.lua", "return { model = 'qwen/qwen3-14b', num_requests = 5,\n"
                     "  search = function(sim)\n"
                     "    sim.run{ pools = {{ name = 'evil', count = 1, latency_model = '" + kMarker + "' }} }\n"
                     "    return {}\n  end }\n"},
      {"sweep.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\n[[sweep]]\nlatency-model = \"" + kMarker +
                         "\"\n"},
      {"pd.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\nprefill-instances = 1\ndecode-instances = 1\n"
                  "prefill-latency-model = \"" + kMarker + "\"\n"},
  };
  for (const auto& [name, text] : routes) {
    const Result r = run_marked("run " + dir.write(name, text), mark, dir.str());
    INFO(name << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("a scenario file may not load native code") != std::string::npos);
    CHECK(r.err.find("\n", r.err.find("blis: error:")) == r.err.size() - 1);  // one line
    CHECK_FALSE(fs::exists(mark));
  }
  // The same file, trusted by the person running it, does open the library
  // (which is no blis plugin): the test would see a load.
  const Result trusted = run_marked("run pools.toml --trust-scenario", mark, dir.str());
  CHECK(trusted.status == 2);
  CHECK(trusted.err.find("not a blis plugin") != std::string::npos);
  CHECK(fs::exists(mark));
  fs::remove(mark);
  // A library the command line names itself is the person's choice, scenario or not.
  const Result named = run_marked("run pools.toml --pool 'name=evil count=1 latency-model=" + kMarker + "'", mark,
                                  dir.str());
  CHECK(named.err.find("not a blis plugin") != std::string::npos);
  CHECK(fs::exists(mark));
}

TEST_CASE("a scenario file's outputs stay below the current directory, symlinks followed", "[hostile][trust]") {
  TempDir dir, outside;
  fs::create_symlink(outside.str() + "/stolen.json", dir.str() + "/out.json");
  fs::create_directory(dir.str() + "/sub");
  fs::create_directory_symlink(outside.str(), dir.str() + "/sub/away");
  const std::pair<std::string, std::string> cases[] = {
      {"link.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\nresults-path = \"out.json\"\n"},
      {"dirlink.lua", "return { model = 'qwen/qwen3-14b', num_requests = 5, timeseries = 'sub/away/ts.csv' }\n"},
      {"report.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\nreport = \"sub/away\"\n"},
      {"rows.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\nrows-json = \"out.json\"\n[sweep]\nrate = [1, 2]\n"},
  };
  for (const auto& [name, text] : cases) {
    const Result r = run_blis("run " + dir.write(name, text), dir.str());
    INFO(name << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("a scenario file writes only below the current directory") != std::string::npos);
    CHECK(r.err.find("through a symlink") != std::string::npos);
  }
  CHECK(fs::is_empty(outside.str()));
  // A symlink that stays inside is fine.
  fs::create_symlink(dir.str() + "/sub/real.json", dir.str() + "/inside.json");
  const Result ok = run_blis(
      "run " + dir.write("inside.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\nresults-path = \"inside.json\"\n"),
      dir.str());
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(fs::exists(dir.str() + "/sub/real.json"));
}

// Every setting that names a file is held against the rule: from a scenario,
// a write outside the current directory, a library and a plugin folder are
// refused; reads are allowed.
TEST_CASE("every setting that names a path follows the one rule", "[hostile][trust]") {
  TempDir dir, outside;
  int writes = 0, libraries = 0, folders = 0, reads = 0;
  for (const blis::SettingDef& def : blis::setting_table()) {
    std::string value;
    const auto use = blis::path_use(def, kMarker);
    if (!use) {
      CHECK_FALSE(def.has(blis::kInputPath));
      CHECK_FALSE(def.has(blis::kOutputPath));
      CHECK_FALSE(def.has(blis::kLibraryRef));
      continue;
    }
    switch (*use) {
      case blis::PathUse::Write: value = outside.str() + "/x.out"; ++writes; break;
      case blis::PathUse::Library: value = kMarker; ++libraries; break;
      case blis::PathUse::PluginFolder: value = outside.str(); ++folders; break;
      case blis::PathUse::Read: value = outside.str() + "/missing.file"; ++reads; break;
    }
    const std::string key = blis::flag_of_key(def.key);
    const std::string file = dir.write(def.key + ".toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\n" + key +
                                                              " = \"" + value + "\"\n");
    const Result r = run_marked("run " + file, dir.str() + "/mark", dir.str());
    INFO(def.key << "\nstderr: " << r.err);
    if (*use == blis::PathUse::Read) {
      CHECK(r.err.find("a scenario file") == std::string::npos);
    } else {
      CHECK(r.status == 2);
      CHECK(r.err.find(*use == blis::PathUse::Write ? "a scenario file writes only below the current directory"
                                                     : "a scenario file may not load native code") != std::string::npos);
    }
  }
  CHECK_FALSE(fs::exists(dir.str() + "/mark"));
  CHECK(fs::is_empty(outside.str()));
  CHECK(writes >= 5);
  CHECK(libraries >= 3);
  CHECK(folders == 1);
  CHECK(reads >= 5);
}

// Found by fuzz_flags (2026-11-26): a folder name longer than the system
// allows made std::filesystem throw inside CLI11's validator, and blis
// aborted (exit 134). Every path a user names is asked without throwing.
TEST_CASE("a path name too long for the system is refused, never an abort", "[hostile][trust]") {
  const std::string long_name(5000, 'a');
  check_refused("plugins list --plugin-dir " + long_name, ": no such folder");
  check_refused("plugins list --script-dir " + long_name, ": no such folder");
  check_refused("run --model qwen/qwen3-14b --model-config-folder " + long_name, "no config.json in");
  check_refused("run --model qwen/" + long_name, "unknown model");
  check_refused("run --model qwen/qwen3-14b --num-requests 5 --workload-trace " + long_name + ".csv", long_name);
  check_refused("run " + long_name + ".toml", "no such file");
}
