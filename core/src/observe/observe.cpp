// `blis observe`'s dispatch (observe/observe.hpp). One thread paces the
// workload and owns it (closed-loop follow-ups included); workers, at most
// max_concurrency of them, each send one request at a time and hand back
// what they timed.
#include "observe/observe.hpp"

#include "observe/kv_metrics.hpp"

#include "util/json_format.hpp"
#include "util/sorted_percentile.hpp"
#include "workload/slo_class.hpp"

#include <blis/workload.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <queue>
#include <thread>

namespace blis::observation {

namespace {

using workload::TraceRecord;
using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll{100};

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 1280 pronounceable three-letter words: one token each for most
// tokenizers, and for blis serve's rule exactly one.
std::string word(uint64_t k) {
  static const char kConsonants[] = "bdfgklmnprstvwzh";
  static const char kVowels[] = "aeiou";
  k %= 16 * 5 * 16;
  std::string w(3, ' ');
  w[0] = kConsonants[k % 16];
  w[1] = kVowels[(k / 16) % 5];
  w[2] = kConsonants[k / 80];
  return w;
}

// vLLM's priority of a class (0 most urgent), as HEAD sends it: the largest
// class priority less the class's (critical 4, standard 3 and unknown 3,
// batch -1, sheddable -2, background -3).
int vllm_priority(const std::string& slo_class) {
  static const std::map<std::string, int> kPriority = {
      {"critical", 4}, {"standard", 3}, {"batch", -1}, {"sheddable", -2}, {"background", -3}};
  const auto it = kPriority.find(slo_class);
  return 4 - (it == kPriority.end() ? 3 : it->second);
}

std::string request_uuid(uint64_t seed, int64_t index) {
  const uint64_t a = mix(seed ^ mix(static_cast<uint64_t>(index) * 2 + 1));
  const uint64_t b = mix(a);
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff,
                     0x8000 | ((b >> 48) & 0x3fff), b & 0xffffffffffffULL);
}

// What one exchange gave.
struct Timing {
  std::string status = "ok", error, finish_reason;
  int64_t send_us = 0, first_us = 0, last_us = 0, chunks = 0;
  int64_t output_tokens = 0, server_input_tokens = 0;
  std::vector<int64_t> chunk_times;
};

struct Job {
  WorkloadRequest req;
  int64_t index = 0;
  std::string prompt;
  bool streaming = false;
  workload::TraceRecord row;  // what the trace says of the request before it is sent
};

void read_usage(const nlohmann::json& j, Timing& t) {
  const auto usage = j.find("usage");
  if (usage == j.end() || !usage->is_object()) return;
  if (auto c = usage->find("completion_tokens"); c != usage->end() && c->is_number()) t.output_tokens = c->get<int64_t>();
  if (auto p = usage->find("prompt_tokens"); p != usage->end() && p->is_number())
    t.server_input_tokens = p->get<int64_t>();
}

void read_finish(const nlohmann::json& j, Timing& t) {
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return;
  const auto& c = (*choices)[0];
  if (!c.is_object()) return;
  if (auto f = c.find("finish_reason"); f != c.end() && f->is_string() && !f->get<std::string>().empty())
    t.finish_reason = f->get<std::string>();
}

// One line of a server-sent event stream: a chunk is timed and read.
void take_event_line(std::string_view line, int64_t at, Timing& t) {
  if (line.rfind("data: ", 0) != 0) return;
  line.remove_prefix(6);
  if (line == "[DONE]") return;
  ++t.chunks;
  t.chunk_times.push_back(at);
  if (t.first_us == 0) t.first_us = at;
  t.last_us = at;
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  read_usage(j, t);
  read_finish(j, t);
}

class Client {
 public:
  explicit Client(const Options& o) : o_(o) {}

  // What one request says: its body and headers.
  struct Ask {
    std::string prompt;
    int64_t max_tokens = 0, min_tokens = 0;
    bool streaming = false;
    std::string slo_class, tenant, x_request_id;
    int64_t slo_target_us = 0;
  };

