// `blis run` (blis/run.hpp): one configuration, or a scenario file's sweep or
// search. Settings from every writer are layered here — a scenario's base,
// then a configuration's own settings, then the command line — and the policy
// file fills what none of them set (docs/design/configuration.md).
#include <blis/errors.hpp>
#include <blis/run.hpp>
#include <blis/settings.hpp>
#include <blis/trace.hpp>

#include "run/farm.hpp"
#include "run/path_rules.hpp"
#include "run/resolve.hpp"
#include "run/rows.hpp"
#include "run/rows_table.hpp"
#include "run/simulate.hpp"
#include "run/workload_reuse.hpp"
#include "util/files.hpp"
#include "util/log_once.hpp"
#include "util/output_file.hpp"
#include "util/text.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <iostream>

namespace blis {
namespace {

namespace fs = std::filesystem;

// A scenario file is shared data (docs/scenarios.md, "Trust"): its settings
// are held against the rule of run/path_rules.hpp before anything is built,
// and the configurations built from it carry the same rights to the places
// that open libraries and write files. A scenario cannot grant itself rights.
void check_scenario_rights(const Settings& settings, const PathRights& rights) {
  for (const Setting& s : settings) {
    const SettingDef* def = find_setting(s.flag);
    if (def == nullptr) continue;  // reported when applied
    const std::string where = setting_where(s.where, *def);
    if (def->key == "trust_scenario")
      throw InputError(where, "a scenario file cannot grant itself rights; give --trust-scenario on the command line");
    std::vector<std::string> values = s.items;
    if (values.empty()) values.push_back(s.value);
    for (const std::string& v : values)
      if (const auto use = path_use(*def, v)) check_path(rights, *use, v, where);
  }
}

// A scenario's input paths, relative to the scenario's folder when the file
// is there. Lua scripts need no rewriting: the folder is a script folder.
Settings rebased(const Settings& settings, const fs::path& dir) {
  Settings out = settings;
  auto beside = [&](std::string& p) {
    if (p.empty() || fs::path(p).is_absolute()) return;
    const fs::path candidate = dir / p;
    std::error_code ec;
    if (fs::exists(candidate, ec)) p = candidate.lexically_normal().string();
  };
  for (Setting& s : out) {
    const SettingDef* def = find_setting(s.flag);
    if (def == nullptr) continue;  // reported when applied
    const bool library = def->has(kLibraryRef) && s.value.find(".so") != std::string::npos;
    if (!def->has(kInputPath) && !library) continue;
    beside(s.value);
    for (std::string& item : s.items) beside(item);
  }
  return out;
}

void check_outputs(const RunConfig& c) {
  for (const char* key : {"results_path", "rows_csv", "rows_json", "timeseries", "saturation_report"})
    if (auto v = find_setting(key)->get(c)) check_writable(std::get<std::string>(*v), c.where(key));
  if (c.outputs.trace_output)
    for (const char* ext : {".yaml", ".csv"}) check_writable(*c.outputs.trace_output + ext, c.where("trace_output"));
}

void single_run(const RunConfig& config, bool dump, std::ostream& out) {
  if (dump && config.event_script)
    throw InputError("--dump-config", fmt::format("{} registers at()/every() callbacks, which are Lua code that a "
                                                  "configuration cannot hold; run the scenario itself (blis run "
                                                  "--scenario {})",
                                                  *config.event_script, *config.event_script));
  if (dump) {
    out << dump_config(config) << std::flush;
    return;
  }
  for (const char* key : {"rows_csv", "rows_json"})
    if (config.origins.count(key) && config.where(key).rfind("--", 0) == 0)
      throw InputError(config.where(key), "needs a scenario file with a sweep or search");
  check_outputs(config);
  if (config.outputs.report) check_report_dir(*config.outputs.report, config.where("report"));
  RunOutcome outcome = simulate(config);
  out << outcome.report << std::flush;
  std::cerr << outcome.profile;
  if (config.outputs.results_path) {
    write_output(*config.outputs.results_path, outcome.results_json, out);
    spdlog::info("metrics written to {}", *config.outputs.results_path);
  }
  if (config.outputs.trace_output) {
    write_output(*config.outputs.trace_output + ".yaml", outcome.trace_yaml, out);
    write_output(*config.outputs.trace_output + ".csv", outcome.trace_csv, out);
    spdlog::info("trace written to {}.yaml, {}.csv", *config.outputs.trace_output, *config.outputs.trace_output);
  }
  if (config.replay && config.replay->sim_results) {
    write_output(*config.replay->sim_results, outcome.sim_results_json, out);
    spdlog::info("SimResults written to {}", *config.replay->sim_results);
  }
  if (outcome.run_report) write_run_report(*config.outputs.report, *outcome.run_report);
  if (config.outputs.timeseries) {
    write_output(*config.outputs.timeseries, outcome.timeseries_csv, out);
    spdlog::info("time series written to {}", *config.outputs.timeseries);
  }
  if (config.outputs.saturation_report) {
    write_output(*config.outputs.saturation_report, outcome.saturation_report, out);
    spdlog::info("saturation report written to {}", *config.outputs.saturation_report);
  }
}

// Runs the configurations of a sweep or a search, keeps their rows, and
// reports progress on stderr.
class Runner : public ScenarioRunner {
 public:
  Runner(const Settings& base, const Settings& command_line, fs::path dir, int64_t jobs, size_t total,
         PathRights rights, std::optional<std::string> event_script)
      : base_(base), cli_(command_line), dir_(std::move(dir)), script_dir_(dir_.empty() ? "." : dir_.string()),
        jobs_(std::max<int64_t>(1, jobs)), total_(total), rights_(std::move(rights)),
        event_script_(std::move(event_script)) {}

