#include "metrics/request_records.hpp"

namespace blis {

void RequestRecords::add(const Request& r, End end) {
  RequestRecord rec;
  rec.id = r.spec.id;
  rec.arrival_us = r.spec.arrival_us;
  rec.input_tokens = r.spec.input_tokens;
  rec.output_tokens = r.spec.output_tokens;
  rec.ttft = r.timing.ttft();
  rec.e2e = r.timing.e2e();
  rec.scheduling_delay = r.timing.scheduling_delay();
  rec.gateway_wait = r.timing.gateway_wait();
  rec.itl_avg = r.timing.itl_avg();
  rec.slo_class = r.spec.slo_class;
  rec.instance = r.instance;
  rec.round = r.spec.round;
  rec.session = r.spec.session;
  rec.user = r.spec.user;
  rec.length_capped = r.length_capped;
  rec.dropped = end == End::Dropped;
  rec.timed_out = end == End::TimedOut;
  rec.failed = end == End::Failed;
  rec.evicted = end == End::Evicted;
  rec.tenant_id = r.spec.tenant_id;
  rec.model = r.spec.model;
  rec.adapter = r.spec.adapter;
  metrics_[static_cast<size_t>(r.instance)].records.push_back(rec);
}

}  // namespace blis
