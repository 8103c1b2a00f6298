// The MPI farm (BLIS_WITH_MPI): under `mpirun -np K blis ...`, rank 0 runs the
// command — scenario, sweep, search or plan — and ranks 1..K-1 simulate the
// configurations it hands out, one at a time each, as they become free
// (dynamic load balancing). Configurations travel as settings
// (settings_of) with the plan's output flags, outcomes as metrics, the
// steady-state verdict, the timed samples and the latency CDFs; results are
// placed by index, so the report is the one `--jobs 1` prints. A worker that
// fails sends its error; rank 0 stops handing out work and reports it.
#include <blis/mpi.hpp>

#include "run/farm.hpp"
#include "run/resolve.hpp"

#include <blis/errors.hpp>
#include <blis/settings.hpp>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <deque>

namespace blis {
namespace {

enum Tag : int { kTask = 1, kResult = 2, kStop = 3 };

void send(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

// Receives a message with `tag` from `from` (MPI_ANY_SOURCE allowed).
std::string receive(int from, int tag, int* source) {
  MPI_Status status;
  MPI_Probe(from, tag, MPI_COMM_WORLD, &status);
  int size = 0;
  MPI_Get_count(&status, MPI_CHAR, &size);
  std::string text(static_cast<size_t>(size), '\0');
  MPI_Recv(text.data(), size, MPI_CHAR, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (source != nullptr) *source = status.MPI_SOURCE;
  return text;
}

std::string task_text(size_t index, const RunConfig& c) {
  nlohmann::json j;
  j["index"] = index;
  j["warn_unsteady"] = c.outputs.warn_unsteady;
  j["keep_timed_samples"] = c.outputs.keep_timed_samples;
  j["keep_distributions"] = c.outputs.keep_distributions;
  for (const Setting& s : settings_of(c)) j["settings"].push_back({s.flag, s.value});
  // The configuration's path rights (run/path_rules.hpp) are no setting: they
  // travel beside them, so a worker refuses what the coordinator would.
  j["rights"] = {{"scenario", c.rights.scenario}, {"native", c.rights.native}};
  return j.dump();
}

std::string result_text(size_t index, const RunOutcome& o) {
  nlohmann::json j;
  j["index"] = index;
  j["ok"] = true;
  for (const MetricField& f : o.metrics) j["metrics"].push_back({f.name, f.value, f.integer});
  const RunOutcome::GatewayLost& g = o.gateway_lost;
  j["gateway_lost"] = {g.rejected, g.shed, g.expired, g.evicted};
  const SteadyState& s = o.steady;
  j["steady"] = {static_cast<int>(s.verdict), s.offered_rps, s.started_rps, s.ttft_middle_ms, s.ttft_last_ms};
  j["saturation"] = nlohmann::json::object();
  for (const auto& [name, level] : o.saturation.labels) j["saturation"][name] = static_cast<int>(level);
  // A plan judges its targets on rank 0 from the timed samples (flattened as
  // at, value, weight) and draws its report from the CDFs.
  if (!o.timed.empty()) {
    auto flat = [](const std::vector<TimedSample>& v) {
      std::vector<int64_t> out;
      out.reserve(v.size() * 3);
      for (const TimedSample& t : v) out.insert(out.end(), {t.at, t.value, t.weight});
      return out;
    };
    j["timed"] = {{"ttft", flat(o.timed.ttft)},     {"e2e", flat(o.timed.e2e)},
                  {"tpot", flat(o.timed.tpot)},     {"itl", flat(itl_samples(o.timed))},
                  {"first", o.timed.first_arrival}, {"last", o.timed.last_arrival}};
  }
  j["cdf"] = {o.cdf.ttft_ms, o.cdf.itl_ms, o.cdf.e2e_ms};
  return j.dump();
}

TimedSamples timed_of(const nlohmann::json& j) {
  auto unflat = [](const nlohmann::json& a) {
    const auto v = a.get<std::vector<int64_t>>();
    std::vector<TimedSample> out(v.size() / 3);
    for (size_t k = 0; k < out.size(); ++k) out[k] = TimedSample{v[3 * k], v[3 * k + 1], v[3 * k + 2]};
    return out;
  };
  TimedSamples t;
  t.ttft = unflat(j.at("ttft"));
  t.e2e = unflat(j.at("e2e"));
  t.tpot = unflat(j.at("tpot"));
  t.itl = unflat(j.at("itl"));
  t.first_arrival = j.at("first").get<int64_t>();
  t.last_arrival = j.at("last").get<int64_t>();
  return t;
}

std::string error_text(size_t index, const std::string& message, int exit_code) {
  return nlohmann::json{{"index", index}, {"ok", false}, {"message", message}, {"exit_code", exit_code}}.dump();
}

class MpiFarm final : public Farm {
 public:
  explicit MpiFarm(int size) : workers_(size - 1) {}

  FarmFailure run(const std::vector<RunConfig>& configs, int64_t, const FarmDone& done) override {
    std::deque<size_t> todo;
    for (size_t i = 0; i < configs.size(); ++i) todo.push_back(i);
    std::vector<std::chrono::steady_clock::time_point> started(configs.size());
    int busy = 0;
    auto hand_out = [&](int worker) {
      const size_t i = todo.front();
      todo.pop_front();
      started[i] = std::chrono::steady_clock::now();
      send(task_text(i, configs[i]), worker, kTask);
      ++busy;
    };
    for (int w = 1; w <= workers_ && !todo.empty(); ++w) hand_out(w);
    FarmFailure failure;
    while (busy > 0) {
      int worker = 0;
      const nlohmann::json j = nlohmann::json::parse(receive(MPI_ANY_SOURCE, kResult, &worker));
      --busy;
      const size_t i = j.at("index").get<size_t>();
      if (!j.at("ok").get<bool>()) {
        auto error = std::make_exception_ptr(
            Error(j.at("message").get<std::string>(), j.at("exit_code").get<int>()));
        if (!failure || i < failure->first) failure = std::make_pair(i, error);
      } else {
        RunOutcome o;
        for (const auto& m : j.at("metrics")) o.metrics.push_back({m.at(0).get<std::string>(), m.at(1).get<double>(), m.at(2).get<bool>()});
        const auto& s = j.at("steady");
        o.steady = SteadyState{static_cast<Verdict>(s.at(0).get<int>()), s.at(1).get<double>(), s.at(2).get<double>(),
                               s.at(3).get<double>(), s.at(4).get<double>()};
        for (const auto& [name, level] : j.at("saturation").items())
          o.saturation.labels[name] = static_cast<SaturationLevel>(level.get<int>());
        if (j.contains("timed")) o.timed = timed_of(j.at("timed"));
        const auto& lost = j.at("gateway_lost");
        o.gateway_lost = {lost.at(0).get<int64_t>(), lost.at(1).get<int64_t>(), lost.at(2).get<int64_t>(),
                          lost.at(3).get<int64_t>()};
        const auto& cdf = j.at("cdf");
        o.cdf = LatencyCdf{cdf.at(0).get<std::vector<double>>(), cdf.at(1).get<std::vector<double>>(),
                           cdf.at(2).get<std::vector<double>>()};
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started[i]).count();
        done(i, o, secs);
      }
      if (!failure && !todo.empty()) hand_out(worker);
    }
    return failure;
  }

 private:
  int workers_;
};

}  // namespace

int mpi_start(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0 && size > 1) set_simulation_farm(std::make_unique<MpiFarm>(size));
  return rank;
}

void mpi_worker() {
  for (;;) {
    MPI_Status status;
    MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    if (status.MPI_TAG == kStop) {
      receive(0, kStop, nullptr);
      return;
    }
    const nlohmann::json j = nlohmann::json::parse(receive(0, kTask, nullptr));
    const size_t index = j.at("index").get<size_t>();
    try {
      Settings settings;
      for (const auto& s : j.at("settings")) {
        const std::string value = s.at(1).get<std::string>();
        const std::string key = s.at(0).get<std::string>();
        const SettingDef* def = find_setting(key);
        settings.push_back(Setting{key, value, def != nullptr ? def->flag() : key, {value}});
      }
      RunConfig c;
      apply_settings(c, settings);
      c.outputs.warn_unsteady = j.at("warn_unsteady").get<bool>();
      c.outputs.keep_timed_samples = j.at("keep_timed_samples").get<bool>();
      c.outputs.keep_distributions = j.at("keep_distributions").get<bool>();
      c.rights.scenario = j.at("rights").at("scenario").get<std::string>();
      c.rights.native = j.at("rights").at("native").get<std::vector<std::string>>();
      send(result_text(index, simulate(c)), 0, kResult);
    } catch (const Error& e) {
      send(error_text(index, e.what(), e.exit_code()), 0, kResult);
    } catch (const std::exception& e) {
      send(error_text(index, e.what(), 1), 0, kResult);
    }
  }
}

void mpi_finish(int rank) {
  if (rank == 0) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int w = 1; w < size; ++w) send("", w, kStop);
  }
  MPI_Finalize();
}

}  // namespace blis