  Timing send(const Ask& ask) const {
    const bool streaming = ask.streaming;
    nlohmann::json body;
    body["model"] = o_.model;
    body["stream"] = streaming;
    if (!o_.unconstrained) body["max_tokens"] = ask.max_tokens > 0 ? ask.max_tokens : 2048;
    else if (o_.api_format == "completions") body["max_tokens"] = INT32_MAX;
    if (ask.min_tokens > 0) body["min_tokens"] = ask.min_tokens;
    const bool chat = o_.api_format == "chat";
    const std::string path = chat ? "/v1/chat/completions" : "/v1/completions";
    if (chat) body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", ask.prompt}}});
    else body["prompt"] = ask.prompt;
    if (streaming) body["stream_options"] = {{"include_usage", true}};
    if (!ask.slo_class.empty()) body["priority"] = vllm_priority(ask.slo_class);
    return exchange(path, body.dump(), headers_of(ask), streaming);
  }

 private:
  Headers headers_of(const Ask& ask) const {
    Headers headers = {{"Content-Type", "application/json"}};
    if (!ask.x_request_id.empty()) headers.emplace_back("x-request-id", ask.x_request_id);
    if (!o_.api_key.empty()) headers.emplace_back("Authorization", "Bearer " + o_.api_key);
    if (!ask.tenant.empty()) headers.emplace_back("x-gateway-inference-fairness-id", ask.tenant);
    if (!ask.slo_class.empty()) headers.emplace_back("x-gateway-inference-objective", ask.slo_class);
    if (ask.slo_target_us > 0)
      headers.emplace_back("x-slo-ttft-ms", std::to_string((ask.slo_target_us + 999) / 1000));
    return headers;
  }

  Timing exchange(const std::string& path, const std::string& body, const Headers& headers, bool streaming) const {
    Timing t;
    LineHandler on_line = [&t](std::string_view line, int64_t at) { take_event_line(line, at, t); };
    t.send_us = unix_micros();
    const HttpOutcome out =
        http_exchange(o_.server, "POST", path, headers, body, o_.timeout_s, streaming ? &on_line : nullptr);
    if (!out.sent && out.status == 0) {
      t.status = out.timed_out ? "timeout" : "error";
      t.error = out.timed_out ? "HTTP timeout: " + out.error : "HTTP error: " + out.error;
      return t;
    }
    if (out.status != 200) {
      t.status = out.timed_out ? "timeout" : "error";
      t.error = fmt::format("HTTP {}: {}", out.status, out.sent ? out.body : "(" + out.error + ")");
      return t;
    }
    if (streaming) {
      if (!out.sent) {
        t.status = out.timed_out ? "timeout" : "error";
        t.error = (out.timed_out ? "streaming timeout: " : "streaming error: ") + out.error;
      }
      return t;
    }
    if (!out.sent) {
      t.status = out.timed_out ? "timeout" : "error";
      t.error = (out.timed_out ? "read timeout: " : "read error: ") + out.error;
      return t;
    }
    t.first_us = out.first_byte_us != 0 ? out.first_byte_us : out.done_us;
    t.last_us = out.done_us;
    t.chunks = 1;
    const auto j = nlohmann::json::parse(out.body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      t.status = "error";
      t.error = "JSON parse error: the response is not a JSON object";
      return t;
    }
    read_usage(j, t);
    read_finish(j, t);
    return t;
  }

