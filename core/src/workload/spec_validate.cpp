// Validation of a workload spec (spec workload §5.13), the v1 upgrade (§5.1)
// and the placement of errors at file positions.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "workload/slo_class.hpp"
#include "workload/spec_internal.hpp"

namespace blis::workload {

namespace {

std::string fmt_double(double v) { return fmt::format("{}", v); }

// The v2 name of a v1 SLO class, or nullptr.
const char* v2_slo_name(const std::string& slo) {
  if (slo == "realtime") return "critical";
  if (slo == "interactive") return "standard";
  return nullptr;
}

bool is_valid_dist_type(const std::string& type) {
  return type == "gaussian" || type == "exponential" || type == "pareto_lognormal" ||
         type == "constant" || type == "empirical";
}

void validate_dist(const DistSpec& dist, const std::string& where) {
  if (!is_valid_dist_type(dist.type)) {
    throw InputError(where + ".type",
                     "unknown distribution type '" + dist.type +
                         "' (expected gaussian, exponential, pareto_lognormal, constant or "
                         "empirical)");
  }
  for (const auto& [name, value] : dist.params) {
    if (!std::isfinite(value)) throw InputError(where + ".params." + name, "must be finite");
  }
}

void validate_slo_class(const std::string& slo, const std::string& where) {
  if (!slo_class_from_name(slo)) {
    throw InputError(where + ".slo_class",
                     "unknown SLO class '" + slo + "' (expected " + kSloClassChoices + ")");
  }
}

void validate_rate_fraction(double f, const std::string& where) {
  if (!std::isfinite(f) || f <= 0)
    throw InputError(where + ".rate_fraction", "must be a finite number > 0, got " + fmt_double(f));
}

void validate_process(const std::string& process, const std::string& where) {
  if (process != "poisson" && process != "gamma" && process != "weibull" && process != "constant") {
    throw InputError(where + ".arrival.process",
                     "unknown arrival process '" + process + "' (expected poisson, gamma, weibull or constant)");
  }
}

// spec head §4.2: a closed-loop client has users and a think time instead
// of a rate; it cannot be a multi-turn client.
void validate_closed_loop(const ClientSpec& c, const std::string& where) {
  if (c.concurrency > 1'000'000)
    throw InputError(where + ".concurrency", "must be at most 1000000, got " + std::to_string(c.concurrency));
  if (c.rate_fraction != 0)
    throw InputError(where + ".rate_fraction", "a concurrency client has no rate: leave rate_fraction out");
  if (c.think_time_us < 0)
    throw InputError(where + ".think_time_us", "must be >= 0, got " + std::to_string(c.think_time_us));
  if (c.reasoning && c.reasoning->multi_turn)
    throw InputError(where + ".reasoning.multi_turn", "a concurrency client cannot be a multi-turn client");
  // Its users draw lengths from the input and output distributions only:
  // what would shape other requests is refused rather than ignored.
  if (c.reasoning) throw InputError(where + ".reasoning", "a concurrency client has no reasoning block");
  if (c.multimodal) throw InputError(where + ".multimodal", "a concurrency client has no multimodal block");
  if (c.lifecycle)
    throw InputError(where + ".lifecycle", "a concurrency client has no lifecycle windows: its users send "
                                           "as their requests complete");
}

void validate_client(const ClientSpec& c, const std::string& where) {
  validate_slo_class(c.slo_class, where);
  if (c.concurrency < 0)
    throw InputError(where + ".concurrency", "must be >= 0, got " + std::to_string(c.concurrency));
  if (c.timeout_us && *c.timeout_us < 0)
    throw InputError(where + ".timeout", "must be >= 0 (µs; 0 = none), got " + std::to_string(*c.timeout_us));
  // A request holds it in 32 bits: up to 35 minutes.
  if (c.slo_target_us < 0 || c.slo_target_us > INT32_MAX)
    throw InputError(where + ".slo_target_us",
                     "must be in [0, 2147483647] (µs; 0 = none), got " + std::to_string(c.slo_target_us));
  if (c.concurrency > 0) {
    validate_closed_loop(c, where);
    validate_dist(c.input_distribution, where + ".input_distribution");
    validate_dist(c.output_distribution, where + ".output_distribution");
    return;
  }
  validate_rate_fraction(c.rate_fraction, where);
  const std::string& process = c.arrival.process;
  validate_process(process, where);
  if (c.arrival.cv) {
    const double cv = *c.arrival.cv;
    if (process == "weibull" && (cv < 0.01 || cv > 10.4)) {
      throw InputError(where + ".arrival.cv", "weibull cv must lie in [0.01, 10.4], got " + fmt_double(cv));
    }
    if (!std::isfinite(cv) || cv <= 0) {
      throw InputError(where + ".arrival.cv", "must be a finite number > 0, got " + fmt_double(cv));
    }
  }
  if (c.prefix_length < 0) {
    throw InputError(where + ".prefix_length", "must be >= 0, got " + std::to_string(c.prefix_length));
  }
  if (c.prefix_length > kMaxRequestTokens) {
    throw InputError(where + ".prefix_length", "must be at most " + std::to_string(kMaxRequestTokens) +
                                                   " tokens (one request's limit), got " +
                                                   std::to_string(c.prefix_length));
  }
  validate_dist(c.input_distribution, where + ".input_distribution");
  validate_dist(c.output_distribution, where + ".output_distribution");
}

// Cohorts get no v1 name mapping and no cv check (spec workload §5.10).
void validate_cohort(const CohortSpec& c, const std::string& where) {
  if (c.population < 1 || c.population > 100000)
    throw InputError(where + ".population", "must be between 1 and 100000, got " + std::to_string(c.population));
  validate_rate_fraction(c.rate_fraction, where);
  validate_slo_class(c.slo_class, where);
  validate_process(c.arrival.process, where);
  validate_dist(c.input_distribution, where + ".input_distribution");
  validate_dist(c.output_distribution, where + ".output_distribution");
  if (c.diurnal) {
    const double r = c.diurnal->peak_to_trough_ratio;
    if (!std::isfinite(r) || r < 1)
      throw InputError(where + ".diurnal.peak_to_trough_ratio", "must be a finite number >= 1, got " + fmt_double(r));
    if (c.diurnal->peak_hour < 0 || c.diurnal->peak_hour > 23)
      throw InputError(where + ".diurnal.peak_hour",
                       "must be between 0 and 23, got " + std::to_string(c.diurnal->peak_hour));
  }
  if (c.spike) {
    if (c.spike->start_time_us < 0)
      throw InputError(where + ".spike.start_time_us", "must be >= 0, got " + std::to_string(c.spike->start_time_us));
    if (c.spike->duration_us <= 0)
      throw InputError(where + ".spike.duration_us", "must be > 0, got " + std::to_string(c.spike->duration_us));
  }
  if (c.drain) {
    if (c.drain->start_time_us < 0)
      throw InputError(where + ".drain.start_time_us", "must be >= 0, got " + std::to_string(c.drain->start_time_us));
    if (c.drain->ramp_duration_us <= 0)
      throw InputError(where + ".drain.ramp_duration_us",
                       "must be > 0, got " + std::to_string(c.drain->ramp_duration_us));
  }
}

void validate_unlocated(const WorkloadSpec& spec) {
  // spec workload §5.13, in order; the first failure wins.
  if (!spec.category.empty() && spec.category != "language" && spec.category != "multimodal" &&
      spec.category != "reasoning") {
    throw InputError("category", "unknown category '" + spec.category +
                                     "' (expected language, multimodal, reasoning or empty)");
  }
  // A spec of concurrency clients alone has no rate to check.
  const bool closed_only =
      !spec.clients.empty() && spec.cohorts.empty() &&
      std::all_of(spec.clients.begin(), spec.clients.end(), [](const ClientSpec& c) { return c.concurrency > 0; });
  if (!closed_only && (!std::isfinite(spec.aggregate_rate) || spec.aggregate_rate <= 0)) {
    throw InputError("aggregate_rate", "must be a finite number > 0, got " + fmt_double(spec.aggregate_rate));
  }
  if (spec.clients.empty() && spec.cohorts.empty() && !spec.servegen_data)
    throw InputError("clients", "the workload has no clients and no cohorts");
  // A spec that was never upgraded still accepts the v1 class names.
  const bool legacy = spec.version.empty() || spec.version == "1";
  for (size_t i = 0; i < spec.clients.size(); ++i) {
    ClientSpec c = spec.clients[i];
    if (const char* mapped = legacy ? v2_slo_name(c.slo_class) : nullptr) c.slo_class = mapped;
    validate_client(c, "clients[" + std::to_string(i) + "]");
  }
  for (size_t i = 0; i < spec.cohorts.size(); ++i)
    validate_cohort(spec.cohorts[i], "cohorts[" + std::to_string(i) + "]");
  // spec head §4.2: closed-loop users and multi-turn sessions do not mix.
  const auto closed = std::find_if(spec.clients.begin(), spec.clients.end(),
                                   [](const ClientSpec& c) { return c.concurrency > 0; });
  const auto sessions = std::find_if(spec.clients.begin(), spec.clients.end(), [](const ClientSpec& c) {
    return c.reasoning && c.reasoning->multi_turn;
  });
  if (closed != spec.clients.end() && sessions != spec.clients.end())
    throw InputError("clients[" + std::to_string(closed - spec.clients.begin()) + "].concurrency",
                     "concurrency clients cannot be mixed with multi-turn clients");
}

}  // namespace

void upgrade_legacy_version(WorkloadSpec& spec) {
  if (!spec.version.empty() && spec.version != "1") return;
  for (size_t i = 0; i < spec.clients.size(); ++i) {
    std::string& slo = spec.clients[i].slo_class;
    if (const char* mapped = v2_slo_name(slo)) {
      spdlog::warn("clients[{}].slo_class: '{}' is deprecated, use '{}'", i, slo, mapped);
      slo = mapped;
    }
  }
  spec.version = "2";
}

void rethrow_located(const SpecSource& source, const InputError& e) {
  if (source.file.empty()) throw e;
  // The field itself, else the nearest enclosing field that was written
  // ("clients[0].rate_fraction" absent -> "clients[0]"), else the file.
  std::string path = e.where();
  while (!path.empty()) {
    const auto it = source.positions.find(path);
    if (it != source.positions.end()) throw ConfigError(it->second, e.what());
    const size_t cut = path.find_last_of(".[");
    path.resize(cut == std::string::npos ? 0 : cut);
  }
  throw ConfigError(source.file, e.what());
}

}  // namespace blis::workload

namespace blis {

void validate_workload_spec(const WorkloadSpec& spec) {
  try {
    workload::validate_unlocated(spec);
  } catch (const InputError& e) {
    workload::rethrow_located(spec.source, e);
  }
}

}  // namespace blis
