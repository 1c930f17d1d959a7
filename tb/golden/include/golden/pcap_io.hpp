// Minimal pcap I/O on top of libpcap (Ethernet link type only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace golden {

using Packet = std::vector<uint8_t>;

// All packets of a pcap file, in order. nullopt with a reason in *error (if non-null) when the
// file cannot be opened, its link type is not Ethernet (DLT_EN10MB), a packet was captured
// truncated (caplen < len), or reading fails.
std::optional<std::vector<Packet>> read_pcap(const std::string& path, std::string* error);

// Writes `packets` as an Ethernet pcap (snaplen 65535), timestamps 1 ms apart starting at
// t = 1 s. Returns false with a reason in *error (if non-null) on failure.
bool write_pcap(const std::string& path, const std::vector<Packet>& packets, std::string* error);

}  // namespace golden
