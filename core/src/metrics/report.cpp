#include "metrics/report.hpp"

#include "util/go_sort.hpp"

#include "engine/wait_queue.hpp"
#include "util/json_format.hpp"
#include "workload/slo_class.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace blis {

const char* slo_class_name(int32_t slo) { return workload::slo_class_name(slo); }

double jain_fairness(const std::map<std::string, double>& per_tenant) {
  if (per_tenant.empty()) return 0;
  double sum = 0, squares = 0;
  for (const auto& [tenant, x] : per_tenant) {
    sum += x;
    squares += x * x;
  }
  if (squares == 0) return 1.0;
  return (sum * sum) / (static_cast<double>(per_tenant.size()) * squares);
}

double slo_attainment(const InstanceMetrics& m, const std::map<int32_t, int64_t>& e2e_targets) {
  if (m.e2e.empty()) return 0;
  int64_t met = 0;
  for (size_t i = 0; i < m.e2e.size(); ++i) {
    auto it = e2e_targets.find(m.e2e_slo[i]);
    if (it == e2e_targets.end() || m.e2e[i] <= it->second) ++met;
  }
  return static_cast<double>(met) / static_cast<double>(m.e2e.size());
}

WeightedValues itl_values(const InstanceMetrics& m) {
  WeightedValues out;
  out.reserve(m.itl_weighted.size() + m.step_itl.size() + m.extra_itls.size());
  out = m.itl_weighted;
  for_each_step_itl(m, m.step_itl.size(), [&](int64_t itl, int64_t count) { out.emplace_back(itl, count); });
  for (int64_t v : m.extra_itls) out.emplace_back(v, 1);
  normalize(out);
  return out;
}

int64_t injected_requests(const InstanceMetrics& m) {
  return m.completed + m.still_queued + m.still_running + m.dropped_unservable + m.timed_out + m.failed;
}

InstanceMetrics merge_metrics(const std::vector<const InstanceMetrics*>& parts) {
  InstanceMetrics out;
  // Exact sizes: a million records appended by doubling would hold up to
  // twice their memory, and copy it on the way (the samples are chunked).
  size_t records = 0, completions = 0;
  for (const InstanceMetrics* p : parts) {
    records += p->records.size();
    completions += p->completions.size();
  }
  out.records.reserve(records), out.completions.reserve(completions);
  for (const InstanceMetrics* p : parts) {
    out.completed += p->completed;
    out.still_queued += p->still_queued;
    out.still_running += p->still_running;
    out.dropped_unservable += p->dropped_unservable;
    out.timed_out += p->timed_out;
    out.reports_timeouts = out.reports_timeouts || p->reports_timeouts;
    out.head_form = out.head_form || p->head_form;
    // HEAD's file: the instances' mean (each instance's own until then),
    // summed in instance order and then divided, as HEAD does.
    out.cache_hit_rate += p->cache_hit_rate;
    out.failed += p->failed;
    out.length_capped += p->length_capped;
    out.preemptions += p->preemptions;
    out.kv_allocation_failures += p->kv_allocation_failures;
    out.input_tokens += p->input_tokens;
    out.output_tokens += p->output_tokens;
    out.end_time = std::max(out.end_time, p->end_time);
    out.peak_kv_blocks = std::max(out.peak_kv_blocks, p->peak_kv_blocks);
    auto append = [](auto& dst, const auto& src) { dst.insert(dst.end(), src.begin(), src.end()); };
    out.ttft.append(p->ttft);
    append(out.ttft_slo, p->ttft_slo);
    out.e2e.append(p->e2e);
    append(out.e2e_slo, p->e2e_slo);
    append(out.request_itl, p->request_itl);
    append(out.request_itl_slo, p->request_itl_slo);
    out.scheduling_delay.append(p->scheduling_delay);
    for (const auto& [id, a] : p->adapters) {
      AdapterTally& t = out.adapters[id];
      t.loads += a.loads;
      t.evictions += a.evictions;
      append(t.ttft, a.ttft);
      t.output_tokens += a.output_tokens;
      t.served = t.served || a.served;
    }
    append(out.records, p->records);
    append(out.completions, p->completions);
    // Kept normalized as it grows (the same multiset itl_values() would
    // make of it): one entry per distinct value, not one per step.
    // A stopped instance's are normalized already, in itl_weighted.
    if (p->step_itl.empty() && p->extra_itls.empty())
      merge_normalized(out.itl_weighted, p->itl_weighted);
    else
      merge_normalized(out.itl_weighted, itl_values(*p));
  }
  if (!parts.empty()) out.cache_hit_rate /= static_cast<double>(parts.size());
  return out;
}

