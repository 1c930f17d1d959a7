#include "golden/pcap_io.hpp"

#include <pcap/pcap.h>

#include <memory>

namespace golden {
namespace {

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
struct DumperCloser {
  void operator()(pcap_dumper_t* d) const { pcap_dump_close(d); }
};

void set_error(std::string* error, const std::string& msg) {
  if (error != nullptr) *error = msg;
}

}  // namespace

std::optional<std::vector<Packet>> read_pcap(const std::string& path, std::string* error) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> p(pcap_open_offline(path.c_str(), errbuf));
  if (!p) {
    set_error(error, path + ": " + errbuf);
    return std::nullopt;
  }
  if (pcap_datalink(p.get()) != DLT_EN10MB) {
    set_error(error,
              path + ": link type " + std::to_string(pcap_datalink(p.get())) + " is not Ethernet");
    return std::nullopt;
  }
  std::vector<Packet> packets;
  for (;;) {
    pcap_pkthdr* hdr = nullptr;
    const u_char* data = nullptr;
    const int rc = pcap_next_ex(p.get(), &hdr, &data);
    if (rc == PCAP_ERROR_BREAK) break;  // end of file
    if (rc != 1) {
      set_error(error, path + ": " + pcap_geterr(p.get()));
      return std::nullopt;
    }
    if (hdr->caplen < hdr->len) {
      set_error(error, path + ": packet " + std::to_string(packets.size() + 1) +
                           " truncated (caplen " + std::to_string(hdr->caplen) + " < len " +
                           std::to_string(hdr->len) + ")");
      return std::nullopt;
    }
    packets.emplace_back(data, data + hdr->caplen);
  }
  return packets;
}

bool write_pcap(const std::string& path, const std::vector<Packet>& packets, std::string* error) {
  constexpr int kSnapLen = 65535;
  std::unique_ptr<pcap_t, PcapCloser> p(pcap_open_dead(DLT_EN10MB, kSnapLen));
  if (!p) {
    set_error(error, "pcap_open_dead failed");
    return false;
  }
  std::unique_ptr<pcap_dumper_t, DumperCloser> d(pcap_dump_open(p.get(), path.c_str()));
  if (!d) {
    set_error(error, path + ": " + pcap_geterr(p.get()));
    return false;
  }
  for (size_t i = 0; i < packets.size(); ++i) {
    if (packets[i].size() > static_cast<size_t>(kSnapLen)) {
      set_error(error, "packet " + std::to_string(i + 1) + " longer than the snaplen");
      return false;
    }
    pcap_pkthdr hdr{};
    hdr.ts.tv_sec = static_cast<time_t>(1 + i / 1000);
    hdr.ts.tv_usec = static_cast<suseconds_t>((i % 1000) * 1000);
    hdr.caplen = static_cast<bpf_u_int32>(packets[i].size());
    hdr.len = hdr.caplen;
    pcap_dump(reinterpret_cast<u_char*>(d.get()), &hdr, packets[i].data());
  }
  if (pcap_dump_flush(d.get()) != 0) {
    set_error(error, path + ": flush failed");
    return false;
  }
  d.reset();  // pcap_dump_close
  return true;
}

}  // namespace golden
