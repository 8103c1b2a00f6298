#include "workload/csv_line.hpp"

namespace blis::workload {

bool split_csv_line(const std::string& line, std::vector<std::string>& fields) {
  fields.clear();
  size_t i = 0;
  for (;;) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) return false;  // unterminated quote
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') return false;  // text after the closing quote
    } else {
      const size_t end = line.find(',', i);
      const size_t stop = end == std::string::npos ? line.size() : end;
      field = line.substr(i, stop - i);
      if (field.find('"') != std::string::npos) return false;
      i = stop;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) return true;
    ++i;  // the comma
    if (i == line.size()) {
      fields.emplace_back();  // trailing empty field
      return true;
    }
  }
}

}  // namespace blis::workload
