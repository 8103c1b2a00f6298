// A new user's first contact (issue 32): shell completion generated from the
// flags, messages that lead with what the user gave, hints on stderr.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <set>
#include <sstream>

namespace {

// The completions bash offers for the words of `line` (the last one being
// completed, "" for a new word), with the script of `blis completion bash`.
std::vector<std::string> bash_complete(const std::string& line) {
  const std::string file = std::filesystem::temp_directory_path() / ("blis_complete_" + std::to_string(::getpid()));
  std::ofstream(file) << "source <(" << BLIS_TEST_STAGE << "/bin/blis completion bash)\n"
                      << "COMP_WORDS=(" << line << ")\n"
                      << "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                      << "_blis\n"
                      << "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const Result r = run_shell("bash " + file);
  std::filesystem::remove(file);
  INFO(line << "\n" << r.err);
  REQUIRE(r.status == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string w; std::getline(in, w);)
    if (!w.empty()) out.push_back(w);
  return out;
}

// The shell's parser accepts `script` (bash -n, zsh -n, fish --no-execute).
bool parses(const std::string& check, const std::string& script) {
  const std::string file = std::filesystem::temp_directory_path() / ("blis_script_" + std::to_string(::getpid()));
  std::ofstream(file) << script;
  const Result r = run_shell(check + " " + file);
  std::filesystem::remove(file);
  INFO(r.err);
  return r.status == 0;
}

// `flag` appears in `script` as a whole word.
bool names(const std::string& script, const std::string& flag) {
  return std::regex_search(script, std::regex("[ |'(]" + flag + "[ ;'|)\n]"));
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// The first word of each line of `text` (a listing's names), after its header.
std::vector<std::string> first_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && !line.empty()) out.push_back(line.substr(0, line.find(' ')));
  return out;
}

}  // namespace

TEST_CASE("first contact: bash completion completes flags and their values", "[cli]") {
  const auto flags = bash_complete("blis run --rou");
  CHECK(has(flags, "--routing-policy"));
  CHECK(has(flags, "--routing-scorers"));
  for (const auto& w : flags) CHECK(w.rfind("--rou", 0) == 0);

  const auto policies = bash_complete("blis run --routing-policy ''");
  CHECK(policies == std::vector<std::string>{"always-busiest", "least-loaded", "round-robin", "weighted"});
  CHECK(bash_complete("blis run --routing-policy = ''") == policies);  // bash splits --flag=value at '='
  CHECK(bash_complete("blis run --routing-policy w") == std::vector<std::string>{"weighted"});

  // The GPUs are those of `blis hardware`, for run and plan alike.
  const auto gpus = first_words(run_blis("hardware").out);
  REQUIRE(gpus.size() >= 6);
  CHECK(bash_complete("blis run --hardware ''") == gpus);
  CHECK(bash_complete("blis plan --hardware ''") == gpus);
  CHECK(has(bash_complete("blis run --admission-policy ''"), "token-bucket"));
  CHECK(has(bash_complete("blis run --routing-scorers ''"), "prefix-affinity"));
  CHECK(has(bash_complete("blis run --model qwen/"), "qwen/qwen3-14b"));
  CHECK(bash_complete("blis pl") == std::vector<std::string>{"plan", "plugins"});
  CHECK(bash_complete("blis plugins ''") == std::vector<std::string>{"list", "inspect"});
  CHECK(has(bash_complete("blis plugins list --"), "--script-dir"));
  CHECK(bash_complete("blis completion ''") == std::vector<std::string>{"bash", "fish", "zsh"});
}

TEST_CASE("first contact: the completion scripts name every flag --help lists", "[cli]") {
  const std::string help = run_blis("run --help").out;
  const Result bash = run_blis("completion bash"), zsh = run_blis("completion zsh"), fish = run_blis("completion fish");
  REQUIRE(bash.status == 0);
  REQUIRE(zsh.status == 0);
  REQUIRE(fish.status == 0);
  std::set<std::string> flags;
  const std::regex flag_re("\n  (?:-\\w, )?(--[a-z0-9-]+)");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag_re);
       it != std::sregex_iterator(); ++it)
    flags.insert((*it)[1]);
  REQUIRE(flags.size() > 100);
  for (const std::string& f : flags) {
    INFO(f);
    CHECK(names(bash.out, f));
    CHECK(names(zsh.out, f));
    CHECK(fish.out.find(" -l " + f.substr(2) + " ") != std::string::npos);
  }
  // The shells' own parsers accept the scripts, where they are installed.
  if (run_shell("command -v zsh").status == 0) CHECK(parses("zsh -n", zsh.out));
  if (run_shell("command -v fish").status == 0) {
    CHECK(parses("fish --no-execute", fish.out));
    const std::string file = std::filesystem::temp_directory_path() / ("blis_fish_" + std::to_string(::getpid()));
    std::ofstream(file) << fish.out;
    const Result r = run_shell("fish -c \"source " + file + "; complete -C 'blis run --routing-policy '\"");
    std::filesystem::remove(file);
    CHECK(r.out.rfind("always-busiest\t", 0) == 0);
    CHECK(r.out.find("\nweighted\t") != std::string::npos);
  }
  CHECK(parses("bash -n", bash.out));
  check_refused("completion tcsh", "tcsh not in {bash,zsh,fish}");
}

