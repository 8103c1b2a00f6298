#include "workload/csv_line.hpp"

namespace blis::workload {

LineRead read_csv_line(std::istream& in, std::string& line) {
  line.clear();
  std::streambuf& buf = *in.rdbuf();
  for (;;) {
    const int c = buf.sbumpc();
    if (c == std::char_traits<char>::eof()) return line.empty() ? LineRead::kEnd : LineRead::kLine;
    if (c == '\n') return LineRead::kLine;
    if (line.size() == kMaxCsvLineBytes) return LineRead::kTooLong;
    line.push_back(static_cast<char>(c));
  }
}

namespace {

// The quoted field opening at line[i] (a '"'), its doubled quotes undone;
// `i` ends past the closing quote. False if the quote is not closed.
bool read_quoted(const std::string& line, size_t& i, std::string& field) {
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
      return true;
    }
    field += line[i++];
  }
}

}  // namespace

bool split_csv_line(const std::string& line, std::vector<std::string>& fields) {
  fields.clear();
  size_t i = 0;
  for (;;) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      if (!read_quoted(line, i, field)) return false;
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
