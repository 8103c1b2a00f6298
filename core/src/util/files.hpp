// Questions about a path the user named, answered without throwing: the
// throwing forms of std::filesystem::exists and is_directory raise
// filesystem_error for a name too long, a loop of links or a folder that
// may not be searched, which would escape as an internal error (or, inside
// CLI11's validators, abort). Such a path is simply not there.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace blis::files {

inline bool exists(const std::string& path) noexcept {
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !ec;
}

inline bool is_folder(const std::string& path) noexcept {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) && !ec;
}

}  // namespace blis::files
