// One line of a CSV file (trace replay, ServeGen traces).
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace blis::workload {

// The longest line a CSV reader takes: a file without line breaks
// (/dev/zero) must not be read into memory whole.
inline constexpr size_t kMaxCsvLineBytes = size_t{1} << 20;

enum class LineRead { kLine, kEnd, kTooLong };

// The next line of `in` into `line`, without its '\n': kEnd at the end of
// the input, kTooLong once a line passes kMaxCsvLineBytes.
LineRead read_csv_line(std::istream& in, std::string& line);

// Splits one CSV line (RFC 4180 quoting, no line breaks inside fields) into
// `fields`. Returns false on a malformed quote.
bool split_csv_line(const std::string& line, std::vector<std::string>& fields);

}  // namespace blis::workload
