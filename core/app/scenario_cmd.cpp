// `blis run SCENARIO`: a scenario file's settings become flag values (flags on
// the command line win); one configuration runs like `blis run`, a sweep or a
// search runs many, in parallel with --jobs, and prints one row each.
#include "app/commands.hpp"
#include "app/run_options.hpp"
#include "app/simulate.hpp"

#include <blis/errors.hpp>
#include <blis/scenario.hpp>

#include "metrics/json_format.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace blis::app {
namespace {

namespace fs = std::filesystem;

// Flags that take several values: settings of the scenario and of a
// configuration add up instead of replacing each other.
bool accumulates(const std::string& flag) {
  return flag == "plugin-config" || flag == "plugin-dir" || flag == "script-dir";
}

// Flags naming files the scenario reads: relative paths are taken from the
// scenario's folder when the file is there.
bool is_input_path(const std::string& flag) {
  return flag == "workload-spec" || flag == "workload-trace" || flag == "policy-config" ||
         flag == "model-config-folder" || flag == "hardware-config" || flag == "plugin-dir" ||
         flag == "script-dir";
}

// A relative input path found beside the scenario file. Lua scripts need no
// rewriting: the scenario's folder is a script folder (see build()).
std::string rebase(const Setting& s, const fs::path& dir) {
  auto beside = [&](const std::string& p) {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    fs::path candidate = dir / p;
    return fs::exists(candidate) ? candidate.lexically_normal().string() : p;
  };
  if (is_input_path(s.flag)) return beside(s.value);
  const bool library = s.value.find(".so") != std::string::npos;
  if (library && (s.flag == "latency-model" || s.flag == "admission-policy")) return beside(s.value);
  return s.value;
}

// Applies settings to the flags of `blis run` through CLI11, so a scenario
// value is parsed and checked exactly like the same value on the command line.
class ConfigBuilder {
 public:
  ConfigBuilder(CLI::App& run, RunOptions& bound, fs::path scenario_dir)
      : run_(run), bound_(bound), pristine_(bound), dir_(std::move(scenario_dir)) {}

  bool on_command_line(const std::string& flag) const {
    return pristine_.given("--" + flag);
  }

  RunOptions build(const Settings& base, const Settings& point) {
    // A configuration's own value replaces the scenario's (but both count for
    // flags that accumulate); the command line wins over both.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const Setting*>> by_flag;
    auto add = [&](const Settings& list, bool replaces) {
      std::set<std::string> seen;
      for (const Setting& s : list) {
        if (by_flag.count(s.flag) == 0) order.push_back(s.flag);
        auto& slot = by_flag[s.flag];
        if (replaces && !accumulates(s.flag) && seen.insert(s.flag).second) slot.clear();
        slot.push_back(&s);
      }
    };
    add(base, false);
    add(point, true);

    struct Restore {
      RunOptions& bound;
      const RunOptions& pristine;
      ~Restore() { bound = pristine; }
    } restore{bound_, pristine_};
    std::set<std::string> given = pristine_.given_flags;
    for (const std::string& flag : order) {
      const std::vector<const Setting*>& values = by_flag[flag];
      CLI::Option* opt = flag == "help" ? nullptr : run_.get_option_no_throw("--" + flag);
      if (opt == nullptr)
        throw InputError(values.front()->where,
                         fmt::format("unknown setting '{}'; a scenario's settings are the flags of "
                                     "`blis run` (see blis run --help) without the leading dashes",
                                     flag));
      if (on_command_line(flag)) {
        spdlog::debug("{}: --{} on the command line wins", values.front()->where, flag);
        continue;
      }
      opt->clear();
      for (const Setting* s : values) opt->add_result(rebase(*s, dir_));
      try {
        opt->run_callback();
      } catch (const CLI::ParseError& e) {
        throw InputError(values.back()->where,
                         fmt::format("invalid value '{}' for {}: {}", values.back()->value, flag, e.what()));
      }
      opt->clear();
      for (const std::string& name : opt->get_lnames()) given.insert("--" + name);
    }
    RunOptions out = bound_;
    out.given_flags = std::move(given);
    // Scripts named in the scenario are found beside it, after any folder
    // the command line or the scenario names.
    out.script_dirs.push_back(dir_.empty() ? "." : dir_.string());
    return out;
  }

