// `blis serve`: its own flags, then the run settings of `blis run` that
// describe the served deployment (model, GPU, TP, latency model, KV, batch
// limits, instances and routing), from the same table of settings.
#include "app/commands.hpp"

#include <blis/serve.hpp>
#include <blis/settings.hpp>

#include <algorithm>
#include <array>

namespace blis::app {

struct ServeCli {
  CLI::App* cmd = nullptr;
  ServeRequest req;
  std::map<std::string, CLI::Option*> options;
};

std::shared_ptr<ServeCli> add_serve_command(CLI::App& app) {
  auto s = std::make_shared<ServeCli>();
  CLI::App* cmd = s->cmd = app.add_subcommand(
      "serve", "Serve an OpenAI-compatible API (completions, chat, models, health, Prometheus metrics) whose "
               "answers come from the simulation, in real or scaled time; stops on SIGTERM or SIGINT");
  ServeRequest& r = s->req;
  cmd->add_option("--host", r.host, "Address to listen on")->capture_default_str()->group("Serve");
  cmd->add_option("--port", r.port, "Port to listen on; 0 = a free one. The address is printed on stderr as "
                                    "\"listening on http://HOST:PORT\"")
      ->capture_default_str()->group("Serve");
  cmd->add_option("--time-scale", r.time_scale, "Simulated seconds per wall-clock second: 1 = real time, "
                                                "10 = ten times faster than real")
      ->capture_default_str()->group("Serve");
  cmd->add_option("--served-model-name", r.served_model_name,
                  "The model name the API answers to and reports (default: the --model of the run)")
      ->group("Serve");
  cmd->add_option("--read-timeout", r.read_timeout, "Seconds a client may take to send a request; one that "
                                                    "stalls mid-request gets HTTP 408")
      ->capture_default_str()->group("Serve");
  cmd->add_option("--shutdown-grace", r.shutdown_grace, "Seconds open requests get to finish after SIGTERM or "
                                                        "SIGINT; the rest are then cancelled")
      ->capture_default_str()->group("Serve");
  // The deployment's settings; what only a batch run reads (workload,
  // outputs, traces, SLO targets, horizon) is left out.
  std::vector<std::string> skip{"horizon", "memory_limit"};
  static const std::array<const char*, 4> kBatchOnly = {"outputs", "workload", "tracing", "slo"};
  for (const SettingDef& def : setting_table())
    if (std::find(kBatchOnly.begin(), kBatchOnly.end(), def.group) != kBatchOnly.end())
      skip.push_back(def.key);
  s->options = add_run_flags(*cmd, skip);
  return s;
}

bool serve_parsed(const ServeCli& s) { return s.cmd->parsed(); }

const std::map<std::string, CLI::Option*>& serve_options(const ServeCli& s) { return s.options; }

int run_serve(ServeCli& s) {
  for (const auto& [key, values] : given_run_flags(s.options)) {
    const std::string flag = find_setting(key)->flag();
    for (const auto& v : values) s.req.command_line.push_back(Setting{key, v, flag});
  }
  return blis::serve(s.req);
}

}  // namespace blis::app
