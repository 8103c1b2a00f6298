// `blis serve`: an OpenAI-compatible HTTP endpoint whose answers come from
// the simulation, in real or scaled time (docs/serve.md). The command line
// (core/app/serve_cmd.cpp) only turns flags into a ServeRequest.
#pragma once

#include <blis/scenario.hpp>

#include <cstdint>
#include <string>

namespace blis {

struct ServeRequest {
  Settings command_line;          // the run settings, as `blis run` takes them
  std::string host = "127.0.0.1";
  int64_t port = 8000;            // 0: a free port, printed on stderr
  double time_scale = 1.0;        // simulated seconds per wall second
  std::string served_model_name;  // "": the run's model
  double read_timeout = 30;       // s a client may take to send its request
  double shutdown_grace = 30;     // s open requests get to finish after SIGTERM/SIGINT
};

// Serves until SIGTERM or SIGINT, then lets open requests finish (up to
// shutdown_grace, then cancels them), and returns 0. Throws blis::Error on bad
// settings or when the address cannot be bound (exit 2).
int serve(const ServeRequest& request);

}  // namespace blis