namespace {

struct JsonObject {
  std::string text;
  std::string indent;
  bool first = true;
  void key(const char* k) {
    text += first ? "\n" : ",\n";
    first = false;
    text += indent + "  \"" + k + "\": ";
  }
  void num(const char* k, int64_t v) { key(k); text += std::to_string(v); }
  void real(const char* k, double v) { key(k); text += go_float(v); }
  void str(const char* k, const std::string& v) { key(k); text += go_string(v); }
  std::string close() { return "{" + text + "\n" + indent + "}"; }
};

}  // namespace

std::vector<MetricField> metrics_fields(const InstanceMetrics& m) {
  const Summary st = summarize_copy(m.ttft, 1000), se = summarize_copy(m.e2e, 1000),
                sd = summarize_copy(m.scheduling_delay, 1000);
  const Summary si = summarize(itl_values(m), 1000);
  const double duration = static_cast<double>(m.end_time) / 1e6;
  auto count = [](const char* name, int64_t v) { return MetricField{name, static_cast<double>(v), true}; };
  auto real = [](std::string name, double v) { return MetricField{std::move(name), v, false}; };

  std::vector<MetricField> f;
  f.push_back(count("completed_requests", m.completed));
  f.push_back(count("still_queued", m.still_queued));
  f.push_back(count("still_running", m.still_running));
  f.push_back(count("injected_requests", injected_requests(m)));
  f.push_back(count("total_input_tokens", m.input_tokens));
  f.push_back(count("total_output_tokens", m.output_tokens));
  f.push_back(real("vllm_estimated_duration_s", duration));
  f.push_back(real("responses_per_sec", duration > 0 ? static_cast<double>(m.completed) / duration : 0));
  f.push_back(real("tokens_per_sec", duration > 0 ? static_cast<double>(m.output_tokens) / duration : 0));
  for (const auto& [name, sum] : {std::pair{"e2e", &se}, std::pair{"ttft", &st}, std::pair{"itl", &si}}) {
    const std::string n = name;
    f.push_back(real(n + "_mean_ms", sum->mean));
    f.push_back(real(n + "_p90_ms", sum->p90));
    f.push_back(real(n + "_p95_ms", sum->p95));
    f.push_back(real(n + "_p99_ms", sum->p99));
  }
  f.push_back(real("scheduling_delay_p99_ms", sd.p99));
  if (m.kv_allocation_failures != 0) f.push_back(count("kv_allocation_failures", m.kv_allocation_failures));
  f.push_back(count("preemption_count", m.preemptions));
  f.push_back(count("dropped_unservable", m.dropped_unservable));
  f.push_back(count("length_capped_requests", m.length_capped));
  // Only in runs whose requests may have deadlines: the baseline reference
  // has no such key (spec head §4.1); HEAD prints it after length_capped_requests.
  if (m.reports_timeouts) f.push_back(count("timed_out_requests", m.timed_out));
  return f;
}

std::vector<MetricField> median_fields(const InstanceMetrics& m) {
  return {{"e2e_p50_ms", summarize_copy(m.e2e, 1000).p50, false},
          {"ttft_p50_ms", summarize_copy(m.ttft, 1000).p50, false},
          {"itl_p50_ms", summarize(itl_values(m), 1000).p50, false}};
}

