// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// pcap_check: validate every MPA reject in a capture with the golden parser (independent
// checksum code) and print one line per frame. Exit status 1 if any reply frame is
// malformed or the capture holds no reject at all. MPA requests (peer side) are listed and
// skipped. Usage: pcap_check FILE.pcap [--tshark]
#include <cstdio>
#include <string>

#include "golden/frame_parser.hpp"
#include "golden/pcap_io.hpp"
#include "golden/tshark.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.pcap [--tshark]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const bool with_tshark = argc > 2 && std::string(argv[2]) == "--tshark";
  std::string err;
  auto pkts = golden::read_pcap(path, &err);
  if (!pkts) {
    std::fprintf(stderr, "pcap_check: %s\n", err.c_str());
    return 1;
  }
  unsigned rejects = 0, bad = 0, n = 0;
  for (const auto& p : *pkts) {
    ++n;
    std::string why;
    auto r = golden::parse_mpa_reply(p, &why);
    if (!r) {
      std::printf("#%-3u %4zu B  INVALID: %s\n", n, p.size(), why.c_str());
      ++bad;
      continue;
    }
    if (r->key_request_ok) {
      std::printf("#%-3u %4zu B  MPA request (peer) rev %u PD_Length %u\n", n, p.size(), r->rev,
                  r->pd_length);
      continue;
    }
    const bool reject = r->key_reply_ok && (r->mpa_flags & 0x20);
    if (!reject) {
      std::printf("#%-3u %4zu B  NOT AN MPA REJECT (flags 0x%02x)\n", n, p.size(), r->mpa_flags);
      ++bad;
      continue;
    }
    ++rejects;
    std::printf(
        "#%-3u %4zu B  %u.%u.%u.%u:%u -> %u.%u.%u.%u:%u%s seq %u  MPA reject rev %u flags 0x%02x "
        "PD_Length %u (private data %zu B)  checksums ok\n",
        n, p.size(), r->src_ip >> 24, (r->src_ip >> 16) & 255, (r->src_ip >> 8) & 255,
        r->src_ip & 255, r->src_port, r->dst_ip >> 24, (r->dst_ip >> 16) & 255,
        (r->dst_ip >> 8) & 255, r->dst_ip & 255, r->dst_port,
        r->vlan ? (" vlan " + std::to_string(r->vlan_tci & 0xFFF)).c_str() : "", r->seq, r->rev,
        r->mpa_flags, r->pd_length, r->private_data.size());
  }
  std::printf("%s: %u frames, %u valid MPA rejects, %u invalid\n", path.c_str(), n, rejects, bad);
  if (with_tshark && golden::tshark_available()) {
    auto rep = golden::tshark_check_mpa(path);
    std::printf("tshark: %s\n", rep.summary().c_str());
  }
  return (bad == 0 && rejects > 0) ? 0 : 1;
}