 private:
  CLI::App& run_;
  RunOptions& bound_;
  const RunOptions pristine_;
  fs::path dir_;
};

// Text of a setting in a row: a JSON number when it reads as one.
std::string json_value(const std::string& text) { return setting_number(text) ? text : go_string(text); }

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

struct Row {
  Settings point;
  std::vector<MetricField> metrics;
};

// Runs configurations for a sweep or a search, keeps their rows, and reports
// progress on stderr.
class Runner : public ScenarioRunner {
 public:
  Runner(ConfigBuilder& builder, const Settings& base, int64_t jobs, size_t total)
      : builder_(builder), base_(base), jobs_(std::max<int64_t>(1, jobs)), total_(total) {}

  std::vector<NamedValues> run(const std::vector<Settings>& points) override {
    std::vector<RunOptions> configs;
    for (const Settings& p : points) {
      for (const Setting& s : p)
        if (builder_.on_command_line(s.flag))
          throw InputError("--" + s.flag, fmt::format("is varied by the scenario ({}); drop the flag "
                                                      "or vary something else",
                                                      s.where));
      configs.push_back(builder_.build(base_, p));
      if (!configs.back().results_path.empty())
        throw InputError(p.empty() ? "results-path" : p.front().where,
                         "results-path names one file, but a sweep or search runs many "
                         "configurations; use rows-csv or rows-json");
    }
    std::vector<RunOutcome> outcomes(configs.size());
    std::vector<std::exception_ptr> errors(configs.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (size_t i = next++; i < configs.size() && !failed; i = next++) {
        const auto start = std::chrono::steady_clock::now();
        try {
          outcomes[i] = simulate(configs[i]);
        } catch (...) {
          errors[i] = std::current_exception();
          failed = true;
          continue;
        }
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        progress(rows_.size() + i + 1, points[i], outcomes[i], secs);
      }
    };
    const size_t threads = std::min<size_t>(static_cast<size_t>(jobs_), configs.size());
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < errors.size(); ++i)
      if (errors[i]) {
        std::cerr << "blis: configuration " << rows_.size() + i + 1 << " (" << describe(points[i])
                  << ") failed\n";
        std::rethrow_exception(errors[i]);
      }

    std::vector<NamedValues> results;
    for (size_t i = 0; i < configs.size(); ++i) {
      NamedValues values;
      for (const MetricField& f : outcomes[i].metrics) values.emplace_back(f.name, f.value);
      results.push_back(std::move(values));
      rows_.push_back(Row{points[i], std::move(outcomes[i].metrics)});
    }
    return results;
  }

  const std::vector<Row>& rows() const { return rows_; }

 private:
  static std::string describe(const Settings& point) {
    std::string out;
    for (const Setting& s : point) out += (out.empty() ? "" : " ") + key_of_flag(s.flag) + "=" + s.value;
    return out.empty() ? "the scenario's settings" : out;
  }

  void progress(size_t n, const Settings& point, const RunOutcome& o, double secs) {
    auto metric = [&](const char* name) -> std::string {
      for (const MetricField& f : o.metrics)
        if (f.name == name) return fmt::format("{:.3f}", f.value);
      return "-";
    };
    std::lock_guard<std::mutex> lock(progress_mutex_);
    std::cerr << fmt::format("[{}{}] {}: ttft_p99_ms={} e2e_p99_ms={} responses_per_sec={} ({:.2f} s)\n", n,
                             total_ > 0 ? "/" + std::to_string(total_) : "", describe(point),
                             metric("ttft_p99_ms"), metric("e2e_p99_ms"), metric("responses_per_sec"), secs);
  }

  ConfigBuilder& builder_;
  const Settings& base_;
  int64_t jobs_;
  size_t total_;
  std::vector<Row> rows_;
  std::mutex progress_mutex_;
};

