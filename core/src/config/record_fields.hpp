// The fields of a record (lifecycle, autoscaler, node pool), as rows: each
// field's key, what it is, and how its value is checked and stored in the
// record's struct. One reader takes a record's text through the one tokenizer
// (util/compact_text.hpp) into the struct by these rows, so that the keys, the
// checks and the message of an unknown key live in one table per record, and
// each value's error names the place the value was given (RecordPlace).
#pragma once

#include "util/compact_text.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>
#include <blis/run_config.hpp>

#include <fmt/format.h>

#include <set>
#include <span>
#include <string>
#include <string_view>

namespace blis::record {

// What a setter gets: the field's key and value, and the place of a message
// about it ("run.toml:9:7: lifecycle"). Its message names the value itself
// ("max=x must be ..."), so it reads the same wherever the record was written.
struct Value {
  const std::string& key;
  const std::string& text;
  const std::string& where;
  InputError bad(const std::string& what) const { return InputError(where, what); }
};

template <class T>
struct Field {
  std::string_view key;
  std::string_view help;  // what the field is, for docs and messages
  void (*set)(T&, const Value&);
};

// The keys, "a, b, c", in the rows' order.
template <class T>
std::string keys(std::span<const Field<T>> fields) {
  std::string out;
  for (const auto& f : fields) text::append(out, ", ", std::string(f.key));
  return out;
}

// Reads record `text` (given at `place`) into `base` by `fields`: a malformed
// text, a key given twice or a key of no row is an InputError, as is any
// value a row's setter refuses; each names the place of its field.
template <class T>
T read(std::span<const Field<T>> fields, const std::string& text, const RecordPlace& place, std::string_view what,
       T base) {
  const std::string prefix = fmt::format("{} '{}': ", what, text);
  std::set<std::string> seen;
  for (const auto& p : compact::pairs(text, compact::kSpaced, place.where, prefix)) {
    const std::string& where = place.of(p.key);
    if (!seen.insert(p.key).second) throw InputError(where, fmt::format("{}'{}' is given twice", prefix, p.key));
    const Field<T>* row = nullptr;
    for (const auto& f : fields)
      if (f.key == p.key) row = &f;
    if (row == nullptr)
      throw InputError(where, fmt::format("{}unknown key '{}'; keys are {}", prefix, p.key, keys(fields)));
    row->set(base, Value{p.key, p.value, where});
  }
  return base;
}

}  // namespace blis::record
