// Who listens to the lifecycle signals of a request (engine/lifecycle.hpp):
// the one list, fixed at compile time so the signals cost no dispatch. A new
// metric (goodput, per-tenant counts, saturation signals) is a new subscriber
// class and a new entry here; the engine and the cluster do not change.
#pragma once

#include "cluster/closed_loop.hpp"
#include "cluster/decision_trace.hpp"
#include "cluster/in_flight.hpp"
#include "engine/lifecycle.hpp"
#include "metrics/collector.hpp"
#include "metrics/goodput.hpp"
#include "metrics/pd_metrics.hpp"
#include "metrics/request_records.hpp"
#include "metrics/saturation.hpp"
#include "metrics/steady_state.hpp"
#include "metrics/step_series.hpp"
#include "metrics/time_series.hpp"

namespace blis {

// The records read what the collector wrote in the request's slot: the
// collector comes first. A struct rather than an alias, so that a header
// (engine/instance.hpp) can declare it without including the list.
struct RequestSignals
    : Lifecycle<MetricsCollector, RequestRecords, InFlight, DecisionTrace, SteadyStateProbe, GoodputTracker,
                SaturationProbe, TimeSeriesProbe, ClosedLoop, TimeSeries, PdMetrics> {
  using Lifecycle::Lifecycle;
};

}  // namespace blis
