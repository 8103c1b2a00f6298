// Where a record setting and each of its fields were given, for messages.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace blis {

// Where a record (a pool, node pool, event, lifecycle, autoscaler) was given,
// and where each of its fields was, when a field has a place of its own (a
// key of a TOML table: "run.toml:9:17: pools"). Messages about one field name
// the field's place; the rest the record's.
struct RecordPlace {
  std::string where;                          // "run.toml:7:1: pools", "--pool"
  std::map<std::string, std::string> fields;  // by field key
  RecordPlace() = default;
  RecordPlace(std::string w) : where(std::move(w)) {}  // NOLINT(google-explicit-constructor): a place is a where
  RecordPlace(const char* w) : where(w) {}             // NOLINT(google-explicit-constructor)
  const std::string& of(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? where : it->second;
  }
};

}  // namespace blis
