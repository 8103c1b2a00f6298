// `blis plugins list` and `blis plugins inspect FILE`.
#include "app/commands.hpp"
#include <blis/environment.hpp>

#include <blis/errors.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin_loader.hpp>
#include <blis/plugin_overrides.hpp>

#include <fmt/format.h>

#include <iostream>

namespace blis::app {

namespace {

template <class T>
void print_registry(const Registry<T>& reg) {
  for (const auto& [name, e] : reg.entries())
    std::cout << fmt::format("{:<17} {:<18} {:<8} {}\n    {}\n", kind_name(reg.kind()), name,
                             e.version, e.source, e.summary);
}

}  // namespace

int run_plugins_list(const std::vector<std::string>& plugin_dirs) {
  Environment env = Environment::load(plugin_dirs, 42);
  std::cout << fmt::format("{:<17} {:<18} {:<8} {}\n", "KIND", "NAME", "VERSION", "SOURCE");
  print_registry(env.registries->latency);
  print_registry(env.registries->scorers);
  print_registry(env.registries->admission);
  return 0;
}

namespace {

// A representative configuration for the smoke test: Qwen3-14B on one H100.
// Each latency model gets the coefficients a run would give it: its own data
// defaults, none if it is analytical, else the model's trained coefficients.
struct SmokeData {
  ConfigTable base;
  std::optional<DataCatalog> data;
};

SmokeData smoke_config(const std::vector<std::string>& extra) {
  SmokeData s;
  Environment env = Environment::load({}, 42);
  try {
    s.data = DataCatalog::load(env.data_dir);
    auto arch = s.data->bundled_model("qwen/qwen3-14b");
    HardwareSpec hw = s.data->hardware("H100");
    put_latency_config(s.base, arch ? &*arch : nullptr, &hw, 1, {}, {}, 16);
  } catch (const Error&) {
    // No bundled data: plugins that need it will say which key is missing.
  }
  for (const auto& kv : extra) {
    auto [key, value] = parse_key_value(kv, "--config");
    s.base.set(key, std::move(value));
  }
  return s;
}

ConfigTable latency_smoke_config(const SmokeData& s, const std::string& name, uint32_t needs) {
  ConfigTable cfg;
  if (s.data) {
    std::optional<GlobalCoefficients> c;
    if (const auto* own = s.data->plugin_coefficients(name)) c = *own;
    if (!c && (needs & (BLIS_NEED_MODEL | BLIS_NEED_HARDWARE)) == 0) {
      const auto d = s.data->defaults_for("qwen/qwen3-14b");
      if (auto e = s.data->coefficients("qwen/qwen3-14b", "H100", 1, d ? d->vllm_version : ""))
        c = GlobalCoefficients{e->alpha, e->beta};
    }
    if (c) {
      cfg.set("alpha_coeffs", c->alpha);
      cfg.set("beta_coeffs", c->beta);
    }
  }
  cfg.merge(s.base);
  return cfg;
}

// Creates each plugin once and makes one call of each kind, so a plugin that
// fails at create() or throws from its calls is caught here, not mid-run.
void smoke_test(const std::shared_ptr<LoadedLibrary>& lib, const SmokeData& smoke) {
  const ConfigTable& cfg = smoke.base;
  Registries reg;
  register_library(reg, lib);
  const uint64_t hashes[4] = {1, 2, 3, 4};
  blis_request_view req{sizeof(blis_request_view), 16, 0, 0, 64, 0, hashes, 4, 0, 0, "", ""};
  blis_instance_snapshot snaps[2] = {{0, 1, 2, 3, 100, 200, 0.5, 0.1},
                                     {1, 0, 0, 0, 200, 200, 0.0, 0.0}};
  blis_route_input in{sizeof(blis_route_input), sizeof(blis_instance_snapshot), 0, &req, snaps, 2};
  for (const auto& [name, e] : reg.latency.entries()) {
    const ConfigTable latency_cfg = latency_smoke_config(smoke, name, e.needs);
    auto m = e.factory(CreateArgs{&latency_cfg, 42});
    blis_batch_entry entries[2] = {{512, 0, 512, 0, 512, BLIS_PHASE_PREFILL},
                                   {1024, 1024, 1024, 0, 1, BLIS_PHASE_DECODE}};
    blis_step_batch b{sizeof(blis_step_batch), sizeof(blis_batch_entry), 0, 2, entries};
    m->step_time(b);
    m->queueing_time(req);
    m->output_token_time();
    m->post_decode_overhead();
  }
  for (const auto& [name, e] : reg.scorers.entries()) {
    auto s = e.factory(CreateArgs{&cfg, 42});
    double scores[2];
    s->score(in, scores);
    if (s->observes()) s->observe(in, 0);
  }
  for (const auto& [name, e] : reg.admission.entries()) {
    std::string reason;
    e.factory(CreateArgs{&cfg, 42})->admit(in, reason);
  }
}

}  // namespace

int run_plugins_inspect(const std::string& path, const std::vector<std::string>& config) {
  auto lib = open_plugin_library(path);
  smoke_test(lib, smoke_config(config));
  LibraryManifest m = describe(*lib);
  std::cout << fmt::format("{}: blis plugin library, ABI {}.{}, {} plugin(s)\n", m.path,
                           m.abi_major, m.abi_minor, m.plugins.size());
  for (const auto& p : m.plugins)
    std::cout << fmt::format("  {:<17} {:<18} {:<8} {}\n", kind_name(p.kind), p.name, p.version,
                             p.summary);
  return 0;
}

}  // namespace blis::app
