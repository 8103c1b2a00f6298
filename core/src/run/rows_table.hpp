// The rows of a sweep or search as a table for people (`--format table`):
// the settings each configuration varies, then its main figures with units.
#pragma once

#include "run/rows.hpp"

#include <string>
#include <vector>

namespace blis {

// One line per row; a search's `result` (JSON text, or "") follows the table.
std::string rows_table(const std::string& scenario, const std::vector<Row>& rows, const std::string& result);

}  // namespace blis