std::string metric_text(const MetricField& f) {
  return f.integer ? std::to_string(static_cast<int64_t>(f.value)) : go_float(f.value);
}

namespace {

// One request's record in the metrics file (HEAD's form adds its round).
// A record's "requestID": HEAD's name of a session's follow-up round, else request_<id>.
std::string record_id(const RequestRecord& r) {
  return r.name.empty() ? "request_" + std::to_string(r.id) : r.name;
}

std::string request_json(const RequestRecord& r, bool head_form) {
  JsonObject e;
  e.indent = "    ";
  e.real("arrived_at", static_cast<double>(r.arrival_us) / 1e6);
  e.str("requestID", record_id(r));
  e.num("num_prefill_tokens", r.input_tokens);
  e.num("num_decode_tokens", r.output_tokens);
  e.real("ttft_ms", r.ttft >= 0 ? static_cast<double>(r.ttft) / 1e3 : 0);
  e.real("itl_ms", r.itl_avg / 1e3);
  e.real("e2e_ms", r.e2e >= 0 ? static_cast<double>(r.e2e) / 1e3 : 0);
  e.real("scheduling_delay_ms", r.scheduling_delay >= 0 ? static_cast<double>(r.scheduling_delay) / 1e3 : 0);
  if (r.slo_class != 0) e.str("slo_class", slo_class_name(r.slo_class));
  if (!r.tenant_id.empty()) e.str("tenant_id", r.tenant_id.str());
  if (r.instance >= 0) e.str("handled_by", "instance_" + std::to_string(r.instance));
  if (!r.model.empty()) e.str("model", r.model.str());
  if (!r.adapter.empty()) e.str("adapter", r.adapter.str());
  // The flags, written only when set.
  for (const auto& [set, key] :
       {std::pair{r.length_capped, "length_capped"}, std::pair{r.dropped, "dropped_unservable"},
        std::pair{r.timed_out, "timed_out"}, std::pair{r.failed, "failed"},
        std::pair{r.evicted && !head_form, "evicted"}}) {  // HEAD's has no such key
    if (!set) continue;
    e.key(key);
    e.text += "true";
  }
  if (head_form && r.gateway_wait > 0)
    e.real("gateway_queue_delay_ms", static_cast<double>(r.gateway_wait) / 1e3);
  if (head_form && !r.session_id.empty()) e.str("session_id", r.session_id);
  if (head_form) e.num("round_index", r.round);
  return e.close();
}

}  // namespace

namespace {

// HEAD's percentile of sorted µs, in ms, then back in µs (its arithmetic).
double head_percentile_us(const std::vector<int64_t>& sorted, double p) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  const double rank = p / 100.0 * static_cast<double>(n - 1);
  const auto lo = static_cast<size_t>(std::floor(rank)), hi = static_cast<size_t>(std::ceil(rank));
  double ms = 0;
  if (lo == hi) {
    ms = static_cast<double>(sorted[lo]) / 1000;
  } else {
    const auto a = static_cast<double>(sorted[lo]), b = static_cast<double>(sorted[hi]);
    ms = a / 1000 + (b - a) * (rank - static_cast<double>(lo)) / 1000;
  }
  return ms * 1000;
}

}  // namespace

std::string adapters_json(const InstanceMetrics& m) {
  const double runtime = static_cast<double>(m.end_time) / 1e6;
  std::string out = "{";
  bool first = true;
  for (const auto& [id, a] : m.adapters) {
    JsonObject e;
    e.indent = "    ";
    e.num("load_count", a.loads);
    e.num("eviction_count", a.evictions);
    std::vector<int64_t> sorted = a.ttft;
    std::sort(sorted.begin(), sorted.end());
    e.real("ttft_p50_us", a.served ? head_percentile_us(sorted, 50) : 0);
    e.real("ttft_p99_us", a.served ? head_percentile_us(sorted, 99) : 0);
    e.real("throughput_tok_per_s",
           a.served && runtime > 0 ? static_cast<double>(a.output_tokens) / runtime : 0);
    out += (first ? "\n    " : ",\n    ") + go_string(id) + ": " + e.close();
    first = false;
  }
  return out + "\n  }";
}

