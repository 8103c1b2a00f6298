// `blis convert` and `blis compose` (spec cli.md §4-§5): each builds a
// workload spec, validates it as a run would, and prints it as YAML.
#include <blis/environment.hpp>
#include <blis/errors.hpp>
#include <blis/model_data.hpp>
#include <blis/run.hpp>
#include <blis/workload_convert.hpp>

#include <fmt/format.h>

#include <cmath>

#include "util/text.hpp"

namespace blis {

namespace {

WorkloadSpec preset_spec(const ConvertRequest& r) {
  if (!std::isfinite(r.rate) || r.rate <= 0)
    throw InputError("--rate", fmt::format("must be a finite value > 0, got {}", r.rate));
  if (r.num_requests <= 0) throw InputError("--num-requests", fmt::format("must be > 0, got {}", r.num_requests));
  DataCatalog data = DataCatalog::load(Environment::load({}, 42).data_dir);
  if (!r.defaults_filepath.empty()) data.apply_reference_defaults(r.defaults_filepath);
  const auto p = data.preset(r.name);
  if (!p)
    throw InputError("--name", fmt::format("unknown preset '{}'; the presets are: {}", r.name,
                                           text::join(data.preset_names(), ", ")));
  DistributionWorkload d;
  d.rate = r.rate;
  d.num_requests = r.num_requests;
  d.prefix_tokens = p->prefix_tokens;
  d.prompt_mean = p->prompt_tokens, d.prompt_stdev = p->prompt_tokens_stdev;
  d.prompt_min = p->prompt_tokens_min, d.prompt_max = p->prompt_tokens_max;
  d.output_mean = p->output_tokens, d.output_stdev = p->output_tokens_stdev;
  d.output_min = p->output_tokens_min, d.output_max = p->output_tokens_max;
  // Seed 0 in the file: `blis run --workload-spec F --seed S` then generates
  // what `blis run --workload NAME --seed S` does (spec workload §9.1).
  WorkloadSpec spec = synthesize_distribution_spec(d, 0);
  spec.clients.front().id = "preset-" + r.name;
  return spec;
}

WorkloadSpec build(const ConvertRequest& r) {
  if (r.kind == "csv-trace") {
    if (r.horizon < 0) throw InputError("--horizon", fmt::format("must be >= 0 (0 = the whole file), got {}", r.horizon));
    return csv_trace_to_spec(r.file, r.horizon);
  }
  if (r.kind == "preset") return preset_spec(r);
  if (r.kind == "servegen") return servegen_to_spec(r.file);
  if (r.kind == "inference-perf") return inference_perf_to_spec(r.file);
  if (r.kind == "compose") {
    if (r.from.empty()) throw InputError("--from", "give at least one workload spec to compose");
    std::vector<WorkloadSpec> specs;
    for (const std::string& path : r.from) specs.push_back(load_workload_spec(path));
    return compose_specs(specs);
  }
  throw InputError("convert", "unknown conversion '" + r.kind + "'");
}

}  // namespace

void convert_workload(const ConvertRequest& request, std::ostream& out) {
  const WorkloadSpec spec = build(request);
  try {
    validate_workload_spec(spec);
  } catch (const Error& e) {
    throw InputError("", std::string("the converted spec is invalid: ") + e.what());
  }
  out << workload_spec_yaml(spec);
}

}  // namespace blis
