#include "util/output_file.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace blis {
namespace {

namespace fs = std::filesystem;

// Writes all of `text` to an open descriptor; false on failure (errno set).
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

void check_writable(const std::string& path, const std::string& where) {
  if (path == "-") return;
  if (path.empty()) throw InputError(where, "empty path; name a file, or - for stdout");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {  // exists (a symlink is followed)
    if (S_ISDIR(st.st_mode)) throw InputError(where, fmt::format("{} is a folder; name a file", path));
    if (::access(path.c_str(), W_OK) != 0)
      throw InputError(where, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    // Only a regular file itself (not a symlink to one, such as /dev/stdout)
    // is replaced through its folder; anything else is written through.
    struct stat lst {};
    const bool replaced = ::lstat(path.c_str(), &lst) == 0 && S_ISREG(lst.st_mode);
    if (replaced && ::access(folder_of(path).c_str(), W_OK | X_OK) != 0)
      throw InputError(where, fmt::format("cannot replace {}: its folder {} is not writable ({})", path,
                                          folder_of(path), std::strerror(errno)));
    return;
  }
  // New file (or a dangling symlink: written through to its target's folder).
  std::string target = path;
  std::error_code ec;
  if (fs::is_symlink(path, ec)) target = (fs::path(path).parent_path() / fs::read_symlink(path, ec)).string();
  const std::string dir = folder_of(target);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode))
    throw InputError(where, fmt::format("cannot write {}: the folder {} does not exist", path, dir));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(where, fmt::format("cannot write {}: the folder {} is not writable ({})", path, dir,
                                        std::strerror(errno)));
}

bool written_through(const std::string& path) {
  struct stat lst {};
  return path == "-" || (::lstat(path.c_str(), &lst) == 0 && !S_ISREG(lst.st_mode));
}

void append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  const bool ok = write_all(fd, line + "\n") && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) throw RuntimeError(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
}

void write_output(const std::string& path, const std::string& text, std::ostream& stdout_stream) {
  if (path == "-") {
    stdout_stream << text << std::flush;
    return;
  }
  if (written_through(path)) {
    // A symlink, FIFO or device: write through it, never replace it.
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw RuntimeError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    const bool ok = write_all(fd, text);
    const int saved = errno;
    ::close(fd);
    if (!ok) throw RuntimeError(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
    return;
  }
  // A regular or new file: a temporary file beside it, renamed into place.
  const fs::path p(path);
  const std::string tmp =
      (p.parent_path() / fmt::format(".{}.{}.tmp", p.filename().string(), static_cast<long>(::getpid()))).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  bool ok = write_all(fd, text);
  int saved = errno;
  if (ok && ::fsync(fd) != 0) ok = false, saved = errno;
  ::close(fd);
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) ok = false, saved = errno;
  if (!ok) {
    ::unlink(tmp.c_str());
    throw RuntimeError(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
  }
}

}  // namespace blis
