// Who listens to the lifecycle signals of a request (engine/lifecycle.hpp):
// the one list, fixed at compile time so the signals cost no dispatch. A new
// metric (goodput, per-tenant counts) is an observer (metrics/observer.hpp):
// its class and an entry in RunObservers; the engine, the cluster and the
// report writers do not change.
#pragma once

#include "cluster/closed_loop.hpp"
#include "cluster/decision_trace.hpp"
#include "cluster/in_flight.hpp"
#include "cluster/live_tap.hpp"
#include "cluster/tenant_budget.hpp"
#include "engine/lifecycle.hpp"
#include "metrics/collector.hpp"
#include "metrics/goodput.hpp"
#include "metrics/observer.hpp"
#include "metrics/pd_metrics.hpp"
#include "metrics/request_records.hpp"
#include "metrics/saturation.hpp"
#include "metrics/session_metrics.hpp"
#include "metrics/steady_state.hpp"
#include "metrics/steady_window.hpp"
#include "metrics/step_series.hpp"
#include "metrics/tenant_metrics.hpp"
#include "metrics/time_series.hpp"
#include "metrics/trace_recorder.hpp"

namespace blis {

// The metrics the cluster never names: built from ClusterConfig::observers,
// fed after the subscribers below, and handed over as parts of the report
// (ClusterResult::observers), in this order.
using RunObservers = Observers<GoodputTracker, TenantMetrics, SessionMetrics, TraceRecorder>;

// The records read what the collector wrote in the request's slot: the
// collector comes first. A struct rather than an alias, so that a header
// (engine/instance.hpp) can declare it without including the list.
struct RequestSignals
    : Lifecycle<MetricsCollector, RequestRecords, InFlight, TenantBudget, DecisionTrace, SteadyStateProbe,
                TimedSampleProbe, SaturationProbe,
                TimeSeriesProbe, ClosedLoop, TimeSeries, PdMetrics, RunObservers, LiveTap> {
  using Lifecycle::Lifecycle;
};

}  // namespace blis