std::string metrics_json(const InstanceMetrics& m, const std::string& instance_id,
                         bool with_requests, const std::string& members) {
  JsonObject o;
  o.str("instance_id", instance_id);
  for (const MetricField& f : metrics_fields(m)) {
    o.key(f.name.c_str());
    o.text += metric_text(f);
    // HEAD's file (not its stdout) has the cache hit rate after the preemptions.
    if (with_requests && m.head_form && f.name == "preemption_count") o.real("cache_hit_rate", m.cache_hit_rate);
  }
  if (with_requests && !m.records.empty()) {
    std::vector<const RequestRecord*> recs;
    for (const auto& r : m.records) recs.push_back(&r);
    // Ids in lexicographic order, then by arrival time: stable (the seed's
    // form), or as Go's sort.Slice leaves ties (HEAD's).
    std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) {
      if (a->name.empty() && b->name.empty()) return id_string_less(a->id, b->id);
      return record_id(*a) < record_id(*b);
    });
    if (m.head_form)  // HEAD sorts them by arrival with Go's sort.Slice, ties as it leaves them
      go_sort::slice(
          recs.size(), [&](size_t i, size_t j) { return recs[i]->arrival_us < recs[j]->arrival_us; },
          [&](size_t i, size_t j) { std::swap(recs[i], recs[j]); });
    else
      std::stable_sort(recs.begin(), recs.end(),
                       [](auto* a, auto* b) { return a->arrival_us < b->arrival_us; });
    o.key("requests");
    o.text += "[";
    bool first = true;
    for (const RequestRecord* r : recs) {
      o.text += (first ? "\n    " : ",\n    ") + request_json(*r, m.head_form);
      first = false;
    }
    o.text += "\n  ]";
  }
  o.text += members;
  if (!m.adapters.empty()) {
    o.key("adapters");
    o.text += adapters_json(m);
  }
  return o.close();
}

int64_t priority_inversions(std::vector<CompletionSample> samples) {
  // Per class, sorted by (arrival, id); count i < j with e2e_i > 2 e2e_j with
  // a Fenwick tree over the ranks of e2e values: O(n log n).
  std::sort(samples.begin(), samples.end(), [](const auto& a, const auto& b) {
    if (a.slo_class != b.slo_class) return a.slo_class < b.slo_class;
    if (a.arrival_us != b.arrival_us) return a.arrival_us < b.arrival_us;
    return a.id < b.id;
  });
  int64_t total = 0;
  size_t i = 0;
  while (i < samples.size()) {
    size_t j = i;
    while (j < samples.size() && samples[j].slo_class == samples[i].slo_class) ++j;
    std::vector<int64_t> values;
    for (size_t k = i; k < j; ++k) values.push_back(samples[k].e2e);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::vector<int64_t> tree(values.size() + 1, 0);
    int64_t seen = 0;
    for (size_t k = i; k < j; ++k) {
      const int64_t e = samples[k].e2e;
      // Earlier ones with value > 2e: seen - (count of values <= 2e).
      const int64_t limit = e > INT64_MAX / 2 ? INT64_MAX : 2 * e;
      size_t pos = static_cast<size_t>(std::upper_bound(values.begin(), values.end(), limit) - values.begin());
      int64_t le = 0;
      for (size_t x = pos; x > 0; x -= x & (~x + 1)) le += tree[x];
      total += seen - le;
      size_t at = static_cast<size_t>(std::lower_bound(values.begin(), values.end(), e) - values.begin()) + 1;
      for (size_t x = at; x < tree.size(); x += x & (~x + 1)) tree[x] += 1;
      ++seen;
    }
    i = j;
  }
  return total;
}

