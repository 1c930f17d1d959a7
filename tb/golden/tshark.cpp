#include "golden/tshark.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace golden {
namespace {

constexpr uint32_t kSeverityWarning = 0x600000;  // PI_WARN
constexpr char kAggregator = '\x1f';             // joins repeated fields in pass 2

// Single-quotes `s` for /bin/sh.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool parse_uint(const std::string& s, uint32_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  const unsigned long x = std::strtoul(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0' || x > 0xFFFFFFFFul) return false;
  *v = static_cast<uint32_t>(x);
  return true;
}

bool parse_bool(const std::string& s, bool* v) {
  if (s == "1" || s == "True" || s == "true") {
    *v = true;
  } else if (s == "0" || s == "False" || s == "false") {
    *v = false;
  } else {
    return false;
  }
  return true;
}

bool parse_hex_bytes(const std::string& s, std::vector<uint8_t>* out) {
  std::string digits;
  for (char c : s) {
    if (c != ':') digits += c;
  }
  if (digits.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < digits.size(); i += 2) {
    uint32_t b = 0;
    if (!parse_uint("0x" + digits.substr(i, 2), &b)) return false;
    out->push_back(static_cast<uint8_t>(b));
  }
  return true;
}

// Runs `args` (already quoted) through tshark; stdout lines in *lines. On failure returns
// false with the exit status and tshark's stderr (minus the root warning) in *error.
bool run_tshark(const std::string& args, std::vector<std::string>* lines, std::string* error) {
  char err_path[] = "/tmp/golden_tshark_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) {
    *error = std::string("mkstemp: ") + std::strerror(errno);
    return false;
  }
  close(fd);
  const std::string cmd = "tshark " + args + " 2>" + shell_quote(err_path);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    unlink(err_path);
    *error = std::string("popen: ") + std::strerror(errno);
    return false;
  }
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);

  std::ifstream ef(err_path);
  std::stringstream es;
  es << ef.rdbuf();
  unlink(err_path);
  std::string stderr_text;
  for (const std::string& l : split(es.str(), '\n')) {
    if (l.empty() || l.rfind("Running as user \"root\"", 0) == 0) continue;
    stderr_text += l + "\n";
  }

  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = "`" + cmd + "` failed (status " + std::to_string(status) + "): " + stderr_text;
    return false;
  }
  lines->clear();
  for (std::string& l : split(out, '\n')) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (!l.empty()) lines->push_back(l);
  }
  return true;
}

std::string common_args(const std::string& pcap_path) {
  return "-n -r " + shell_quote(pcap_path) +
         " -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE"
         " -o tcp.try_heuristic_first:TRUE --enable-heuristic iwarp_mpa_tcp";
}

}  // namespace

bool tshark_available() {
  static const bool available = std::system("tshark -v >/dev/null 2>&1") == 0;
  return available;
}

std::string TsharkReport::summary() const {
  std::ostringstream s;
  if (!ok) s << "tshark failed: " << error << "\n";
  for (uint32_t f : ip_checksum_bad) s << "frame " << f << ": bad IPv4 checksum\n";
  for (uint32_t f : tcp_checksum_bad) s << "frame " << f << ": bad TCP checksum\n";
  for (uint32_t f : malformed) s << "frame " << f << ": malformed\n";
  for (const TsharkExpert& e : experts) {
    s << "frame " << e.frame << ": expert 0x" << std::hex << e.severity << std::dec << " "
      << e.message << "\n";
  }
  return s.str();
}

TsharkReport tshark_check_mpa(const std::string& pcap_path) {
  TsharkReport rep;
  std::vector<std::string> lines;

  // Pass 1: the MPA replies.
  const std::string pass1 = common_args(pcap_path) +
                            " -Y iwarp_mpa.rep -T fields -e frame.number"
                            " -e iwarp_mpa.rej_flag -e iwarp_mpa.rev -e iwarp_mpa.pdlength"
                            " -e iwarp_mpa.privatedata -E separator=, -E occurrence=f";
  if (!run_tshark(pass1, &lines, &rep.error)) return rep;
  for (const std::string& l : lines) {
    const auto f = split(l, ',');
    TsharkMpaRow row;
    uint32_t rev = 0, pdl = 0;
    if (f.size() != 5 || !parse_uint(f[0], &row.frame) || !parse_bool(f[1], &row.rej_flag) ||
        !parse_uint(f[2], &rev) || !parse_uint(f[3], &pdl) ||
        !parse_hex_bytes(f[4], &row.private_data)) {
      rep.error = "unexpected tshark reply line: " + l;
      return rep;
    }
    row.rev = rev;
    row.pd_length = pdl;
    rep.replies.push_back(std::move(row));
  }

  // Pass 2: checksum status, malformed and expert infos of every frame.
  const std::string pass2 =
      common_args(pcap_path) +
      " -T fields -e frame.number -e ip.checksum.status"
      " -e tcp.checksum.status -e _ws.malformed -e _ws.expert.severity"
      " -e _ws.expert.message -E separator=/t -E occurrence=a -E aggregator=" +
      shell_quote(std::string(1, kAggregator));
  if (!run_tshark(pass2, &lines, &rep.error)) return rep;
  for (const std::string& l : lines) {
    const auto f = split(l, '\t');
    uint32_t frame = 0;
    if (f.size() != 6 || !parse_uint(f[0], &frame)) {
      rep.error = "unexpected tshark status line: " + l;
      return rep;
    }
    ++rep.frames;
    for (const std::string& s : split(f[1], kAggregator)) {
      if (s == "0") rep.ip_checksum_bad.push_back(frame);
    }
    for (const std::string& s : split(f[2], kAggregator)) {
      if (s == "0") rep.tcp_checksum_bad.push_back(frame);
    }
    if (!f[3].empty()) rep.malformed.push_back(frame);
    const auto sev = split(f[4], kAggregator);
    const auto msg = split(f[5], kAggregator);
    for (size_t i = 0; i < sev.size(); ++i) {
      uint32_t v = 0;
      if (!parse_uint(sev[i], &v) || v < kSeverityWarning) continue;
      rep.experts.push_back({frame, v, i < msg.size() ? msg[i] : std::string()});
    }
  }
  rep.ok = true;
  return rep;
}

}  // namespace golden