TEST_CASE("first contact: --help lists the bundled GPUs and policies, the command's own flags first", "[cli]") {
  const std::string help = run_blis("run --help").out;
  for (const auto& gpu : first_words(run_blis("hardware").out)) CHECK(help.find(gpu) != std::string::npos);
  CHECK(help.find("Bundled admission-policy plugins: always-admit, gaie-legacy, reject-all, tier-shed, "
                  "token-bucket") != std::string::npos);
  CHECK(help.find("prefix-affinity") != std::string::npos);
  const std::string plan = run_blis("plan --help").out;
  REQUIRE(plan.find("Plan:") != std::string::npos);
  CHECK(plan.find("Plan:") < plan.find("Simulation:"));
  CHECK(plan.find("--slo") < plan.find("--rate"));
  CHECK(help.find("Scenarios:") < help.find("Simulation:"));
}

TEST_CASE("first contact: a model message leads with the model", "[cli]") {
  // A misspelt model: what is wrong with --model, not with a latency model never given.
  Result r = check_refused("run --model qwen/qwen3-14", "--model: unknown model 'qwen/qwen3-14'; did you mean qwen/qwen3-14b?");
  CHECK(r.err.find("--latency-model") == std::string::npos);
  // A bundled architecture without default GPU and TP: listed by `blis models`, so not "unknown".
  CHECK(run_blis("models").out.find("yi-34b") != std::string::npos);
  r = check_refused("run --model yi-34b", "--model: model 'yi-34b' has no default GPU and TP in the data tables; "
                                          "give --hardware (GPU type) and --tp (tensor parallelism)");
  CHECK(r.err.find("not in the data tables") == std::string::npos);
  CHECK(run_blis("run --model yi-34b --hardware H100 --tp 1 --num-requests 3 --quiet").status == 0);
}

TEST_CASE("first contact: hints on stderr leave stdout as it was", "[cli]") {
  // --horizon 60 is 60 µs: nothing completes, and stderr says what a bare number means.
  Result r = run_blis("run --model qwen/qwen3-14b --horizon 60");
  CHECK(r.status == 0);
  CHECK(r.err.find("no requests completed within the horizon of 60 µs (a bare number is µs; 60s means 60 seconds)") !=
        std::string::npos);
  // An admission policy that turns most traffic away says so.
  r = run_blis("run --model qwen/qwen3-14b --admission-policy token-bucket --rate 20 --num-requests 200");
  CHECK(r.status == 0);
  CHECK(r.err.find("the admission policy token-bucket rejected 144 of the 200 requests that arrived (72 %)") !=
        std::string::npos);
  CHECK(run_blis("run --model qwen/qwen3-14b --admission-policy token-bucket --rate 20 --num-requests 200 --log off")
            .out == r.out);
  CHECK(run_blis("run --model qwen/qwen3-14b --rate 20 --num-requests 200").err.find("rejected") == std::string::npos);
}

TEST_CASE("first contact: --format table prints a sweep's rows as a table", "[cli]") {
  const std::string lua = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/pd-disaggregation/pd.lua";
  const Result table = run_blis("run " + lua + " --format table --quiet");
  REQUIRE(table.status == 0);
  CHECK(table.out.find("(3 configurations)") != std::string::npos);
  CHECK(table.out.find("pd_decider") != std::string::npos);
  CHECK(table.out.find("TTFT p99 ms") != std::string::npos);
  CHECK(table.out.find("\"rows\"") == std::string::npos);
  // The JSON stays what it was, and --rows-json keeps every metric with --format table.
  const Result json = run_blis("run " + lua + " --quiet");
  REQUIRE(json.status == 0);
  CHECK(json.out.find("\"rows\": [") != std::string::npos);
  blis::test::TempDir dir;
  const std::string rows = dir.str() + "/rows.json";
  REQUIRE(run_blis("run " + lua + " --format table --quiet --rows-json " + rows).status == 0);
  std::ifstream in(rows);
  CHECK(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) == json.out);
}
