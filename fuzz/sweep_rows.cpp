// The readers of a sweep's checkpoint journal and of `blis run --shard`
// reports (src/run/rows.hpp): the input is parsed as a journal's first line,
// as one row line of a journal, and as a shard document read from a file (what
// `blis merge` reads), twice into the same rows, as merging a shard with
// itself would.
#include "fuzz_input.hpp"

#include "run/rows.hpp"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("shard", ".json");
  const std::string text(reinterpret_cast<const char*>(data), size);
  blis_fuzz::expect_only_blis_errors([&] { blis::parse_journal_header(text, "journal:1"); });
  blis_fuzz::expect_only_blis_errors([&] { blis::parse_row_record(text, "journal:2"); });
  blis_fuzz::write_file(path, data, size);
  blis::ShardRows rows;
  blis_fuzz::expect_only_blis_errors([&] { blis::read_shard_document(path, rows); });
  blis_fuzz::expect_only_blis_errors([&] { blis::read_shard_document(path, rows); });
  return 0;
}
