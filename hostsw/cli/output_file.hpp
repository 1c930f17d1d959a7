// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Output files the CLI writes (pcap, FST, JSON lines): checked before anything runs, so a
// user never learns only afterwards that a capture or a result went nowhere.
#pragma once

#include <optional>
#include <string>

namespace bouncer::cli {

/// Creates the missing parent directories of `path` and opens it for writing (truncating it),
/// then closes it. Returns why that failed ("--pcap /x/y.pcap: cannot be written: ..."), or
/// nothing when it can be written. An empty path (no output) is fine.
std::optional<std::string> check_output_file(const std::string& option, const std::string& path);

}  // namespace bouncer::cli
