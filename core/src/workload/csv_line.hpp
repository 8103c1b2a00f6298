// One line of a CSV file (trace replay, ServeGen traces).
#pragma once

#include <string>
#include <vector>

namespace blis::workload {

// Splits one CSV line (RFC 4180 quoting, no line breaks inside fields) into
// `fields`. Returns false on a malformed quote.
bool split_csv_line(const std::string& line, std::vector<std::string>& fields);

}  // namespace blis::workload
