// Runs Wireshark's tshark on a capture to cross-check MPA replies with a third-party dissector.
//
// Wireshark's MPA heuristic dissector only decodes a reply when the MPA request of the same
// TCP conversation is earlier in the capture (see build_mpa_request_frame).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace golden {

// One dissected MPA reply (display filter iwarp_mpa.rep).
struct TsharkMpaRow {
  uint32_t frame = 0;  // 1-based frame number in the capture
  bool rej_flag = false;
  unsigned rev = 0;
  unsigned pd_length = 0;
  std::vector<uint8_t> private_data;  // iwarp_mpa.privatedata (includes the IRD/ORD word)
};

// An expert info of severity warning or error.
struct TsharkExpert {
  uint32_t frame = 0;
  uint32_t severity = 0;  // Wireshark PI_* value: 0x600000 warning, 0x800000 error
  std::string message;
};

struct TsharkReport {
  bool ok = false;    // tshark ran and its output was understood
  std::string error;  // why not (includes tshark's stderr)
  uint32_t frames = 0;
  std::vector<TsharkMpaRow> replies;
  std::vector<uint32_t> ip_checksum_bad;   // frames with ip.checksum.status == 0 (Bad)
  std::vector<uint32_t> tcp_checksum_bad;  // frames with tcp.checksum.status == 0 (Bad)
  std::vector<uint32_t> malformed;         // frames carrying _ws.malformed
  std::vector<TsharkExpert> experts;       // severity >= warning, any frame

  // ok and no checksum error, malformed packet or warning/error expert info.
  bool clean() const {
    return ok && ip_checksum_bad.empty() && tcp_checksum_bad.empty() && malformed.empty() &&
           experts.empty();
  }
  std::string summary() const;  // human-readable problems, for test failure messages
};

// True if `tshark` can be run (found on PATH and `tshark -v` succeeds).
bool tshark_available();

// Two tshark passes over `pcap_path`, both with IP and TCP checksum validation on and the
// iwarp_mpa_tcp heuristic enabled and tried first:
//  1. -Y iwarp_mpa.rep -T fields -e frame.number -e iwarp_mpa.rej_flag -e iwarp_mpa.rev
//     -e iwarp_mpa.pdlength -e iwarp_mpa.privatedata -E separator=,   -> replies
//  2. every frame: ip/tcp checksum status, _ws.malformed, expert severity and message.
TsharkReport tshark_check_mpa(const std::string& pcap_path);

}  // namespace golden
