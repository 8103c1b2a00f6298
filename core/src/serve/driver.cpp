#include "serve/driver.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace blis::live {

void Histogram::observe(double x) {
  const auto at = std::lower_bound(bounds.begin(), bounds.end(), x);  // le: x <= bound
  ++counts[static_cast<size_t>(at - bounds.begin())];
  sum += x;
  ++count;
}

// vLLM's buckets (vllm/engine/metrics.py), in seconds.
Driver::Figures::Figures()
    : ttft({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
            80.0, 160.0, 640.0, 2560.0}),
      itl({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
           960.0, 1920.0, 7680.0}) {}

Driver::~Driver() { stop(); }

void Driver::start() {
  sim_->start();
  start_ = Clock::now();
  thread_ = std::thread([this] { loop(); });
}

void Driver::stop() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

uint64_t Driver::submit(WorkloadRequest spec, std::shared_ptr<Receiver> receiver) {
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lk(m_);
    id = next_id_++;
    spec.id = id;
    ++open_;
    inbox_.push_back(Command{Command::Submit, id, std::move(spec), std::move(receiver)});
  }
  cv_.notify_one();
  return id;
}

void Driver::cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> lk(m_);
    inbox_.push_back(Command{Command::Cancel, id, {}, nullptr});
  }
  cv_.notify_one();
}

void Driver::cancel_all() {
  {
    std::lock_guard<std::mutex> lk(m_);
    inbox_.push_back(Command{Command::CancelAll, 0, {}, nullptr});
  }
  cv_.notify_one();
}

SimTime Driver::virtual_now() const {
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start_).count();
  return static_cast<SimTime>(us * scale_);
}

Driver::Clock::time_point Driver::wall_of(SimTime t) const {
  return start_ + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double, std::micro>(static_cast<double>(t) / scale_));
}

void Driver::loop() {
  std::vector<Command> commands;
  SimTime wake = kForever;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(m_);
      auto ready = [&] { return !inbox_.empty() || stop_; };
      if (wake == kForever)
        cv_.wait(lk, ready);
      else
        cv_.wait_until(lk, wall_of(wake), ready);
      if (stop_) return;
      commands.swap(inbox_);
    }
    const SimTime now = std::max(virtual_now(), sim_->now());
    try {
      sim_->advance(now);
      for (Command& c : commands) apply(c, now);
      commands.clear();
      sim_->advance(now);  // the arrivals of now: admitted, routed, perhaps their first step priced
    } catch (const std::exception& e) {
      // A plugin or script failing mid-run: the server cannot go on simulating.
      spdlog::error("the simulation stopped: {}", e.what());
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
      return;
    }
    deliver(now);
    publish_loads();
    wake = sim_->next_event();
    if (!pending_.empty()) wake = std::min(wake, pending_.top().t);
  }
}

void Driver::apply(Command& c, SimTime now) {
  switch (c.kind) {
    case Command::Submit: {
      Open o;
      o.receiver = std::move(c.receiver);
      o.arrival = now;
      o.prompt = c.spec.input_tokens;
      o.handle = sim_->inject(c.spec);
      open_map_.emplace(c.id, std::move(o));
      return;
    }
    case Command::Cancel:
      if (auto it = open_map_.find(c.id); it != open_map_.end()) sim_->cancel(it->second.handle);
      return;
    case Command::CancelAll:
      for (auto& [id, o] : open_map_) sim_->cancel(o.handle);
      return;
  }
}

void Driver::token(const Request& r, SimTime end) { pending_.push(Pending{end, seq_++, r.spec.id, std::nullopt}); }

void Driver::finished(const Request& r, SimTime t, LiveEnd how) {
  pending_.push(Pending{std::max(t, sim_->now()), seq_++, r.spec.id, how});
}

void Driver::preempted(const Request&) {
  std::lock_guard<std::mutex> lk(mm_);
  ++fig_.preemptions;
}

