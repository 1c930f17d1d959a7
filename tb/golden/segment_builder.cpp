// The test-side segment builder (segment.hpp). Checksums by reject_frame.cpp's
// internet_checksum; the decoder (frame_parser.cpp) checks them with its own routine.
#include "golden/reject_frame.hpp"
#include "golden/segment.hpp"

namespace golden {

uint16_t tcp_checksum(uint32_t src_ip, uint32_t dst_ip, std::span<const uint8_t> segment) {
  std::vector<uint8_t> pseudo;
  for (uint32_t ip : {src_ip, dst_ip}) {
    for (int sh = 24; sh >= 0; sh -= 8) pseudo.push_back(static_cast<uint8_t>(ip >> sh));
  }
  pseudo.push_back(0);
  pseudo.push_back(6);
  pseudo.push_back(static_cast<uint8_t>(segment.size() >> 8));
  pseudo.push_back(static_cast<uint8_t>(segment.size()));
  pseudo.insert(pseudo.end(), segment.begin(), segment.end());
  return internet_checksum(pseudo);
}

std::vector<uint8_t> build_segment(const SegmentSpec& fr) {
  std::vector<uint8_t> f;
  auto p16 = [&](uint16_t v) {
    f.push_back(static_cast<uint8_t>(v >> 8));
    f.push_back(static_cast<uint8_t>(v));
  };
  auto p32 = [&](uint32_t v) {
    p16(static_cast<uint16_t>(v >> 16));
    p16(static_cast<uint16_t>(v));
  };
  f.insert(f.end(), fr.dst_mac.begin(), fr.dst_mac.end());
  f.insert(f.end(), fr.src_mac.begin(), fr.src_mac.end());
  if (fr.vlan) {
    p16(0x8100);
    p16(*fr.vlan);
  }
  p16(fr.ethertype);
  const size_t ip = f.size();
  const size_t iph = 20 + fr.ip_opts.size();
  const size_t tcph = 20 + fr.tcp_opts.size();
  const size_t tcp_len = tcph + fr.payload.size();
  const uint8_t ihl = fr.ihl.value_or(static_cast<uint8_t>(iph / 4));
  f.push_back(static_cast<uint8_t>(fr.version << 4 | (ihl & 0xF)));
  f.push_back(fr.tos);
  p16(fr.total_len.value_or(static_cast<uint16_t>(iph + tcp_len)));
  p16(fr.ip_id);
  p16(fr.frag);
  f.push_back(fr.ttl);
  f.push_back(fr.proto);
  p16(0);
  p32(fr.src_ip);
  p32(fr.dst_ip);
  f.insert(f.end(), fr.ip_opts.begin(), fr.ip_opts.end());
  const uint16_t ipc =
      internet_checksum(std::span<const uint8_t>(f.data() + ip, iph)) ^ fr.ip_csum_xor;
  f[ip + 10] = static_cast<uint8_t>(ipc >> 8);
  f[ip + 11] = static_cast<uint8_t>(ipc);
  const size_t t = f.size();
  p16(fr.sport);
  p16(fr.dport);
  p32(fr.seq);
  p32(fr.ack);
  f.push_back(static_cast<uint8_t>(fr.doff.value_or(static_cast<uint8_t>(tcph / 4)) << 4));
  f.push_back(fr.flags);
  p16(fr.window);
  p16(0);
  p16(0);
  f.insert(f.end(), fr.tcp_opts.begin(), fr.tcp_opts.end());
  f.insert(f.end(), fr.payload.begin(), fr.payload.end());
  const uint16_t tc =
      tcp_checksum(fr.src_ip, fr.dst_ip, std::span<const uint8_t>(f).subspan(t, tcp_len)) ^
      fr.tcp_csum_xor;
  f[t + 16] = static_cast<uint8_t>(tc >> 8);
  f[t + 17] = static_cast<uint8_t>(tc);
  while (fr.pad && f.size() < 60) f.push_back(0);
  return f;
}

}  // namespace golden