  const Options& o_;
};

// The server's tokens per word of prompt_text: one request of 100 words.
double measure_tokens_per_word(const Client& client) {
  std::string prompt;
  for (uint64_t k = 0; k < 100; ++k) prompt += word(mix(k)) + " ";
  Client::Ask ask;
  ask.prompt = prompt;
  ask.max_tokens = 1;
  const Timing t = client.send(ask);
  if (t.status != "ok") {
    spdlog::warn("observe: measuring the server's tokens per word failed ({}); assuming 1 token per word", t.error);
    return 1.0;
  }
  if (t.server_input_tokens <= 0) {
    spdlog::warn("observe: the server reported no prompt_tokens (is usage reporting on?); assuming 1 token per word");
    return 1.0;
  }
  const double ratio = static_cast<double>(t.server_input_tokens) / 100.0;
  if (ratio < 1.0 || ratio > 3.0) {
    spdlog::warn("observe: the server's {:.3f} tokens per word lies outside [1, 3]; assuming 1", ratio);
    return 1.0;
  }
  spdlog::info("observe: 100 words are {} tokens on the server ({:.3f} tokens per word)", t.server_input_tokens,
               ratio);
  return ratio;
}

// HEAD's prewarm: 4 users sending 256 words for at most 64 tokens, not
// streamed, one after the other until the time is up; after an error a user
// waits 500 ms. Nothing of it is recorded.
void prewarm(const Client& client, const Options& o) {
  constexpr int kUsers = 4;
  constexpr int kWords = 256;
  constexpr int kMaxTokens = 64;
  const auto wall = std::chrono::microseconds(std::llround(static_cast<double>(o.prewarm_us) / o.time_scale));
  spdlog::info("observe: prewarming the server for {:.3f} s (concurrency={}, input={}, output={} tokens)",
               static_cast<double>(o.prewarm_us) / 1e6, kUsers, kWords, kMaxTokens);
  std::string prompt;
  for (int i = 0; i < kWords; ++i) prompt += "warm ";
  const auto end = Clock::now() + wall;
  std::atomic<int64_t> sent{0}, failed{0};
  auto stopped = [&] { return Clock::now() >= end || (o.stop != nullptr && o.stop->load()); };
  std::vector<std::thread> users;
  users.reserve(kUsers);
  for (int u = 0; u < kUsers; ++u)
    users.emplace_back([&] {
      Client::Ask ask;
      ask.prompt = prompt;
      ask.max_tokens = kMaxTokens;
      while (!stopped()) {
        const Timing t = client.send(ask);
        ++sent;
        if (t.status == "ok") continue;
        ++failed;
        const auto resume = std::min(end, Clock::now() + std::chrono::milliseconds(500));
        while (!stopped() && Clock::now() < resume) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  for (auto& t : users) t.join();
  if (sent == 0 || failed == sent)
    spdlog::warn("observe: prewarm: {}/{} requests failed (is the server reachable?)", failed.load(), sent.load());
  else if (failed > 0)
    spdlog::info("observe: prewarm complete: {} requests sent, {} errors", sent.load(), failed.load());
  else
    spdlog::info("observe: prewarm complete: {} requests sent", sent.load());
}

// The end-of-window scrape and the hit rate; nothing (and a warning) when
// either fails.
std::optional<workload::ObservedKvMetrics> observed_kv_metrics(const Scrape& start, const Options& o) {
  const Scrape end = scrape_metrics(o.server, o.kv_metrics_url, o.api_key, o.timeout_s);
  if (!end.error.empty()) {
    spdlog::warn("observe: --scrape-kv-metrics: the /metrics scrape after the workload failed ({}); the trace "
                 "header will have no observed_kv_metrics",
                 end.error);
    return std::nullopt;
  }
  Derived d = derive_hit_rate(start.samples, end.samples, o.vllm_commit);
  if (!d.metrics) {
    spdlog::warn("observe: --scrape-kv-metrics: {}; the trace header will have no observed_kv_metrics", d.error);
    return std::nullopt;
  }
  spdlog::info("observe: observed KV hit-rate {:.4f} (source={}, block_hits={}, block_queries={})",
               d.metrics->hit_rate, d.metrics->source, d.metrics->block_hits, d.metrics->block_queries);
  return d.metrics;
}

// The dispatcher and its workers.
class Dispatch {
 public:
  Dispatch(WorkloadSource& source, const Options& o, double tokens_per_word)
      : source_(source), o_(o), client_(o), tokens_per_word_(tokens_per_word) {}

  Observation run() {
    start_ = Clock::now();
    start_wall_ = unix_micros();
    have_next_ = source_.next(next_);
    std::unique_lock lock(m_);
    while (true) {
      drain_completions(lock);
      const bool stopping = o_.stop != nullptr && o_.stop->load();
      const WorkloadRequest* pick = stopping ? nullptr : earliest();
      // Waits end on a completion, or after at most kPoll to see a stop.
      const auto poll = Clock::now() + kPoll;
      if (pick == nullptr) {
        if (in_flight_ == 0) break;
        cv_dispatch_.wait_until(lock, poll, [&] { return !done_.empty(); });
        continue;
      }
      const auto due = start_ + std::chrono::microseconds(std::llround(static_cast<double>(pick->arrival_us) / o_.time_scale));
      if (Clock::now() < due) {
        cv_dispatch_.wait_until(lock, std::min(due, poll), [&] { return !done_.empty(); });
        continue;
      }
      if (in_flight_ >= o_.max_concurrency) {
        cv_dispatch_.wait_until(lock, poll, [&] { return !done_.empty(); });
        continue;
      }
      dispatch(take(pick), lock);
    }
    closing_ = true;
    cv_work_.notify_all();
    lock.unlock();
    for (auto& w : workers_) w.join();
    if (o_.stop != nullptr && o_.stop->load()) spdlog::warn("observe: interrupted; {} requests were sent", sent_);
    obs_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count() * o_.time_scale;
    std::sort(obs_.records.begin(), obs_.records.end(),
              [](const TraceRecord& a, const TraceRecord& b) { return a.request_id < b.request_id; });
    std::stable_sort(obs_.itl.begin(), obs_.itl.end(),
                     [](const auto& a, const auto& b) { return a.request_id < b.request_id; });
    obs_.tokens_per_word = tokens_per_word_;
    return std::move(obs_);
  }

 private:
  struct Done {
    Job job;
    Timing timing;
    int64_t at_us = 0;  // since the start
  };
  struct LaterArrival {
    bool operator()(const WorkloadRequest& a, const WorkloadRequest& b) const { return a.arrival_us > b.arrival_us; }
  };

  const WorkloadRequest* earliest() const {
    const WorkloadRequest* f = follow_ups_.empty() ? nullptr : &follow_ups_.top();
    if (!have_next_) return f;
    // A follow-up due no later than the workload's next request goes first (HEAD's order).
    return f != nullptr && f->arrival_us <= next_.arrival_us ? f : &next_;
  }

  WorkloadRequest take(const WorkloadRequest* pick) {
    if (pick == &next_) {
      WorkloadRequest r = std::move(next_);
      have_next_ = source_.next(next_);
      return r;
    }
    WorkloadRequest r = follow_ups_.top();
    follow_ups_.pop();
    return r;
  }

  void dispatch(WorkloadRequest req, std::unique_lock<std::mutex>& lock) {
    Job job;
    job.index = sent_++;
    const WorkloadSource::SourceInfo* info = source_.source_info(req.source);
    job.streaming = o_.record_itl || (info != nullptr && info->streaming && !o_.no_streaming);
    job.row = row_of(req, job.index, job.streaming, info);
    std::vector<uint64_t> hashes = req.block_hashes;
    extend_content(req, hashes, req.input_tokens / o_.block_size);
    const uint64_t own = req.own_content != 0 ? req.own_content : mix(o_.seed ^ static_cast<uint64_t>(job.index));
    lock.unlock();
    job.prompt = prompt_text(hashes, o_.block_size, req.input_tokens, tokens_per_word_, own);
    lock.lock();
    job.req = std::move(req);
    jobs_.push_back(std::move(job));
    ++in_flight_;
    if (idle_ == 0 && static_cast<int>(workers_.size()) < o_.max_concurrency)
      workers_.emplace_back([this] { work(); });
    else
      cv_work_.notify_one();
    if (sent_ % 100 == 0) spdlog::info("observe: {} requests sent, {} answered", sent_, answered_);
  }

  void work() {
    std::unique_lock lock(m_);
    while (true) {
      ++idle_;
      cv_work_.wait(lock, [&] { return closing_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      Client::Ask ask;
      ask.prompt = std::move(job.prompt);
      ask.max_tokens = job.req.output_tokens;
      ask.min_tokens = o_.unconstrained ? 0 : job.req.output_tokens;
      ask.streaming = job.streaming;
      ask.slo_class = job.row.slo_class;
      ask.tenant = job.row.tenant_id;
      ask.x_request_id = job.row.x_request_id;
      Timing t = client_.send(ask);
      const auto at = std::llround(
          static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start_).count()) *
          o_.time_scale);
      lock.lock();
      done_.push_back(Done{std::move(job), std::move(t), at});
      cv_dispatch_.notify_one();
    }
  }

  TraceRecord row_of(const WorkloadRequest& q, int64_t index, bool streaming,
                     const WorkloadSource::SourceInfo* info) const {
    TraceRecord r;
    r.request_id = index;
    if (info != nullptr) {
      r.client_id = info->client_id;
      r.prefix_group = info->prefix_group;
      r.prefix_length = info->prefix_length;
    }
    r.tenant_id = q.tenant_id.str();
    r.slo_class = workload::slo_class_name(q.slo_class);
    r.round_index = q.round;
    r.session_id = source_.session_name(q);
    r.streaming = streaming;
    r.input_tokens = q.input_tokens - r.prefix_length;
    if (r.input_tokens < 0) {  // as HEAD: no prefix then
      r.input_tokens = q.input_tokens;
      r.prefix_length = 0;
    }
    r.model = q.model.str();
    r.deadline_us = q.deadline_us;
    r.arrival_time_us = q.arrival_us;
    r.x_request_id = request_uuid(o_.seed, index);
    return r;
  }

  void drain_completions(std::unique_lock<std::mutex>& lock) {
    while (!done_.empty()) {
      Done d = std::move(done_.front());
      done_.pop_front();
      --in_flight_;
      ++answered_;
      lock.unlock();
      record(d);
      lock.lock();
      WorkloadRequest next;
      if (d.timing.status == "ok" && d.job.req.user >= 0 && source_.follow_up(d.job.req, d.at_us, next))
        follow_ups_.push(std::move(next));
    }
  }

  void record(const Done& d) {
    if (d.timing.finish_reason == "abort")
      spdlog::warn("observe: request {} finish_reason=\"abort\" (the server aborted it; its timing is unreliable)",
                   d.job.index);
    if (d.job.index < o_.warmup_requests) return;
    TraceRecord r = d.job.row;
    if (!r.slo_class.empty()) r.vllm_priority = vllm_priority(r.slo_class);
    r.output_tokens = d.timing.output_tokens;
    r.server_input_tokens = d.timing.server_input_tokens;
    r.send_time_us = scaled(d.timing.send_us);
    r.first_chunk_time_us = scaled(d.timing.first_us);
    r.last_chunk_time_us = scaled(d.timing.last_us);
    r.num_chunks = d.timing.chunks;
    r.status = d.timing.status;
    r.error_message = d.timing.error;
    r.finish_reason = d.timing.finish_reason;
    if (r.status != "ok") spdlog::warn("observe: request {}: {}", d.job.index, r.error_message);
    obs_.records.push_back(std::move(r));
    if (o_.record_itl && d.timing.status == "ok")
      for (size_t i = 0; i < d.timing.chunk_times.size(); ++i)
        obs_.itl.push_back({d.job.index, static_cast<int64_t>(i), scaled(d.timing.chunk_times[i])});
  }

  // A wall time (µs since the epoch) as it would be at time scale 1.
  int64_t scaled(int64_t wall_us) const {
    if (wall_us == 0 || o_.time_scale == 1) return wall_us;
    return start_wall_ + std::llround(static_cast<double>(wall_us - start_wall_) * o_.time_scale);
  }

  WorkloadSource& source_;
  const Options& o_;
  Client client_;
  double tokens_per_word_;
  Clock::time_point start_;
  int64_t start_wall_ = 0;
  WorkloadRequest next_;
  bool have_next_ = false;
  std::priority_queue<WorkloadRequest, std::vector<WorkloadRequest>, LaterArrival> follow_ups_;
  std::mutex m_;
  std::condition_variable cv_dispatch_, cv_work_;
  std::deque<Job> jobs_;
  std::deque<Done> done_;
  std::vector<std::thread> workers_;
  int idle_ = 0;
  int in_flight_ = 0;
  bool closing_ = false;
  int64_t sent_ = 0, answered_ = 0;
  Observation obs_;
};

}  // namespace

std::string prompt_text(const std::vector<uint64_t>& block_hashes, int32_t block_size, int64_t tokens,
                        double tokens_per_word, uint64_t own) {
  if (tokens_per_word <= 0) tokens_per_word = 1;
  const auto words = std::max<int64_t>(1, std::llround(static_cast<double>(tokens) / tokens_per_word));
  std::string out;
  out.reserve(static_cast<size_t>(words) * 4);
  for (int64_t i = 0; i < words; ++i) {
    const auto pos = std::min<int64_t>(std::max<int64_t>(tokens - 1, 0),
                                       static_cast<int64_t>(std::floor(static_cast<double>(i) * tokens_per_word)));
    const auto block = static_cast<size_t>(pos / block_size);
    const uint64_t seed = block < block_hashes.size() ? block_hashes[block] : mix(own ^ (block * 0x2545f4914f6cdd1dULL));
    out += word(mix(seed ^ static_cast<uint64_t>(pos % block_size)));
    out += ' ';
  }
  return out;
}

Observation run_observation(WorkloadSource& source, const Options& options) {
  const Client client(options);
  const double tpw = measure_tokens_per_word(client);
  if (options.prewarm_us > 0) prewarm(client, options);
  std::optional<Scrape> start;
  if (options.scrape_kv_metrics) {
    start = scrape_metrics(options.server, options.kv_metrics_url, options.api_key, options.timeout_s);
    if (!start->error.empty()) {
      spdlog::warn("observe: --scrape-kv-metrics: the /metrics scrape before the workload failed ({}); the trace "
                   "header will have no observed_kv_metrics",
                   start->error);
      start.reset();
    }
  }
  Dispatch dispatch(source, options, tpw);
  Observation obs = dispatch.run();
  if (start) obs.kv_metrics = observed_kv_metrics(*start, options);
  return obs;
}

std::string observation_metrics(const Observation& o, const std::string& members) {
  std::vector<double> ttft, e2e, itl;
  int64_t output_tokens = 0;
  for (const TraceRecord& r : o.records) {
    if (r.status != "ok") continue;
    const int64_t t = r.first_chunk_time_us - r.send_time_us, e = r.last_chunk_time_us - r.send_time_us;
    if (t <= 0 || e <= 0 || e < t) continue;
    ttft.push_back(static_cast<double>(t));
    e2e.push_back(static_cast<double>(e));
    output_tokens += r.output_tokens;
  }
  for (size_t i = 1; i < o.itl.size(); ++i) {
    if (o.itl[i].request_id != o.itl[i - 1].request_id) continue;
    const int64_t gap = o.itl[i].timestamp_us - o.itl[i - 1].timestamp_us;
    if (gap > 0) itl.push_back(static_cast<double>(gap));
  }
  auto mean_ms = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size()) / 1000.0;
  };
  auto pct = [](std::vector<double> v, double p) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return sorted_percentile(v, p) / 1000.0;
  };
  const double secs = o.wall_seconds;
  std::vector<std::pair<std::string, std::string>> f;
  auto num = [&](const char* k, int64_t v) { f.emplace_back(k, std::to_string(v)); };
  auto real = [&](const char* k, double v) { f.emplace_back(k, go_float(v)); };
  f.emplace_back("instance_id", "\"\"");
  num("completed_requests", static_cast<int64_t>(ttft.size()));
  for (const char* k : {"still_queued", "still_running", "injected_requests", "total_input_tokens",
                        "total_output_tokens"})
    num(k, 0);
  real("vllm_estimated_duration_s", 0);
  real("responses_per_sec", secs > 0 ? static_cast<double>(ttft.size()) / secs : 0);
  real("tokens_per_sec", secs > 0 ? static_cast<double>(output_tokens) / secs : 0);
  for (const auto& [name, v] : {std::pair{"e2e", &e2e}, std::pair{"ttft", &ttft}, std::pair{"itl", &itl}}) {
    const std::string n = name;
    f.emplace_back(n + "_mean_ms", go_float(mean_ms(*v)));
    f.emplace_back(n + "_p90_ms", go_float(pct(*v, 90)));
    f.emplace_back(n + "_p95_ms", go_float(pct(*v, 95)));
    f.emplace_back(n + "_p99_ms", go_float(pct(*v, 99)));
  }
  real("scheduling_delay_p99_ms", 0);
  for (const char* k : {"preemption_count", "dropped_unservable", "length_capped_requests", "timed_out_requests"})
    num(k, 0);
  std::string out = "=== Simulation Metrics ===\n{";
  for (size_t i = 0; i < f.size(); ++i) out += (i ? ",\n  \"" : "\n  \"") + f[i].first + "\": " + f[i].second;
  return out + members + "\n}\n";
}

std::string itl_csv(const std::vector<workload::ItlRecord>& itl) {
  std::string out = "request_id,chunk_index,timestamp_us\n";
  for (const auto& r : itl) out += fmt::format("{},{},{}\n", r.request_id, r.chunk_index, r.timestamp_us);
  return out;
}

}  // namespace blis::observation