  std::vector<NamedValues> run(const std::vector<Settings>& points) override {
    std::vector<RunConfig> configs;
    for (const Settings& p : points) {
      for (const Setting& s : p)
        for (const Setting& c : cli_)
          if (find_setting(c.flag) == find_setting(s.flag) && find_setting(s.flag) != nullptr)
            throw InputError(c.where, fmt::format("is varied by the scenario ({}); drop the flag or vary "
                                                  "something else",
                                                  s.where));
      check_scenario_rights(p, rights_);
      const Settings own = rebased(p, dir_);
      configs.push_back(build_config({&base_, &own, &cli_}, script_dir_));
      configs.back().rights = rights_;
      configs.back().outputs.quiet = true;  // the sweep reports its own progress
      configs.back().outputs.report_text = false;   // the sweep prints its rows, from the metrics
      configs.back().event_script = event_script_;  // each configuration runs its own copy of the code
      check_single_run_outputs(configs.back(), p);
    }
    std::vector<RunOutcome> outcomes(configs.size());
    const FarmFailure failure =
        simulation_farm().run(configs, jobs_, [&](size_t i, RunOutcome& outcome, double secs) {
          progress(numbers_.empty() ? rows_.size() + i + 1 : numbers_[i] + 1, points[i], outcome, secs);
          if (on_row_) on_row_(i, Row{points[i], outcome.metrics});
          outcomes[i] = std::move(outcome);
        });
    if (failure) {
      std::cerr << "blis: configuration " << rows_.size() + failure->first + 1 << " (" << describe(points[failure->first])
                << ") failed\n";
      std::rethrow_exception(failure->second);
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
  // Called as each configuration of a run() finishes, with its place in the
  // batch (one call at a time): checkpoints.
  void on_row(std::function<void(size_t, const Row&)> f) { on_row_ = std::move(f); }
  // The sweep's index of each configuration of the next run(), for progress.
  void number(std::vector<size_t> indices) { numbers_ = std::move(indices); }

 private:
  // The outputs that name one file or folder have no place in a sweep.
  static void check_single_run_outputs(const RunConfig& c, const Settings& p) {
    if (c.outputs.report)
      throw InputError(p.empty() ? "report" : p.front().where,
                       "report names one folder, but a sweep or search runs many configurations; give --report "
                       "to a single run, or use blis plan --report");
    if (c.outputs.trace_output)
      throw InputError(p.empty() ? "trace-output" : p.front().where,
                       "trace-output names one trace, but a sweep or search runs many configurations; give "
                       "--trace-output to a single run");
    if (c.outputs.results_path)
      throw InputError(p.empty() ? "results-path" : p.front().where,
                       "results-path names one file, but a sweep or search runs many "
                       "configurations; use rows-csv or rows-json");
    if (c.outputs.timeseries)
      throw InputError(c.where("timeseries"),
                       "timeseries names one file, but a sweep or search runs many configurations; "
                       "run one configuration with it");
    if (c.outputs.saturation_report)
      throw InputError(c.where("saturation_report"),
                       "saturation-report names one file, but a sweep or search runs many configurations; "
                       "run one configuration with it");
  }

  static std::string describe(const Settings& point) {
    std::vector<std::string> pairs;
    for (const Setting& s : point) pairs.push_back(key_of_flag(s.flag) + "=" + s.value);
    return pairs.empty() ? "the scenario's settings" : text::join(pairs, " ");
  }

  void progress(size_t n, const Settings& point, const RunOutcome& o, double secs) {
    auto metric = [&](const char* name) -> std::string {
      for (const MetricField& f : o.metrics)
        if (f.name == name) return fmt::format("{:.3f}", f.value);
      return "-";
    };
    std::cerr << fmt::format("[{}{}] {}: ttft_p99_ms={} e2e_p99_ms={} responses_per_sec={} ({:.2f} s)\n", n,
                             total_ > 0 ? "/" + std::to_string(total_) : "", describe(point), metric("ttft_p99_ms"),
                             metric("e2e_p99_ms"), metric("responses_per_sec"), secs);
  }

  const Settings& base_;
  const Settings& cli_;
  fs::path dir_;
  std::string script_dir_;
  int64_t jobs_;
  size_t total_;
  PathRights rights_;
  std::optional<std::string> event_script_;
  std::function<void(size_t, const Row&)> on_row_;
  std::vector<size_t> numbers_;
  LogOnce log_once_;  // a warning about the base configuration, once, not once per point
  std::vector<Row> rows_;
};

// A sweep's identities (run/rows.hpp): of the whole sweep, which shard
// documents carry, and of the settings its configurations share, which the
// checkpoint journal carries.
struct SweepIdentity {
  std::string whole, shared;
};

// The rows a checkpoint journal holds for this sweep (run_sweep). Its first
// line names the settings every configuration shares (`shared`, the identity
// of the scenario's base and the command line) and the sweep's size; each row
// must be that of the configuration at its index, same settings: a journal of
// another sweep, or an edited one, is refused, while a sweep whose failed
// configuration was fixed resumes (its row was never written). A torn last
// line (a kill mid-write leaves no newline) is dropped, and that configuration
// runs again.
std::map<size_t, Row> read_journal(const std::string& journal, const std::string& shared,
                                   const std::vector<Settings>& points) {
  std::ifstream in(journal, std::ios::binary);
  if (!in) throw InputError("--resume", fmt::format("{}: no checkpoint to resume from (run without --resume)", journal));
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  std::vector<std::string> lines = text::split(all, '\n');
  const bool torn = !all.empty() && all.back() != '\n';
  if (!torn && !lines.empty() && lines.back().empty()) lines.pop_back();
  std::map<size_t, Row> done;
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string where = fmt::format("{}:{}", journal, n + 1);
    if (n + 1 == lines.size() && torn) {
      spdlog::warn("{}: the last line was cut short (the sweep was stopped while writing it); its configuration "
                   "runs again",
                   where);
      break;
    }
    if (n == 0) {
      const auto [id, total] = parse_journal_header(lines[0], where);
      if (id != shared || total != points.size())
        throw InputError(where, fmt::format("is the checkpoint of another sweep ({}, {} configurations; this one is "
                                            "{}, {}): give this sweep's rows file, or run without --resume",
                                            id, total, shared, points.size()));
      continue;
    }
    auto [index, row] = parse_row_record(lines[n], where);
    if (index >= points.size())
      throw InputError(where, fmt::format("row {} is beyond the sweep's {} configurations", index, points.size()));
    if (!same_point(row.point, points[index]))
      throw InputError(where, fmt::format("the row of configuration {} has other settings than that configuration; "
                                          "the checkpoint was edited: delete it, or run without --resume",
                                          index));
    if (!done.emplace(index, std::move(row)).second)
      throw InputError(where, fmt::format("configuration {} appears twice", index));
  }
  return done;
}

// A sweep, or one shard of it: checkpointed row by row to a journal beside
// the rows file (so --resume can skip what finished), then reported. Rows
// written through (a device, a FIFO, a symlink) have no journal beside them.
void run_sweep(const std::string& path, const std::vector<Settings>& points, const SweepIdentity& identity,
               const RunConfig& base, Runner& runner, std::ostream& out) {
  int64_t shard = 0, shards = 1;
  if (base.outputs.shard)
    std::tie(shard, shards) = std::pair{base.outputs.shard->value.index, base.outputs.shard->value.count};
  // The journal: its header, then one line per finished configuration.
  const std::optional<std::string> rows_file = base.outputs.rows_json ? base.outputs.rows_json : base.outputs.rows_csv;
  const std::string journal = rows_file && !written_through(*rows_file) ? *rows_file + ".journal" : "";
  if (base.outputs.resume && journal.empty())
    throw InputError(base.where("resume"), "needs the checkpoint of a sweep run with --rows-json or --rows-csv naming "
                                           "a regular file; give the same rows file");
  std::map<size_t, Row> done;
  if (base.outputs.resume) {
    done = read_journal(journal, identity.shared, points);
    spdlog::info("{}: resuming, {} configuration(s) already done", journal, done.size());
    // The journal is written again whole: header, the rows kept (a torn line dropped).
    std::string kept = journal_header(identity.shared, points.size()) + "\n";
    for (const auto& [k, row] : done) kept += row_record(k, row) + "\n";
    write_output(journal, kept, out);
  } else if (!journal.empty()) {
    std::error_code ec;
    fs::remove(journal, ec);
    append_line(journal, journal_header(identity.shared, points.size()));
  }
  std::vector<size_t> todo;
  std::vector<Settings> todo_points;
  for (size_t k = 0; k < points.size(); ++k)
    if (static_cast<int64_t>(k % static_cast<size_t>(shards)) == shard && !done.count(k)) {
      todo.push_back(k);
      todo_points.push_back(points[k]);
    }
  if (!journal.empty())
    runner.on_row([&](size_t i, const Row& row) {
      append_line(journal, row_record(todo[i], row));
      done.emplace(todo[i], row);
    });
  runner.number(todo);
  runner.run(todo_points);
  for (size_t i = 0; i < todo.size(); ++i) done.emplace(todo[i], runner.rows()[i]);

  std::vector<Row> rows;
  std::vector<std::pair<size_t, Row>> indexed;
  for (const auto& [k, row] : done)
    if (static_cast<int64_t>(k % static_cast<size_t>(shards)) == shard) {
      rows.push_back(row);
      indexed.emplace_back(k, row);
    }
  const std::string report =
      base.outputs.shard ? shard_document(path, identity.whole, shard, shards, points.size(), indexed)
                         : rows_json(path, rows, "");
  out << (base.outputs.format == "table" && !base.outputs.shard ? rows_table(path, rows, "") : report) << std::flush;
  if (base.outputs.rows_csv) write_output(*base.outputs.rows_csv, rows_csv(rows), out);
  if (base.outputs.rows_json) write_output(*base.outputs.rows_json, report, out);
  if (!journal.empty()) {
    std::error_code ec;
    fs::remove(journal, ec);
  }
}

void scenario_run(const RunRequest& req, std::ostream& out) {
  const std::string& path = req.scenario;
  RunConfig cli_only;
  apply_settings(cli_only, req.command_line);
  set_log_level(cli_only.outputs.log_level);
  if (!files::exists(path)) throw InputError("scenario", path + ": no such file");
  std::unique_ptr<LuaScenario> lua;
  Scenario scenario;
  if (text::ends_with(path, ".lua")) {
    lua = std::make_unique<LuaScenario>(path, cli_only.seed.value_or(42));
    scenario = lua->scenario();
  } else if (text::ends_with(path, ".toml")) {
    scenario = load_toml_scenario(path);
  } else {
    throw InputError("scenario", path + ": a scenario file ends in .toml or .lua");
  }
  const fs::path dir = fs::path(path).parent_path();
  const std::string script_dir = dir.empty() ? "." : dir.string();
  const PathRights rights = scenario_rights(path, req.command_line, cli_only.trust_scenario);
  check_scenario_rights(scenario.base, rights);
  const Settings base_settings = rebased(scenario.base, dir);
  const std::vector<Settings>& points = scenario.sweep;

  RunConfig base = build_config({&base_settings, &req.command_line}, script_dir);
  base.rights = rights;
  if (lua && lua->has_code()) base.event_script = path;
  set_log_level(base.outputs.log_level);
  const bool search = lua && lua->has_search();
  if (points.empty() && !search) {
    if (base.outputs.rows_csv || base.outputs.rows_json)
      spdlog::warn("{}: rows-csv and rows-json only apply to a sweep or search", path);
    RunConfig single = base;
    single.outputs.rows_csv.reset();
    single.outputs.rows_json.reset();
    single.origins.erase("rows_csv");
    single.origins.erase("rows_json");
    return single_run(single, req.dump_config, out);
  }
  if (req.dump_config)
    throw InputError("--dump-config", fmt::format("{} runs {}; --dump-config prints one configuration: "
                                                  "give a scenario without a sweep or search",
                                                  path, search ? "a search" : "a sweep"));

  check_outputs(base);
  // Configurations that differ in the fleet alone simulate one workload:
  // generated once (run/workload_reuse.hpp).
  const WorkloadReuse reuse;
  Runner runner(base_settings, req.command_line, dir, base.outputs.jobs, search ? 0 : points.size(), rights,
                base.event_script);
  if (search) {
    for (const char* key : {"shard", "resume"})
      if (base.origins.count(key))
        throw InputError(base.where(key), "applies to a sweep; a search decides its configurations as it goes");
    const std::string result = lua->search(runner);
    const std::string report = rows_json(path, runner.rows(), result);
    out << (base.outputs.format == "table" ? rows_table(path, runner.rows(), result) : report) << std::flush;
    if (base.outputs.rows_csv) write_output(*base.outputs.rows_csv, rows_csv(runner.rows()), out);
    if (base.outputs.rows_json) write_output(*base.outputs.rows_json, report, out);
    return;
  }
  const SweepIdentity identity{sweep_identity(points, {&base_settings, &req.command_line}),
                               sweep_identity({}, {&base_settings, &req.command_line})};
  run_sweep(path, points, identity, base, runner, out);
}

}  // namespace

void merge(const std::vector<std::string>& shard_files, const std::string& rows_csv_path,
           const std::string& rows_json_path, std::ostream& out) {
  if (shard_files.empty()) throw InputError("merge", "no shard reports given; e.g. blis merge rows-*.json");
  if (!rows_csv_path.empty()) check_writable(rows_csv_path, "--rows-csv");
  if (!rows_json_path.empty()) check_writable(rows_json_path, "--rows-json");
  ShardRows all;
  for (const std::string& f : shard_files) read_shard_document(f, all);
  std::vector<size_t> missing;
  for (size_t k = 0; k < all.total; ++k)
    if (!all.rows.count(k)) missing.push_back(k);
  if (!missing.empty()) {
    std::vector<std::string> first;
    for (size_t i = 0; i < missing.size() && i < 8; ++i) first.push_back(std::to_string(missing[i]));
    throw ConfigError("merge", fmt::format("{} of the {} configurations of {} are missing ({}{}): run the missing "
                                           "shards and merge again",
                                           missing.size(), all.total, all.scenario, text::join(first, ", "),
                                           missing.size() > first.size() ? ", ..." : ""));
  }
  std::vector<Row> rows;
  for (auto& [k, row] : all.rows) rows.push_back(std::move(row));
  const std::string report = rows_json(all.scenario, rows, "");
  out << report << std::flush;
  if (!rows_csv_path.empty()) write_output(rows_csv_path, rows_csv(rows), out);
  if (!rows_json_path.empty()) write_output(rows_json_path, report, out);
}

void set_log_level(const std::string& level) {
  std::string l = text::lower(level);
  if (l == "warning") l = "warn";
  // The reference's fatal and panic levels: only errors are printed.
  if (l == "fatal" || l == "panic") l = "err";
  if (l == "error") l = "err";
  auto parsed = spdlog::level::from_str(l);
  if (parsed == spdlog::level::off && l != "off")
    throw InputError("--log", "unknown level '" + level + "'; use trace, debug, info, warn, error, fatal, panic or off");
  spdlog::set_level(parsed);
}

void run(const RunRequest& req, std::ostream& out) {
  if (!req.scenario.empty()) return scenario_run(req, out);
  const RunConfig config = build_config({&req.command_line});
  set_log_level(config.outputs.log_level);
  if (config.origins.count("jobs"))
    spdlog::warn("{} has no effect on a single run (it parallelises a scenario's sweep or search)",
                 config.where("jobs"));
  single_run(config, req.dump_config, out);
}

// `blis replay`: a single run whose workload is the trace (resolve.cpp:
// resolve_replay_workload).
void replay(const ReplayRequest& req, std::ostream& out) {
  RunConfig config = build_config({&req.command_line});
  set_log_level(config.outputs.log_level);
  config.replay = RunConfig::Replay{req.trace_header, req.trace_data, req.results_path, "replayed"};
  if (req.results_path) check_writable(*req.results_path, "--results-path");
  single_run(config, false, out);
}

}  // namespace blis
