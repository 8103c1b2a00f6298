// --trace-output and a replay's SimResults (run/trace_output.hpp). A run's
// trace has one row per request that arrived, in arrival order, numbered
// from 0; a replay's keeps the replayed trace's rows in its order. The
// times are the client's: the first token's, and the last token's without
// the post-decode overhead that E2E includes.
#include "run/trace_output.hpp"

#include "metrics/trace_recorder.hpp"
#include "workload/slo_class.hpp"
#include "workload/trace_v2.hpp"

#include <algorithm>
#include <unordered_map>

namespace blis {

namespace {

using workload::TraceRecord;

const TraceRecorder* recorder_of(const ClusterResult& result) {
  for (const auto& part : result.observers)
    if (const auto* t = dynamic_cast<const TraceRecorder*>(part.get())) return t;
  return nullptr;
}

// The row of one request from what the run knows of it.
TraceRecord row_of(const TraceRecorder::Entry& e, const WorkloadSource* workload = nullptr) {
  TraceRecord rec;
  if (const WorkloadSource::SourceInfo* info = workload ? workload->source_info(e.spec.source) : nullptr) {
    rec.client_id = info->client_id;
    rec.prefix_group = info->prefix_group;
    rec.prefix_length = info->prefix_length;
    rec.streaming = info->streaming;
  }
  if (workload != nullptr) rec.session_id = workload->session_name(e.spec);
  rec.tenant_id = e.spec.tenant_id.str();
  rec.adapter = e.spec.adapter.str();
  rec.slo_class = workload::slo_class_name(e.spec.slo_class);
  rec.round_index = e.spec.round;
  rec.input_tokens = e.spec.input_tokens - rec.prefix_length;
  if (rec.input_tokens < 0) {  // as HEAD: no prefix then
    rec.input_tokens = e.spec.input_tokens;
    rec.prefix_length = 0;
  }
  rec.output_tokens = e.spec.output_tokens;
  rec.model = e.spec.model.str();
  rec.deadline_us = e.spec.deadline_us;
  rec.slo_target_us = e.spec.slo_target_us;
  rec.arrival_time_us = e.spec.arrival_us;
  rec.send_time_us = e.spec.arrival_us;
  if (e.first_token >= 0) {
    rec.first_chunk_time_us = e.spec.arrival_us + e.first_token;
    rec.last_chunk_time_us = e.spec.arrival_us + std::max(e.last_token, e.first_token);
  }
  rec.status = e.status == TraceRecorder::Entry::kOk ? "ok" : e.status == TraceRecorder::Entry::kTimeout ? "timeout"
                                                                                                           : "incomplete";
  return rec;
}

workload::TraceHeader header_of(const ResolvedRun& r) {
  workload::TraceHeader h;
  h.mode = r.replay ? "replayed" : "generated";
  if (!r.replay) h.workload_seed = r.spec ? r.spec->seed : r.seed;
  // The real server's hit rate is kept as observed (HEAD's re-export does too).
  if (r.replay) h.observed_kv_metrics = r.replay->header.observed_kv_metrics;
  for (const auto& [cls, t] : r.slo_targets) {
    const std::string name = workload::slo_class_name(cls);
    h.goodput_slo_targets[name.empty() ? "default" : name] = {t.ttft_ms, t.itl_ms, t.e2e_ms};
  }
  return h;
}

void write_trace(const ResolvedRun& r, const TraceRecorder& recorder, const WorkloadSource* workload,
                 RunOutcome& outcome) {
  const std::vector<TraceRecorder::Entry> entries = recorder.entries();
  std::vector<TraceRecord> rows;
  if (r.replay) {
    // HEAD re-exports the trace's requests in the trace's order, numbered from 0.
    std::unordered_map<uint64_t, const TraceRecorder::Entry*> by_id;
    for (const auto& e : entries) by_id.emplace(e.spec.id, &e);
    for (const TraceRecord& src : r.replay->records) {
      const auto it = by_id.find(static_cast<uint64_t>(src.request_id));
      TraceRecord rec = it != by_id.end() ? row_of(*it->second) : TraceRecord{};
      if (it == by_id.end()) rec.status = "incomplete";
      // What the trace says of the request itself.
      rec.client_id = src.client_id;
      rec.tenant_id = src.tenant_id;
      rec.slo_class = src.slo_class;
      rec.session_id = src.session_id;
      rec.round_index = src.round_index;
      rec.prefix_group = src.prefix_group;
      rec.streaming = src.streaming;
      rec.text_tokens = src.text_tokens;
      rec.image_tokens = src.image_tokens;
      rec.audio_tokens = src.audio_tokens;
      rec.video_tokens = src.video_tokens;
      rec.reason_ratio = src.reason_ratio;
      rec.model = src.model;
      rec.deadline_us = src.deadline_us;
      rec.slo_target_us = src.slo_target_us;
      rec.adapter = src.adapter;
      rec.output_tokens = src.output_tokens;
      const int64_t own =
          src.server_input_tokens > 0 && src.prefix_group.empty() ? src.server_input_tokens : src.input_tokens;
      // The group's prefix (the length its first row gave) in front of the row's own tokens.
      int64_t prefix = 0;
      if (!src.prefix_group.empty())
        for (const TraceRecord& g : r.replay->records)
          if (g.prefix_group == src.prefix_group && g.prefix_length > 0) {
            prefix = g.prefix_length;
            break;
          }
      rec.prefix_length = src.prefix_length;
      rec.input_tokens = prefix + own - src.prefix_length;
      if (rec.input_tokens < 0) {
        rec.input_tokens = prefix + own;
        rec.prefix_length = 0;
      }
      rec.arrival_time_us = workload::injection_time(src);
      rec.send_time_us = rec.arrival_time_us;
      rec.request_id = static_cast<int64_t>(rows.size());
      rows.push_back(std::move(rec));
    }
  } else {
    for (const auto& e : entries) {
      TraceRecord rec = row_of(e, workload);
      rec.request_id = static_cast<int64_t>(rows.size());
      rows.push_back(std::move(rec));
    }
  }
  const workload::TraceHeader h = header_of(r);
  outcome.trace_yaml = workload::trace_header_yaml(h);
  outcome.trace_csv = workload::trace_data_csv(h, rows);
}

}  // namespace

void trace_outputs(const ResolvedRun& r, const ClusterResult& result, const InstanceMetrics& cluster,
                   const WorkloadSource* workload, RunOutcome& outcome) {
  if (r.config.outputs.trace_output) {
    if (const TraceRecorder* recorder = recorder_of(result)) write_trace(r, *recorder, workload, outcome);
  }
  if (r.replay) {
    // HEAD's SimResults: the completed requests, by request id.
    std::vector<workload::SimResult>& out = outcome.sim_results;
    for (const RequestRecord& rec : cluster.records) {
      if (rec.dropped || rec.timed_out || rec.failed || rec.e2e < 0 || rec.ttft < 0) continue;
      workload::SimResult s;
      s.request_id = static_cast<int64_t>(rec.id);
      s.ttft_us = static_cast<double>(rec.ttft);
      s.e2e_us = static_cast<double>(rec.e2e);
      s.input_tokens = rec.input_tokens;
      s.output_tokens = rec.output_tokens;
      s.slo_class = workload::slo_class_name(rec.slo_class);
      s.model = rec.model.str();
      s.itl_mean_us = rec.itl_avg;
      out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(),
              [](const workload::SimResult& a, const workload::SimResult& b) { return a.request_id < b.request_id; });
    if (r.config.replay && r.config.replay->sim_results) outcome.sim_results_json = workload::sim_results_json(out);
  }
}

}  // namespace blis
