// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "output_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace bouncer::cli {

std::optional<std::string> check_output_file(const std::string& option, const std::string& path) {
  if (path.empty()) return std::nullopt;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return fmt::format("{} {}: cannot create the directory {}: {}", option, path, dir.string(),
                         ec.message());
    }
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return fmt::format("{} {}: cannot be written: {}", option, path, std::strerror(errno));
  }
  if (std::fclose(f) != 0) {
    return fmt::format("{} {}: cannot be written: {}", option, path, std::strerror(errno));
  }
  return std::nullopt;
}

}  // namespace bouncer::cli