namespace {

// Mean (summed in ascending order) and p99 (linear interpolation between
// ranks) of real values, as HEAD's per-SLO distributions compute them.
std::pair<double, double> mean_and_p99(std::vector<double>& v) {
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const double rank = 0.99 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank)), hi = static_cast<size_t>(std::ceil(rank));
  const double p99 = lo == hi ? v[lo] : v[lo] + (rank - static_cast<double>(lo)) * (v[hi] - v[lo]);
  return {sum / static_cast<double>(v.size()), p99};
}

// The anomaly block's lines after HOL blocking, as HEAD prints them:
// admission rejections (with their SLO classes) and routing ones apart.
std::string head_rejection_lines(const InstanceMetrics& cluster, const ReportContext& ctx) {
  std::string out = fmt::format("Rejected Requests (Admission): {}\n", ctx.rejected - ctx.routing_rejected);
  std::map<std::string, int64_t> shed;  // by class name, the default class "standard"
  for (const auto& [slo, n] : ctx.admission_rejected_by_class) {
    const std::string name = slo_class_name(slo);
    if (n > 0) shed[name.empty() ? "standard" : name] += n;
  }
  for (const auto& [name, n] : shed) out += fmt::format("  Shed ({}): {}\n", name, n);
  out += fmt::format("Rejected Requests (Routing): {}\n", ctx.routing_rejected);
  out += fmt::format("Dropped Unservable: {}\n", cluster.dropped_unservable);
  out += fmt::format("Timed Out Requests: {}\n", cluster.timed_out);
  out += fmt::format("Length-Capped Requests: {}\n", cluster.length_capped);
  return out;
}

// The gateway's lines (--flow-control), each only when nonzero, as HEAD prints them.
std::string gateway_lines(const ReportContext& ctx) {
  std::string out;
  if (ctx.gateway_depth > 0) out += fmt::format("Gateway Queue Depth (horizon): {}\n", ctx.gateway_depth);
  if (ctx.gateway_shed > 0) out += fmt::format("Gateway Queue Shed: {}\n", ctx.gateway_shed);
  if (ctx.gateway_rejected > 0) out += fmt::format("Gateway Queue Rejected: {}\n", ctx.gateway_rejected);
  if (ctx.gateway_evicted > 0) out += fmt::format("Gateway Evicted (in-flight): {}\n", ctx.gateway_evicted);
  if (ctx.gateway_expired > 0) out += fmt::format("Gateway Expired (TTL): {}\n", ctx.gateway_expired);
  return out;
}

// Per-SLO metrics, in µs, when at least two classes appear (or goodput
// targets are set). The classes' names (and the codes of each) first; then
// one class's samples at a time.
std::string per_slo_block(const InstanceMetrics& cluster, const ReportContext& ctx) {
  std::string out;
  std::map<std::string, std::set<int8_t>> classes;
  std::array<bool, 256> seen{};
  for (int8_t c : cluster.ttft_slo) seen[static_cast<uint8_t>(c)] = true;
  for (int8_t c : cluster.e2e_slo) seen[static_cast<uint8_t>(c)] = true;
  for (size_t c = 0; c < seen.size(); ++c) {
    if (!seen[c]) continue;
    const auto code = static_cast<int8_t>(static_cast<uint8_t>(c));
    const char* n = slo_class_name(code);
    classes[n[0] ? n : "default"].insert(code);
  }
  auto summary_of = [](const SampleStore& values, const std::deque<int8_t>& slo, const std::set<int8_t>& in) {
    std::vector<int64_t> picked;
    for (size_t k = 0; k < values.size(); ++k)
      if (in.count(slo[k]) > 0) picked.push_back(values[k]);
    return summarize(picked, 1);
  };
  if (classes.size() >= 2 || (ctx.per_slo_always && !classes.empty())) {
    out += "=== Per-SLO Metrics ===\n";
    for (const auto& [name, in] : classes) {
      const Summary t = summary_of(cluster.ttft, cluster.ttft_slo, in);
      const Summary e = summary_of(cluster.e2e, cluster.e2e_slo, in);
      out += fmt::format("  {}:\n", name);
      out += fmt::format("    TTFT: mean={:.2f} p99={:.2f} (n={})\n", t.mean, t.p99, t.count);
      if (cluster.head_form) {  // HEAD's line: the requests' mean ITLs
        std::vector<double> itl;
        for (size_t k = 0; k < cluster.request_itl.size(); ++k)
          if (in.count(cluster.request_itl_slo[k]) > 0) itl.push_back(cluster.request_itl[k]);
        const auto [mean, p99] = mean_and_p99(itl);
        out += fmt::format("    ITL:  mean={:.2f} p99={:.2f} (n={})\n", mean, p99, itl.size());
      }
      out += fmt::format("    E2E:  mean={:.2f} p99={:.2f} (n={})\n", e.mean, e.p99, e.count);
    }
  }
  return out;
}

}  // namespace

