// The rows of a sweep or search: one per configuration, its own settings then
// the cluster's metrics, printed as one JSON document or as CSV.
#pragma once

#include "metrics/report.hpp"

#include <blis/scenario.hpp>

#include <string>
#include <vector>

namespace blis {

struct Row {
  Settings point;
  std::vector<MetricField> metrics;
};

// {"scenario": ..., "rows": [...], "result": ...}; `result` is JSON text or "".
std::string rows_json(const std::string& scenario, const std::vector<Row>& rows, const std::string& result);
std::string rows_csv(const std::vector<Row>& rows);

}  // namespace blis
