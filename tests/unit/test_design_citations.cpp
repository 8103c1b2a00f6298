// Every behaviour citation in the sources ("spec <doc> §<n>", also written
// "spec <doc>.md §<n>") must resolve to a heading of docs/design/<doc>.md that
// carries the same section number, so that the reason behind a line of code
// can be found in the tree (docs/design/README.md).
#include "catch.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kSection = "\xC2\xA7";  // "§" in UTF-8

struct Citation {
  std::string file;  // relative to the source root
  int line = 0;
  std::string doc;      // "engine", "cluster", ...
  std::string section;  // "4.2", "4", ...
};

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A section number at s[pos]: digits, optionally followed by ".digits"
// groups; a trailing '.' (end of a sentence) is not part of it.
std::string section_at(const std::string& s, size_t pos) {
  size_t end = pos;
  while (end < s.size() && is_digit(s[end])) {
    while (end < s.size() && is_digit(s[end])) ++end;
    if (end + 1 < s.size() && s[end] == '.' && is_digit(s[end + 1])) ++end;
  }
  return s.substr(pos, end - pos);
}

// The citations on one line: "spec", one space, a lower-case document name,
// an optional ".md", one space, "§", a section number.
void citations_in(const std::string& line, const std::string& file, int number, std::vector<Citation>& out) {
  const std::string spec = "spec ";
  for (size_t at = line.find(spec); at != std::string::npos; at = line.find(spec, at + 1)) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(line[at - 1]))) continue;  // "respec ..."
    size_t p = at + spec.size();
    const size_t name_begin = p;
    while (p < line.size() && (std::islower(static_cast<unsigned char>(line[p])) || line[p] == '-')) ++p;
    if (p == name_begin) continue;
    const std::string doc = line.substr(name_begin, p - name_begin);
    if (line.compare(p, 3, ".md") == 0) p += 3;
    if (line.compare(p, 1 + kSection.size(), " " + kSection) != 0) continue;
    p += 1 + kSection.size();
    const std::string section = section_at(line, p);
    if (section.empty()) continue;
    out.push_back({file, number, doc, section});
  }
}

bool scanned(const fs::path& p) {
  static const std::set<std::string> kExtensions = {".cpp", ".hpp", ".h", ".c", ".lua", ".cmake", ".toml"};
  return kExtensions.count(p.extension().string()) > 0;
}

std::vector<Citation> source_citations(const fs::path& root) {
  std::vector<Citation> out;
  for (const char* dir : {"core", "plugins", "sdk", "scripts", "tests"}) {
    if (!fs::exists(root / dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && scanned(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      const std::string rel = fs::relative(path, root).generic_string();
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) citations_in(line, rel, n, out);
    }
  }
  return out;
}

// The section numbers of a design note's headings ("## §4.2 ..." gives
// "4.2"); lines inside fenced code blocks are not headings. Each number is
// mapped to the headings carrying it, to find duplicates too.
std::map<std::string, std::vector<int>> heading_sections(const fs::path& doc) {
  std::map<std::string, std::vector<int>> out;
  std::ifstream in(doc, std::ios::binary);
  std::string line;
  bool fenced = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.compare(0, 3, "```") == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    for (size_t at = line.find(kSection); at != std::string::npos; at = line.find(kSection, at + 1)) {
      const std::string section = section_at(line, at + kSection.size());
      if (!section.empty()) out[section].push_back(n);
    }
  }
  return out;
}

const fs::path kRoot = BLIS_TEST_SOURCE_DIR;

}  // namespace

TEST_CASE("design notes: every spec citation in the sources has its heading", "[docs]") {
  const std::vector<Citation> citations = source_citations(kRoot);
  // Guard against scanning the wrong tree: the sources cite hundreds of sections.
  REQUIRE(citations.size() > 100);

  std::map<std::string, std::map<std::string, std::vector<int>>> headings;  // doc -> section -> lines
  std::ostringstream unresolved;
  std::set<std::string> distinct;
  int missing = 0;
  for (const Citation& c : citations) {
    distinct.insert(c.doc + " " + c.section);
    const fs::path doc = kRoot / "docs" / "design" / (c.doc + ".md");
    if (!headings.count(c.doc)) headings[c.doc] = fs::exists(doc) ? heading_sections(doc) : decltype(headings)::mapped_type{};
    if (headings[c.doc].count(c.section)) continue;
    ++missing;
    unresolved << "  " << c.file << ":" << c.line << ": spec " << c.doc << " " << kSection << c.section << " -> "
               << (fs::exists(doc) ? "no heading with " + kSection + c.section + " in docs/design/" + c.doc + ".md"
                                   : "docs/design/" + c.doc + ".md does not exist")
               << "\n";
  }
  INFO(citations.size() << " citations of " << distinct.size() << " distinct sections scanned");
  if (missing > 0) {
    FAIL(missing << " citation(s) do not resolve:\n"
                 << unresolved.str()
                 << "Add a heading that starts with the section number (e.g. '### " << kSection
                 << "4.2 Automatic KV capacity') to the design note, saying what the behaviour is and the "
                    "numbers needed to check the code; or correct the citation. See docs/design/README.md.");
  }
  SUCCEED();
}

TEST_CASE("design notes: no section number heads two headings of one note", "[docs]") {
  std::ostringstream duplicates;
  int count = 0;
  for (const auto& e : fs::directory_iterator(kRoot / "docs" / "design")) {
    if (e.path().extension() != ".md") continue;
    for (const auto& [section, lines] : heading_sections(e.path())) {
      if (lines.size() < 2) continue;
      ++count;
      duplicates << "  docs/design/" << e.path().filename().string() << ": " << kSection << section << " at lines";
      for (int l : lines) duplicates << " " << l;
      duplicates << "\n";
    }
  }
  if (count > 0) FAIL("a citation of these sections would be ambiguous:\n" << duplicates.str());
  SUCCEED();
}