std::string text_blocks(const std::vector<const InstanceMetrics*>& instances,
                        const InstanceMetrics& cluster, const ReportContext& ctx) {
  std::string out;
  // Anomaly counters (spec cluster §7.5-§7.6).
  int64_t inversions = 0;
  if (!ctx.priority_policy_constant)
    for (const InstanceMetrics* m : instances) inversions += priority_inversions(m->completions);
  int64_t hol = 0;
  if (instances.size() >= 2) {
    std::vector<double> avgs;
    double sum = 0;
    for (const InstanceMetrics* m : instances) {
      double a = m->steps > 0 ? static_cast<double>(m->wait_depth_sum) / static_cast<double>(m->steps) : 0;
      avgs.push_back(a);
      sum += a;
    }
    double mean = sum / static_cast<double>(avgs.size());
    if (mean > 0)
      for (double a : avgs)
        if (a > 2 * mean) ++hol;
  }
  if (inversions > 0 || hol > 0 || ctx.rejected > 0 || cluster.dropped_unservable > 0 ||
      cluster.length_capped > 0 || cluster.timed_out > 0 || ctx.gateway_depth > 0 || ctx.gateway_shed > 0 ||
      ctx.gateway_rejected > 0 || ctx.gateway_evicted > 0 || ctx.gateway_expired > 0) {
    out += "=== Anomaly Counters ===\n";
    out += fmt::format("Priority Inversions: {}\n", inversions);
    out += fmt::format("HOL Blocking Events: {}\n", hol);
    if (cluster.reports_timeouts) {
      out += head_rejection_lines(cluster, ctx);
    } else {
      out += fmt::format("Rejected Requests: {}\n", ctx.rejected);
      out += fmt::format("Dropped Unservable: {}\n", cluster.dropped_unservable);
      out += fmt::format("Length-Capped Requests: {}\n", cluster.length_capped);
    }
    out += gateway_lines(ctx);
  }
  // KV cache metrics: preemption rate over the cluster, hit and thrashing
  // rates averaged over instances.
  double preemption_rate = cluster.completed > 0
                               ? static_cast<double>(cluster.preemptions) / static_cast<double>(cluster.completed)
                               : 0;
  double hit = 0, thrash = 0;
  for (const InstanceMetrics* m : instances) {
    hit += m->cache_hit_rate;
    thrash += m->kv_thrashing_rate;
  }
  if (!instances.empty()) {
    hit /= static_cast<double>(instances.size());
    thrash /= static_cast<double>(instances.size());
  }
  if (preemption_rate != 0 || hit != 0 || thrash != 0) {
    out += "=== KV Cache Metrics ===\n";
    out += fmt::format("Preemption Rate: {:.4f}\n", preemption_rate);
    out += fmt::format("Cache Hit Rate: {:.4f}\n", hit);
    out += fmt::format("KV Thrashing Rate: {:.4f}\n", thrash);
  }
  out += per_slo_block(cluster, ctx);
  return out;
}

}  // namespace blis
