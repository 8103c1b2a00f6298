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

// The identity of a sweep: a hash of every configuration's settings, in
// order, and of the settings all of them share (`shared`: the scenario's base
// and the command line's, less those that only name outputs or steer the
// process). Journals and shard documents carry it, so rows of another sweep
// are never taken for this one's. "fnv1a64:" and 16 hex digits.
std::string sweep_identity(const std::vector<Settings>& points, const std::vector<const Settings*>& shared);

// A journal's first line: the sweep's identity and size.
std::string journal_header(const std::string& identity, size_t total);
// The identity and size of a journal_header line; ConfigError naming `where` if it is not one.
std::pair<std::string, size_t> parse_journal_header(const std::string& line, const std::string& where);

// Whether two configurations' own settings are the same (flags and values).
bool same_point(const Settings& a, const Settings& b);

// One finished configuration of a sweep, with its index in the sweep: a line
// of a checkpoint journal, or an entry of a shard's document. Numbers keep
// their exact text, so merged rows print byte for byte as unsharded ones.
std::string row_record(size_t index, const Row& row);
// Parses row_record's text; ConfigError naming `where` if it is not one.
std::pair<size_t, Row> parse_row_record(const std::string& json, const std::string& where);

// A shard's report: the scenario, the shard (i of n), the sweep's size and
// its rows as records, one per line.
std::string shard_document(const std::string& scenario, const std::string& identity, int64_t shard, int64_t shards,
                           size_t total, const std::vector<std::pair<size_t, Row>>& rows);

// Shard documents read back: the scenario, the sweep's identity and size, and
// the rows by index.
struct ShardRows {
  std::string scenario;
  std::string identity;
  size_t total = 0;
  std::map<size_t, Row> rows;
};
// Adds the document at `path` to `into`; ConfigError on a malformed file, an
// index that is not a whole number below the size, or a document of another
// sweep (identity, scenario or size).
void read_shard_document(const std::string& path, ShardRows& into);

}  // namespace blis