void Driver::deliver(SimTime now) {
  const Clock::time_point wall = Clock::now();
  std::lock_guard<std::mutex> lk(mm_);
  while (!pending_.empty() && pending_.top().t <= now) {
    const Pending p = pending_.top();
    pending_.pop();
    auto it = open_map_.find(p.id);
    if (it == open_map_.end()) continue;  // left already (cancelled)
    Open& o = it->second;
    const double lag = std::chrono::duration<double>(wall - wall_of(p.t)).count();
    fig_.lag_max = std::max(fig_.lag_max, lag);
    fig_.lag_sum += lag;
    ++fig_.lag_count;
    if (!p.end) {
      const double t = static_cast<double>(p.t) / 1e6;
      if (o.tokens == 0)
        fig_.ttft.observe(t - static_cast<double>(o.arrival) / 1e6);
      else
        fig_.itl.observe(t - static_cast<double>(o.last_token) / 1e6);
      o.last_token = p.t;
      ++o.tokens;
      ++fig_.generation_tokens;
      o.receiver->update(o.tokens, std::nullopt);
      continue;
    }
    if (*p.end == LiveEnd::Completed) {
      fig_.e2e.observe(static_cast<double>(p.t - o.arrival) / 1e6);
      fig_.prompt_tokens += o.prompt;
      ++fig_.finished_length;
    } else if (*p.end == LiveEnd::Rejected) {
      ++fig_.rejected;
    } else {
      ++fig_.finished_abort;
    }
    o.receiver->update(o.tokens, p.end);
    open_map_.erase(it);
    --open_;
  }
}

void Driver::publish_loads() {
  Figures& f = fig_;
  int64_t running = 0, waiting = 0, used = 0, total = 0, hits = 0, queries = 0;
  for (const auto& l : sim_->loads()) {
    running += l.running;
    waiting += l.waiting;
    used += l.used_blocks;
    total += l.total_blocks;
    hits += l.hit_blocks;
    queries += l.hit_blocks + l.missed_blocks;
  }
  std::lock_guard<std::mutex> lk(mm_);
  f.running = running;
  f.waiting = waiting;
  f.used_blocks = used;
  f.total_blocks = total;
  f.hit_blocks = hits;
  f.query_blocks = queries;
}

namespace {

void put_histogram(std::string& out, const char* name, const char* help, const Histogram& h,
                   const std::string& labels) {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  int64_t cumulative = 0;
  for (size_t k = 0; k < h.bounds.size(); ++k) {
    cumulative += h.counts[k];
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, h.bounds[k], cumulative);
  }
  cumulative += h.counts.back();
  out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, cumulative);
  out += fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, h.sum, name, labels, h.count);
}

void put_value(std::string& out, const char* name, const char* type, const char* help, const std::string& labels,
               double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{{}}} {}\n", name, help, name, type, name, labels, value);
}

// A label value with Prometheus's escapes.
std::string label_value(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string Driver::metrics_text(const std::string& model) const {
  const std::string labels = fmt::format("model_name=\"{}\"", label_value(model));
  std::lock_guard<std::mutex> lk(mm_);
  const Figures& f = fig_;
  const double bs = block_size_;
  std::string out;
  put_value(out, "vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", labels,
            static_cast<double>(f.running));
  put_value(out, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", labels,
            static_cast<double>(f.waiting));
  put_value(out, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", labels,
            f.total_blocks > 0 ? static_cast<double>(f.used_blocks) / static_cast<double>(f.total_blocks) : 0.0);
  put_value(out, "vllm:prefix_cache_queries_total", "counter",
            "Prefix cache queries, in terms of number of queried tokens.", labels,
            static_cast<double>(f.query_blocks) * bs);
  put_value(out, "vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.",
            labels, static_cast<double>(f.hit_blocks) * bs);
  put_value(out, "vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", labels,
            static_cast<double>(f.preemptions));
  put_value(out, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", labels,
            static_cast<double>(f.prompt_tokens));
  put_value(out, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", labels,
            static_cast<double>(f.generation_tokens));
  out += "# HELP vllm:request_success_total Count of successfully processed requests.\n"
         "# TYPE vllm:request_success_total counter\n";
  out += fmt::format("vllm:request_success_total{{{},finished_reason=\"length\"}} {}\n", labels, f.finished_length);
  out += fmt::format("vllm:request_success_total{{{},finished_reason=\"abort\"}} {}\n", labels, f.finished_abort);
  put_histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", f.ttft,
                labels);
  put_histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", f.itl,
                labels);
  put_histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", f.e2e,
                labels);
  put_value(out, "blis:rejected_requests_total", "counter", "Requests the admission policy rejected.", labels,
            static_cast<double>(f.rejected));
  put_value(out, "blis:simulated_seconds", "gauge", "The simulation's clock.", labels,
            static_cast<double>(virtual_now()) / 1e6);
  put_value(out, "blis:delivery_lag_max_seconds", "gauge",
            "Largest wall-clock lateness of a token or end behind its simulated time.", labels, f.lag_max);
  put_value(out, "blis:delivery_lag_mean_seconds", "gauge", "Mean wall-clock lateness of tokens and ends.", labels,
            f.lag_count > 0 ? f.lag_sum / static_cast<double>(f.lag_count) : 0.0);
  return out;
}

}  // namespace blis::live