// Columns of the rows: settings first, then metrics, each in first-seen order.
struct Columns {
  std::vector<std::string> settings, metrics;
  explicit Columns(const std::vector<Row>& rows) {
    auto add = [](std::vector<std::string>& v, const std::string& name) {
      if (std::find(v.begin(), v.end(), name) == v.end()) v.push_back(name);
    };
    for (const Row& r : rows) {
      for (const Setting& s : r.point) add(settings, key_of_flag(s.flag));
      for (const MetricField& f : r.metrics) add(metrics, f.name);
    }
  }
};

std::string rows_json(const std::string& scenario, const std::vector<Row>& rows, const std::string& result) {
  std::string out = "{\n  \"scenario\": " + go_string(scenario) + ",\n  \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += i == 0 ? "\n    {" : ",\n    {";
    bool first = true;
    auto field = [&](const std::string& name, const std::string& value) {
      out += (first ? "" : ", ") + go_string(name) + ": " + value;
      first = false;
    };
    for (const Setting& s : rows[i].point) field(key_of_flag(s.flag), json_value(s.value));
    for (const MetricField& f : rows[i].metrics) field(f.name, metric_text(f));
    out += "}";
  }
  out += rows.empty() ? "]" : "\n  ]";
  if (!result.empty()) out += ",\n  \"result\": " + result;
  return out + "\n}\n";
}

std::string rows_csv(const std::vector<Row>& rows) {
  const Columns cols(rows);
  std::string out;
  for (const auto& list : {cols.settings, cols.metrics})
    for (const std::string& c : list) {
      if (!out.empty()) out += ',';
      out += csv_field(c);
    }
  out += "\n";
  for (const Row& r : rows) {
    std::string line;
    bool first = true;
    auto cell = [&](const std::string& v) {
      if (!first) line += ',';
      line += csv_field(v);
      first = false;
    };
    for (const std::string& c : cols.settings) {
      auto it = std::find_if(r.point.begin(), r.point.end(),
                             [&](const Setting& s) { return key_of_flag(s.flag) == c; });
      cell(it == r.point.end() ? "" : it->value);
    }
    for (const std::string& c : cols.metrics) {
      auto it = std::find_if(r.metrics.begin(), r.metrics.end(), [&](const MetricField& f) { return f.name == c; });
      cell(it == r.metrics.end() ? "" : metric_text(*it));
    }
    out += line + "\n";
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int run_scenario(CLI::App& run, RunOptions& bound) {
  const std::string path = bound.scenario;
  set_log_level(bound.log_level);
  if (!fs::exists(path)) throw InputError("scenario", path + ": no such file");
  std::unique_ptr<LuaScenario> lua;
  Scenario scenario;
  if (ends_with(path, ".lua")) {
    lua = std::make_unique<LuaScenario>(path, bound.seed);
    scenario = lua->scenario();
  } else if (ends_with(path, ".toml")) {
    scenario = load_toml_scenario(path);
  } else {
    throw InputError("scenario", path + ": a scenario file ends in .toml or .lua");
  }

  ConfigBuilder builder(run, bound, fs::path(path).parent_path());
  RunOptions base = builder.build(scenario.base, {});
  set_log_level(base.log_level);
  if (base.jobs < 1) throw InputError("--jobs", fmt::format("must be >= 1, got {}", base.jobs));
  const bool search = lua && lua->has_search();
  if (scenario.sweep.empty() && !search) {
    if (!base.rows_csv.empty() || !base.rows_json.empty())
      spdlog::warn("{}: rows-csv and rows-json only apply to a sweep or search", path);
    return run_simulation(base);
  }

  Runner runner(builder, scenario.base, base.jobs, search ? 0 : scenario.sweep.size());
  std::string result;
  if (search) result = lua->search(runner);
  else runner.run(scenario.sweep);

  const std::string report = rows_json(path, runner.rows(), result);
  if (!base.rows_csv.empty()) write_file_atomically(base.rows_csv, rows_csv(runner.rows()));
  if (!base.rows_json.empty()) write_file_atomically(base.rows_json, report);
  std::cout << report << std::flush;
  return 0;
}

}  // namespace blis::app
