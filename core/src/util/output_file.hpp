// Files a run writes (--results-path, --rows-csv, --rows-json): checked
// before any simulation starts, so a long run never ends in "cannot write";
// "-" is stdout; regular and new files are replaced atomically (a temporary
// file beside them, renamed), while symlinks, FIFOs and devices are written
// through, never replaced.
#pragma once

#include <ostream>
#include <string>

namespace blis {

// InputError naming `where` (the flag or file:line) and the path when `path`
// cannot be written: its folder is missing or read-only, it is a folder, or
// it exists without write permission.
void check_writable(const std::string& path, const std::string& where);

// Whether write_output writes `path` through rather than replacing it: "-"
// (stdout), and an existing symlink, device or FIFO.
bool written_through(const std::string& path);

// Appends `line` and a newline to `path` in one write, then syncs it: a
// checkpoint that survives a kill (RuntimeError on failure).
void append_line(const std::string& path, const std::string& line);

// Writes `text` to `path` as described above; `stdout_stream` receives it for
// "-". RuntimeError when the write fails (the file is then left as it was).
void write_output(const std::string& path, const std::string& text, std::ostream& stdout_stream);

}  // namespace blis
