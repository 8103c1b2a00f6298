// The rows of a sweep or search: one per configuration, its own settings then
// the cluster's metrics, printed as one JSON document or as CSV.
#pragma once

#include "metrics/report.hpp"

#include <blis/scenario.hpp>

#include <map>
#include <string>
#include <utility>
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

namespace blis {

// One finished configuration of a sweep, with its index in the sweep: a line
// of a checkpoint journal, or an entry of a shard's document. Numbers keep
// their exact text, so merged rows print byte for byte as unsharded ones.
std::string row_record(size_t index, const Row& row);
// Parses row_record's text; ConfigError naming `where` if it is not one.
std::pair<size_t, Row> parse_row_record(const std::string& json, const std::string& where);

// A shard's report: the scenario, the shard (i of n), the sweep's size and
// its rows as records, one per line.
std::string shard_document(const std::string& scenario, int64_t shard, int64_t shards, size_t total,
                           const std::vector<std::pair<size_t, Row>>& rows);

// Shard documents read back: the scenario, the sweep's size and the rows by index.
struct ShardRows {
  std::string scenario;
  size_t total = 0;
  std::map<size_t, Row> rows;
};
// Adds the document at `path` to `into`; ConfigError on a malformed file or
// one from another scenario or sweep size.
void read_shard_document(const std::string& path, ShardRows& into);

}  // namespace blis
