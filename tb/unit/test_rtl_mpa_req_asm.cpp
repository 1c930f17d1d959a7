// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/rx/bouncer_mpa_req_asm at DATA_W 64 and 512, each in the default
// configuration (8 buffers, 4 KiB staging) and a small one (2 buffers, 512-byte staging).
// A byte-level reference model (1024-byte buffers, a 24-byte header shadow per buffer, a free
// set) predicts every response, every read-out chunk and the free-buffer count in every
// cycle; pool events (allocation, frees) are applied to it in the cycle the RTL sees them.
// Independently of the model, the PD read back is compared with the bytes the request was
// built from. Inputs get random gaps and outputs random backpressure.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vmpa_asm_small_w512.h"
#include "Vmpa_asm_small_w64.h"
#include "Vmpa_asm_w512.h"
#include "Vmpa_asm_w64.h"
#include "axis_lanes.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

using Bytes = std::vector<uint8_t>;
constexpr unsigned kBufBytes = 1024;
constexpr char kKey[] = "MPA ID Req Frame";  // 16 bytes

// ---------------------------------------------------------------- MPA requests
struct Request {
  Bytes bytes;             // header + PD as on the wire
  unsigned pd_start = 20;  // where the host's PD begins (24 behind a rev-2 IRD/ORD word)
  unsigned pd_len = 0;     // host PD bytes
  uint32_t ird_ord = 0;
};

// rev 1: flags 0, PD_Length = pd_field bytes of PD. rev 2 enhanced: flags 0x10, the PD
// starts with a big-endian IRD/ORD word that PD_Length includes (pd_field >= 4).
Request make_request(unsigned rev, unsigned pd_field, std::mt19937_64& rng) {
  Request r;
  r.bytes.assign(kKey, kKey + 16);
  const bool enh = rev == 2;
  r.bytes.push_back(enh ? 0x10 : 0x00);
  r.bytes.push_back(static_cast<uint8_t>(rev));
  r.bytes.push_back(static_cast<uint8_t>(pd_field >> 8));
  r.bytes.push_back(static_cast<uint8_t>(pd_field));
  unsigned i = 0;
  if (enh) {
    r.ird_ord = static_cast<uint32_t>(rng());
    for (int s = 24; s >= 0; s -= 8) r.bytes.push_back(static_cast<uint8_t>(r.ird_ord >> s));
    i = 4;
    r.pd_start = 24;
  }
  for (; i < pd_field; ++i) r.bytes.push_back(static_cast<uint8_t>(rng()));
  r.pd_len = enh ? pd_field - 4 : pd_field;
  return r;
}

Bytes random_bytes(size_t n, std::mt19937_64& rng) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// ---------------------------------------------------------------- reference model
struct Cmd {
  bool append = true;
  bool is_new = false;
  int req = -1;      // >= 0 and !is_new: append to the buffer request `req` was given
  unsigned buf = 0;  // used when req < 0 (or garbage with is_new)
  unsigned offset = 0;
  Bytes payload;  // s_cmd_len = payload.size() unless len_override
  std::optional<unsigned> len_override;
  bool wait_free = false;  // driven only while a buffer is free (as a CM would check bufs_free)
  unsigned len() const { return len_override ? *len_override : unsigned(payload.size()); }
};

struct Rsp {
  bool ok = false;
  unsigned buf = 0, total = 0;
  bool hdr_valid = false, key_ok = false;
  unsigned flags = 0, rev = 0, pd_len = 0;
  bool iov = false;
  uint32_t ird_ord = 0;
  bool operator==(const Rsp& o) const {
    return ok == o.ok && buf == o.buf && total == o.total && hdr_valid == o.hdr_valid &&
           key_ok == o.key_ok && flags == o.flags && rev == o.rev && pd_len == o.pd_len &&
           iov == o.iov && ird_ord == o.ird_ord;
  }
};

std::string str(const Rsp& r) {
  std::ostringstream os;
  os << "{ok " << r.ok << " buf " << r.buf << " total " << r.total << " hdr " << r.hdr_valid
     << " key " << r.key_ok << " flags 0x" << std::hex << r.flags << " rev " << r.rev
     << " pd_len 0x" << r.pd_len << " iov " << r.iov << " ird_ord 0x" << r.ird_ord << "}";
  return os.str();
}

struct Chunk {
  std::array<uint8_t, 64> data{};
  unsigned beats = 0;
  bool last = false;
};

class RefAsm {
 public:
  explicit RefAsm(unsigned nbuf)
      : mem_(nbuf, Bytes(kBufBytes, 0)), shadow_(nbuf, Bytes(24, 0)), free_(nbuf, true) {}

  std::optional<unsigned> lowest_free() const {
    for (unsigned n = 0; n < free_.size(); ++n)
      if (free_[n]) return n;
    return std::nullopt;
  }
  unsigned free_count() const { return unsigned(std::count(free_.begin(), free_.end(), true)); }
  void release(unsigned b) { free_.at(b) = true; }
  void take(unsigned b) { free_.at(b) = false; }

  // The append/discard itself; `alloc` is the pool's choice for a new buffer.
  Rsp apply(const Cmd& c, unsigned buf, std::optional<unsigned> alloc) {
    Rsp r;
    r.ok = c.append && (!c.is_new || alloc.has_value());
    r.buf = !(c.append && c.is_new) ? buf : (alloc ? *alloc : 0);
    const unsigned total = c.offset + c.len();
    r.total = std::min(total, 0xFFFFu);
    if (!r.ok) return r;
    if (c.is_new) std::fill(shadow_[r.buf].begin(), shadow_[r.buf].end(), 0);
    for (unsigned i = 0; i < c.len(); ++i) {
      const unsigned o = c.offset + i;
      if (o >= kBufBytes) break;
      mem_[r.buf][o] = c.payload[i];
      if (o < 24) shadow_[r.buf][o] = c.payload[i];
    }
    const Bytes& s = shadow_[r.buf];
    if (total >= 20) {
      r.hdr_valid = true;
      r.key_ok = std::memcmp(s.data(), kKey, 16) == 0;
      r.flags = s[16];
      r.rev = s[17];
      r.pd_len = unsigned(s[18]) << 8 | s[19];
    }
    if (total >= 24) {
      r.iov = true;
      r.ird_ord = uint32_t(s[20]) << 24 | uint32_t(s[21]) << 16 | uint32_t(s[22]) << 8 | s[23];
    }
    return r;
  }

  std::vector<Chunk> read(unsigned buf, unsigned start, unsigned len) const {
    std::vector<Chunk> out;
    for (unsigned i = 0; 64 * i < len; ++i) {
      Chunk c;
      const unsigned rem = std::min(64u, len - 64 * i);
      for (unsigned k = 0; k < rem; ++k) {
        const unsigned o = start + 64 * i + k;
        c.data[k] = o < kBufBytes ? mem_[buf][o] : 0;
      }
      c.beats = (rem + 7) / 8;
      c.last = 64 * (i + 1) >= len;
      out.push_back(c);
    }
    return out;
  }

 private:
  std::vector<Bytes> mem_, shadow_;
  std::vector<bool> free_;
};

// ---------------------------------------------------------------- port access
template <typename T>
void put_data(T& port, const Bytes& b) {
  if constexpr (std::is_integral_v<std::remove_reference_t<T>>) {
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; ++i) v |= uint64_t{b[i]} << (8 * i);
    port = v;
  } else {
    for (unsigned w = 0; w < 16; ++w) {
      uint32_t v = 0;
      for (unsigned j = 0; j < 4; ++j) v |= uint32_t{b[4 * w + j]} << (8 * j);
      port[w] = v;
    }
  }
}

// ---------------------------------------------------------------- harness
struct Knobs {
  double pay_gap = 0, cmd_gap = 0, rd_gap = 0, rsp_stall = 0, chunk_stall = 0;
};

struct RdReq {
  int req = -1;  // buffer of request `req`, or `buf`
  unsigned buf = 0, start = 0, len = 0;
  bool free = false;
  size_t after_rsps = 0;  // driven once this many responses have been taken
};

struct FreeReq {
  int req = -1;
  unsigned buf = 0;
  size_t after_rsps = 0;
  bool after_reads = false;  // also wait until every read queued so far has finished
};

struct ExpChunk {
  Chunk c;
  bool free = false;
  unsigned buf = 0;
  size_t read_no = 0;
};

template <typename Model, unsigned NbufLog2, unsigned StageLog2>
struct Cfg {
  using M = Model;
  static constexpr unsigned kNbuf = 1u << NbufLog2;
  static constexpr unsigned kStageBytes = 1u << StageLog2;
};

template <typename C>
class Harness {
 public:
  using Model = typename C::M;
  static constexpr unsigned kBytes =
      sizeof(std::remove_reference_t<decltype(Model::s_axis_payload_tkeep)>) * 8;
  static constexpr unsigned kNbuf = C::kNbuf;
  static constexpr unsigned kStageBeats = C::kStageBytes / kBytes;

  explicit Harness(uint64_t seed) : rng_(seed), ref_(kNbuf) {
    ctx_.randReset(0);
    m_ = std::make_unique<Model>(&ctx_, "asm");
    m_->s_axis_payload_tvalid = 0;
    m_->s_cmd_valid = 0;
    m_->s_rd_valid = 0;
    m_->s_free_valid = 0;
    m_->m_rsp_ready = 0;
    m_->m_chunk_ready = 0;
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) {
      m_->clk = 0;
      m_->eval();
      m_->clk = 1;
      m_->eval();
    }
    m_->rst = 0;
  }

  Knobs knobs;
  bool hold_cmds = false, hold_payload = false;

  // ---- stimulus
  void push_frame(const Bytes& p) {
    for (size_t off = 0; off < p.size(); off += kBytes) {
      Beat b;
      b.bytes.assign(kBytes, 0);
      const size_t n = std::min<size_t>(kBytes, p.size() - off);
      std::copy(p.begin() + off, p.begin() + off + n, b.bytes.begin());
      b.keep = n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1);
      b.last = off + kBytes >= p.size();
      beats_.push_back(b);
    }
  }
  // A command and its frame (no frame when the payload is empty).
  void submit(const Cmd& c) {
    if (!c.payload.empty()) push_frame(c.payload);
    cmds_.push_back(c);
    ++submitted_;
  }
  // Commands submitted so far (= responses to wait for before reading what they wrote).
  size_t submitted() const { return submitted_; }
  // Reads submitted so far (= index into read_data() of the next read).
  size_t reads_submitted() const { return reads_submitted_; }
  void read(const RdReq& r) {
    rds_.push_back(r);
    ++reads_submitted_;
  }
  void free_buf(const FreeReq& f) { frees_.push_back(f); }

  // ---- one clock cycle
  void cycle() {
    Model& m = *m_;
    m.clk = 0;
    const bool pv = !hold_payload && !beats_.empty() && !coin(knobs.pay_gap);
    m.s_axis_payload_tvalid = pv;
    if (pv) {
      put_data(m.s_axis_payload_tdata, beats_.front().bytes);
      m.s_axis_payload_tkeep =
          static_cast<std::remove_reference_t<decltype(m.s_axis_payload_tkeep)>>(
              beats_.front().keep);
      m.s_axis_payload_tlast = beats_.front().last;
    } else {
      put_data(m.s_axis_payload_tdata, random_bytes(64, rng_));
      m.s_axis_payload_tlast = rng_() & 1;
    }

    const bool cv = !hold_cmds && !cmds_.empty() && !coin(knobs.cmd_gap) &&
                    (!cmds_.front().wait_free || ref_.free_count() > 0);
    m.s_cmd_valid = cv;
    unsigned cbuf = static_cast<unsigned>(rng_() % kNbuf);
    if (cv) {
      const Cmd& c = cmds_.front();
      cbuf = (c.req >= 0 && !c.is_new) ? req_buf_.at(c.req) : c.buf;
      m.s_cmd_append = c.append;
      m.s_cmd_new = c.is_new;
      m.s_cmd_buf = cbuf;
      m.s_cmd_offset = c.offset;
      m.s_cmd_len = c.len();
    } else {
      m.s_cmd_append = rng_() & 1;
      m.s_cmd_new = rng_() & 1;
      m.s_cmd_buf = cbuf;
      m.s_cmd_offset = rng_() & 1023;
      m.s_cmd_len = rng_() & 0xFFFF;
    }

    const bool rv = !rds_.empty() && rsps_.size() >= rds_.front().after_rsps && !coin(knobs.rd_gap);
    m.s_rd_valid = rv;
    unsigned rbuf = 0;
    if (rv) {
      const RdReq& r = rds_.front();
      rbuf = r.req >= 0 ? req_buf_.at(r.req) : r.buf;
      m.s_rd_buf = rbuf;
      m.s_rd_start = r.start;
      m.s_rd_len = r.len;
      m.s_rd_free = r.free;
    } else {
      m.s_rd_buf = rng_() % kNbuf;
      m.s_rd_start = rng_() & 1023;
      m.s_rd_len = rng_() & 1023;
      m.s_rd_free = rng_() & 1;
    }

    const bool fv = !frees_.empty() && rsps_.size() >= frees_.front().after_rsps &&
                    (!frees_.front().after_reads || (rds_.empty() && exp_chunks_.empty()));
    m.s_free_valid = fv;
    unsigned fbuf = static_cast<unsigned>(rng_() % kNbuf);
    if (fv) fbuf = frees_.front().req >= 0 ? req_buf_.at(frees_.front().req) : frees_.front().buf;
    m.s_free_buf = fbuf;

    m.m_rsp_ready = !coin(knobs.rsp_stall);
    m.m_chunk_ready = !coin(knobs.chunk_stall);
    m.eval();

    // ---- sample (before the edge)
    EXPECT_EQ(unsigned(m.bufs_free), ref_.free_count()) << "cycle " << cycle_;
    const bool pay_fire = pv && m.s_axis_payload_tready;
    const bool cmd_fire = cv && m.s_cmd_ready;
    const bool rsp_fire = m.m_rsp_valid && m.m_rsp_ready;
    const bool rd_fire = rv && m.s_rd_ready;
    const bool chunk_fire = m.m_chunk_valid && m.m_chunk_ready;
    tready_low_ += !m.s_axis_payload_tready;

    if (rsp_fire) {
      Rsp got;
      got.ok = m.m_rsp_ok;
      got.buf = m.m_rsp_buf;
      got.total = m.m_rsp_total;
      got.hdr_valid = m.m_rsp_hdr_valid;
      got.key_ok = m.m_rsp_key_ok;
      got.flags = m.m_rsp_flags;
      got.rev = m.m_rsp_rev;
      got.pd_len = m.m_rsp_pd_len;
      got.iov = m.m_rsp_ird_ord_valid;
      got.ird_ord = m.m_rsp_ird_ord;
      if (exp_rsp_.empty()) {
        ADD_FAILURE() << "unexpected response " << str(got);
      } else {
        EXPECT_EQ(got, exp_rsp_.front()) << "response " << rsps_.size() << ": got " << str(got)
                                         << " want " << str(exp_rsp_.front());
        exp_rsp_.pop_front();
      }
      rsps_.push_back(got);
      rsp_cycle_.push_back(cycle_);
    }
    bool chunk_frees = false;
    unsigned chunk_free_buf = 0;
    if (chunk_fire) {
      Chunk got;
      for (unsigned k = 0; k < 64; ++k) got.data[k] = axis::lane_byte(m.m_chunk_data, k);
      got.beats = m.m_chunk_beats;
      got.last = m.m_chunk_last;
      if (exp_chunks_.empty()) {
        ADD_FAILURE() << "unexpected chunk";
      } else {
        const ExpChunk& e = exp_chunks_.front();
        EXPECT_EQ(got.beats, e.c.beats) << "read " << e.read_no;
        EXPECT_EQ(got.last, e.c.last) << "read " << e.read_no;
        EXPECT_EQ(got.data, e.c.data) << "read " << e.read_no;
        read_data_.at(e.read_no).insert(read_data_.at(e.read_no).end(), got.data.begin(),
                                        got.data.end());
        chunk_frees = e.c.last && e.free;
        chunk_free_buf = e.buf;
        exp_chunks_.pop_front();
      }
      chunk_cycle_.push_back(cycle_);
    }

    // ---- the reference, in the order the RTL applies this cycle's events
    std::optional<unsigned> alloc;
    if (cmd_fire) {
      const Cmd& c = cmds_.front();
      if (c.append && c.is_new) alloc = ref_.lowest_free();
      exp_rsp_.push_back(ref_.apply(c, cbuf, alloc));
      if (c.is_new && c.req >= 0 && alloc) req_buf_[c.req] = *alloc;
      cmd_cycle_.push_back(cycle_);
      cmds_.pop_front();
    }
    if (rd_fire) {
      const RdReq& r = rds_.front();
      const size_t no = read_data_.size();
      read_data_.emplace_back();
      read_cycle_.push_back(cycle_);
      for (const Chunk& c : ref_.read(rbuf, r.start, r.len))
        exp_chunks_.push_back({c, r.free, rbuf, no});
      if (r.len == 0 && r.free) ref_.release(rbuf);
      rds_.pop_front();
    }
    if (fv) {
      ref_.release(fbuf);
      frees_.pop_front();
    }
    if (chunk_frees) ref_.release(chunk_free_buf);
    if (alloc) ref_.take(*alloc);
    if (pay_fire) {
      beats_.pop_front();
      ++beats_in_;
    }

    m.clk = 1;
    m.eval();
    ++cycle_;
  }

  bool busy() const {
    return !beats_.empty() || !cmds_.empty() || !rds_.empty() || !frees_.empty() ||
           !exp_rsp_.empty() || !exp_chunks_.empty();
  }
  // Run until everything submitted is done (and a few cycles more).
  void run(uint64_t limit = 400000) {
    const uint64_t end = cycle_ + limit;
    while (busy() && cycle_ < end && !::testing::Test::HasFatalFailure()) cycle();
    ASSERT_FALSE(busy()) << "not finished after " << limit << " cycles: beats " << beats_.size()
                         << " cmds " << cmds_.size() << " rsps " << exp_rsp_.size() << " reads "
                         << rds_.size() << " chunks " << exp_chunks_.size();
    for (int i = 0; i < 4; ++i) cycle();
  }
  void cycles(unsigned n) {
    for (unsigned i = 0; i < n; ++i) cycle();
  }

  Model& dut() { return *m_; }
  std::mt19937_64& rng() { return rng_; }
  unsigned buf_of(int req) const { return req_buf_.at(req); }
  const std::vector<Rsp>& rsps() const { return rsps_; }
  const std::vector<Bytes>& read_data() const { return read_data_; }
  const std::vector<uint64_t>& cmd_cycles() const { return cmd_cycle_; }
  const std::vector<uint64_t>& rsp_cycles() const { return rsp_cycle_; }
  const std::vector<uint64_t>& read_cycles() const { return read_cycle_; }
  const std::vector<uint64_t>& chunk_cycles() const { return chunk_cycle_; }
  uint64_t beats_in() const { return beats_in_; }
  uint64_t tready_low() const { return tready_low_; }
  size_t pending_beats() const { return beats_.size(); }
  unsigned free_count() const { return ref_.free_count(); }

 private:
  struct Beat {
    Bytes bytes;
    uint64_t keep = 0;
    bool last = false;
  };
  bool coin(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  RefAsm ref_;
  uint64_t cycle_ = 0, beats_in_ = 0, tready_low_ = 0;
  size_t submitted_ = 0, reads_submitted_ = 0;
  std::deque<Beat> beats_;
  std::deque<Cmd> cmds_;
  std::deque<RdReq> rds_;
  std::deque<FreeReq> frees_;
  std::deque<Rsp> exp_rsp_;
  std::deque<ExpChunk> exp_chunks_;
  std::map<int, unsigned> req_buf_;
  std::vector<Rsp> rsps_;
  std::vector<Bytes> read_data_;
  std::vector<uint64_t> cmd_cycle_, rsp_cycle_, read_cycle_, chunk_cycle_;
};

// ---------------------------------------------------------------- helpers for the tests
// Split `n` bytes into `parts` non-empty segments at random boundaries.
std::vector<unsigned> split_points(unsigned n, unsigned parts, std::mt19937_64& rng) {
  std::vector<unsigned> cuts;
  std::vector<unsigned> all(n - 1);
  for (unsigned i = 0; i + 1 < n; ++i) all[i] = i + 1;
  std::shuffle(all.begin(), all.end(), rng);
  cuts.assign(all.begin(), all.begin() + (parts - 1));
  std::sort(cuts.begin(), cuts.end());
  cuts.insert(cuts.begin(), 0);
  cuts.push_back(n);
  return cuts;  // segment i = [cuts[i], cuts[i+1])
}

// The commands carrying request `req` in the given segments.
std::vector<Cmd> segment_cmds(int req, const Bytes& bytes, const std::vector<unsigned>& cuts) {
  std::vector<Cmd> out;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Cmd c;
    c.is_new = i == 0;
    c.req = req;
    c.offset = cuts[i];
    c.payload.assign(bytes.begin() + cuts[i], bytes.begin() + cuts[i + 1]);
    out.push_back(c);
  }
  return out;
}

Bytes pd_of(const Request& r) {
  return Bytes(r.bytes.begin() + r.pd_start, r.bytes.begin() + r.pd_start + r.pd_len);
}

Knobs random_knobs(std::mt19937_64& rng) {
  auto p = [&] { return std::uniform_real_distribution<double>(0, 0.7)(rng); };
  return Knobs{p(), p(), p(), p(), p()};
}

// ---------------------------------------------------------------- tests
template <typename C>
class MpaReqAsm : public ::testing::Test {};

using Configs = ::testing::Types<Cfg<Vmpa_asm_w64, 3, 12>, Cfg<Vmpa_asm_w512, 3, 12>,
                                 Cfg<Vmpa_asm_small_w64, 1, 9>, Cfg<Vmpa_asm_small_w512, 1, 9>>;
class CfgNames {
 public:
  template <typename T>
  static std::string GetName(int i) {
    static const char* const names[] = {"w64", "w512", "small_w64", "small_w512"};
    return names[i];
  }
};
TYPED_TEST_SUITE(MpaReqAsm, Configs, CfgNames);

// One request per segment for every PD length class, rev 1 and rev 2 enhanced; the header
// fields are checked against the request directly and the PD read back must be the PD.
TYPED_TEST(MpaReqAsm, SingleSegmentPdLengthClasses) {
  for (int pass = 0; pass < 2; ++pass) {
    Harness<TypeParam> h(11 + pass);
    if (pass == 1) h.knobs = Knobs{0.3, 0.3, 0.3, 0.3, 0.5};
    std::vector<Request> reqs;
    int req = 0;
    for (unsigned rev : {1u, 2u}) {
      for (unsigned user_pd : {0u, 1u, 7u, 8u, 9u, 255u, 508u, 512u}) {
        const unsigned field = rev == 2 ? user_pd + 4 : user_pd;
        if (field > 512) continue;  // PD_Length is at most 512, IRD/ORD word included
        const Request r = make_request(rev, field, h.rng());
        Cmd c;
        c.is_new = true;
        c.req = req;
        c.payload = r.bytes;
        c.wait_free = true;
        h.submit(c);
        h.read({req, 0, r.pd_start, r.pd_len, true, size_t(req) + 1});
        reqs.push_back(r);
        ++req;
      }
    }
    h.run();
    ASSERT_EQ(h.rsps().size(), reqs.size());
    ASSERT_EQ(h.read_data().size(), reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      const Request& r = reqs[i];
      const Rsp& g = h.rsps()[i];
      SCOPED_TRACE("request " + std::to_string(i));
      EXPECT_TRUE(g.ok);
      EXPECT_EQ(g.total, r.bytes.size());
      EXPECT_TRUE(g.hdr_valid);
      EXPECT_TRUE(g.key_ok);
      EXPECT_EQ(g.flags, r.bytes[16]);
      EXPECT_EQ(g.rev, r.bytes[17]);
      EXPECT_EQ(g.pd_len, r.bytes.size() - 20);
      EXPECT_EQ(g.iov, r.bytes.size() >= 24);
      if (r.pd_start == 24) {
        EXPECT_EQ(g.ird_ord, r.ird_ord);
      }
      const Bytes& d = h.read_data()[i];
      EXPECT_EQ(d.size(), (r.pd_len + 63) / 64 * 64);
      EXPECT_EQ(Bytes(d.begin(), d.begin() + std::min<size_t>(d.size(), r.pd_len)), pd_of(r));
    }
    EXPECT_EQ(unsigned(h.dut().bufs_free), TypeParam::kNbuf);
  }
}

// A wrong key is reported (and only the key).
TYPED_TEST(MpaReqAsm, BadKeyAndShortHeader) {
  Harness<TypeParam> h(5);
  Request r = make_request(2, 16, h.rng());
  r.bytes[7] = 'r';  // "MPA ID rEq..." -> not the request key
  Cmd c;
  c.is_new = true;
  c.req = 0;
  c.payload = r.bytes;
  h.submit(c);
  // a 19-byte request start (no header yet) in a second buffer, then its 20th byte
  Request q = make_request(1, 3, h.rng());
  Cmd a;
  a.is_new = true;
  a.req = 1;
  a.payload.assign(q.bytes.begin(), q.bytes.begin() + 19);
  h.submit(a);
  h.free_buf({0, 0, 1});
  Cmd b;
  b.req = 1;
  b.offset = 19;
  b.payload.assign(q.bytes.begin() + 19, q.bytes.begin() + 20);
  h.submit(b);
  h.free_buf({1, 0, 3});
  h.run();
  ASSERT_EQ(h.rsps().size(), 3u);
  EXPECT_TRUE(h.rsps()[0].hdr_valid);
  EXPECT_FALSE(h.rsps()[0].key_ok);
  EXPECT_EQ(h.rsps()[0].rev, 2u);
  EXPECT_TRUE(h.rsps()[0].iov);
  EXPECT_FALSE(h.rsps()[1].hdr_valid);
  EXPECT_EQ(h.rsps()[1].total, 19u);
  EXPECT_TRUE(h.rsps()[2].hdr_valid);
  EXPECT_TRUE(h.rsps()[2].key_ok);
  EXPECT_FALSE(h.rsps()[2].iov);
  EXPECT_EQ(h.rsps()[2].pd_len, 3u);
}

// Requests split into 2..N segments at random byte boundaries (often inside the header),
// one request at a time.
TYPED_TEST(MpaReqAsm, SplitSegments) {
  Harness<TypeParam> h(21);
  std::mt19937_64& rng = h.rng();
  std::vector<Request> reqs;
  const int n = 80;
  for (int i = 0; i < n; ++i) {
    if (i % 20 == 0) h.knobs = random_knobs(rng);
    const unsigned rev = 1 + (rng() & 1);
    const unsigned field = rev == 2 ? 4 + rng() % 509 : rng() % 513;
    const Request r = make_request(rev, field, rng);
    const unsigned len = unsigned(r.bytes.size());
    const unsigned max_parts = std::min(len, 2u + unsigned(rng() % 14));
    const unsigned parts = 2 + unsigned(rng() % (max_parts - 1));
    std::vector<unsigned> cuts;
    if (i % 4 == 0) {
      // every split inside the header
      const unsigned p = std::min(parts, 20u);
      cuts = split_points(20, p, rng);
      cuts.back() = len;
    } else {
      cuts = split_points(len, parts, rng);
    }
    for (const Cmd& c : segment_cmds(i, r.bytes, cuts)) h.submit(c);
    h.read({i, 0, r.pd_start, r.pd_len, true, h.submitted()});
    reqs.push_back(r);
    // the read waits for this request's last response
    h.run();
    const Rsp& g = h.rsps().back();
    EXPECT_TRUE(g.ok && g.hdr_valid && g.key_ok);
    EXPECT_EQ(g.pd_len, field);
    const Bytes& d = h.read_data().back();
    EXPECT_EQ(Bytes(d.begin(), d.begin() + std::min<size_t>(d.size(), r.pd_len)), pd_of(r))
        << "request " << i;
  }
  EXPECT_EQ(unsigned(h.dut().bufs_free), TypeParam::kNbuf);
}

// Several requests at once, their segments interleaved with each other and with discarded
// frames (some larger than the staging RAM); buffers come back by read-out with free, by
// s_free after a read, and by a zero-length read with free. Random gaps throughout.
TYPED_TEST(MpaReqAsm, InterleavedWithDiscards) {
  Harness<TypeParam> h(31);
  std::mt19937_64& rng = h.rng();
  int req = 0;
  for (int round = 0; round < 60; ++round) {
    h.knobs = random_knobs(rng);
    const unsigned k = 1 + unsigned(rng() % std::min(TypeParam::kNbuf, 5u));
    std::vector<Request> rs;
    std::vector<std::deque<Cmd>> segs;
    std::vector<int> ids;
    for (unsigned j = 0; j < k; ++j) {
      const unsigned rev = 1 + (rng() & 1);
      const unsigned field = rev == 2 ? 4 + rng() % 509 : rng() % 513;
      rs.push_back(make_request(rev, field, rng));
      const unsigned len = unsigned(rs.back().bytes.size());
      const unsigned parts = 1 + unsigned(rng() % std::min(len, 6u));
      auto v = segment_cmds(req, rs.back().bytes, split_points(len, parts, rng));
      segs.emplace_back(v.begin(), v.end());
      ids.push_back(req++);
    }
    // interleave: a random non-empty request each time, with discards in between
    for (;;) {
      std::vector<unsigned> live;
      for (unsigned j = 0; j < k; ++j)
        if (!segs[j].empty()) live.push_back(j);
      if (live.empty()) break;
      if (rng() % 4 == 0) {
        Cmd d;
        d.append = false;
        d.is_new = rng() & 1;  // ignored without append
        d.buf = unsigned(rng() % TypeParam::kNbuf);
        d.offset = unsigned(rng() % 1024);
        const unsigned big = TypeParam::kStageBytes + 1 + unsigned(rng() % 3000);
        d.payload = random_bytes(rng() % 8 == 0 ? big : 1 + rng() % 1500, rng);
        h.submit(d);
      }
      const unsigned j = live[rng() % live.size()];
      h.submit(segs[j].front());
      segs[j].pop_front();
    }
    // read-outs once every response of the round is in; three ways to free
    std::vector<size_t> read_no;
    for (unsigned j = 0; j < k; ++j) {
      const unsigned how = unsigned(rng() % 3);
      read_no.push_back(h.reads_submitted());
      h.read({ids[j], 0, rs[j].pd_start, rs[j].pd_len, how == 0, h.submitted()});
      if (how == 1) h.free_buf({ids[j], 0, h.submitted(), true});
      if (how == 2) h.read({ids[j], 0, 0, 0, true, h.submitted()});
    }
    h.run();
    for (unsigned j = 0; j < k; ++j) {
      const Bytes& d = h.read_data().at(read_no[j]);
      EXPECT_EQ(Bytes(d.begin(), d.begin() + std::min<size_t>(d.size(), rs[j].pd_len)),
                pd_of(rs[j]))
          << "round " << round << " request " << j;
    }
    ASSERT_EQ(unsigned(h.dut().bufs_free), TypeParam::kNbuf) << "round " << round;
  }
}

// Discards, bytes past buffer byte 1023, the saturated total, and a frame far larger than
// the staging RAM streaming through an append.
TYPED_TEST(MpaReqAsm, DiscardAndBufferEnd) {
  Harness<TypeParam> h(41);
  h.knobs = Knobs{0.2, 0.2, 0.1, 0.3, 0.3};
  std::mt19937_64& rng = h.rng();
  Cmd d;
  d.append = false;
  d.buf = TypeParam::kNbuf - 1;
  d.offset = 77;
  d.payload = random_bytes(3 * TypeParam::kStageBytes + 5, rng);
  h.submit(d);
  // buffer: 1000 bytes, then 100 bytes at 1000 (only 24 stored), then a huge frame at 1023
  const Bytes body = random_bytes(1100, rng);
  Cmd a;
  a.is_new = true;
  a.req = 0;
  a.payload.assign(body.begin(), body.begin() + 1000);
  h.submit(a);
  Cmd b;
  b.req = 0;
  b.offset = 1000;
  b.payload.assign(body.begin() + 1000, body.end());
  h.submit(b);
  Cmd c;
  c.req = 0;
  c.offset = 1023;
  c.payload = random_bytes(65000, rng);  // total 66023 -> 0xFFFF
  h.submit(c);
  h.read({0, 0, 960, 200, false, 4});  // bytes past 1023 read as 0
  h.read({0, 0, 0, 1023, true, 4});
  h.run(2000000);
  ASSERT_EQ(h.rsps().size(), 4u);
  EXPECT_FALSE(h.rsps()[0].ok);
  EXPECT_EQ(h.rsps()[0].buf, TypeParam::kNbuf - 1);
  EXPECT_EQ(h.rsps()[0].total, 77u + 3 * TypeParam::kStageBytes + 5);
  EXPECT_FALSE(h.rsps()[0].hdr_valid);
  EXPECT_EQ(h.rsps()[2].total, 1100u);
  EXPECT_EQ(h.rsps()[3].total, 0xFFFFu);
  EXPECT_TRUE(h.rsps()[3].ok);
  const Bytes& r0 = h.read_data()[0];
  ASSERT_EQ(r0.size(), 256u);
  for (unsigned i = 0; i < 63; ++i) EXPECT_EQ(r0[i], body[960 + i]) << "byte " << 960 + i;
  EXPECT_EQ(r0[63], c.payload[0]);  // byte 1023: the first byte of the last append
  for (unsigned i = 64; i < 256; ++i) EXPECT_EQ(r0[i], 0) << "byte past the buffer end";
  const Bytes& r1 = h.read_data()[1];
  EXPECT_EQ(Bytes(r1.begin(), r1.begin() + 1000), Bytes(body.begin(), body.begin() + 1000));
}

// All buffers taken: a new request gets ok = 0 (its payload discarded, the stream stays
// aligned), and each way of freeing makes the lowest free buffer available again.
TYPED_TEST(MpaReqAsm, ExhaustionAndFree) {
  constexpr unsigned kN = TypeParam::kNbuf;
  Harness<TypeParam> h(51);
  std::mt19937_64& rng = h.rng();
  std::vector<Request> rs;
  for (unsigned i = 0; i < kN; ++i) {
    rs.push_back(make_request(1, 40, rng));
    Cmd c;
    c.is_new = true;
    c.req = int(i);
    c.payload = rs.back().bytes;
    h.submit(c);
  }
  h.run();
  for (unsigned i = 0; i < kN; ++i) EXPECT_EQ(h.rsps()[i].buf, i);
  EXPECT_EQ(unsigned(h.dut().bufs_free), 0u);
  // no buffer: ok = 0, buf 0; the next frame (an append to buffer kN-1) is still intact
  Cmd x;
  x.is_new = true;
  x.req = 100;
  x.payload = random_bytes(300, rng);
  h.submit(x);
  Cmd y;
  y.req = int(kN - 1);
  y.offset = 60;
  y.payload = random_bytes(50, rng);
  h.submit(y);
  h.read({int(kN - 1), 0, 20, 90, false, kN + 2});
  h.run();
  EXPECT_FALSE(h.rsps()[kN].ok);
  EXPECT_EQ(h.rsps()[kN].buf, 0u);
  EXPECT_EQ(h.rsps()[kN].total, 300u);
  EXPECT_TRUE(h.rsps()[kN + 1].ok);
  EXPECT_EQ(h.rsps()[kN + 1].total, 110u);
  Bytes want(rs[kN - 1].bytes.begin() + 20, rs[kN - 1].bytes.begin() + 60);
  want.insert(want.end(), y.payload.begin(), y.payload.end());
  EXPECT_EQ(Bytes(h.read_data()[0].begin(), h.read_data()[0].begin() + 90), want);

  // s_free of the last buffer, then of buffer 0: the next new request gets buffer 0
  h.free_buf({-1, kN - 1, 0});
  h.free_buf({-1, 0, 0});
  h.run();
  EXPECT_EQ(unsigned(h.dut().bufs_free), 2u);
  Cmd z;
  z.is_new = true;
  z.req = 200;
  z.payload = make_request(1, 0, rng).bytes;
  h.submit(z);
  h.run();
  EXPECT_EQ(h.rsps().back().buf, 0u);
  EXPECT_TRUE(h.rsps().back().ok);
  // a zero-length read with free returns buffer 0 at once; a read-out with free returns
  // its buffer only when the last chunk is taken (checked every cycle against the model)
  h.read({200, 0, 0, 0, true, 0});
  h.knobs.chunk_stall = 0.9;
  h.read({-1, 1 % kN, 0, 200, true, 0});
  h.run();
  EXPECT_EQ(unsigned(h.dut().bufs_free), 1u + (kN > 1 ? 1u : 0u) + (kN > 2 ? 1u : 0u));
}

// Read-out of random byte ranges of a fully written buffer under random backpressure, then
// the read-out rate with m_chunk_ready high: one chunk per 8 cycles, back to back across
// reads, the first chunk 2 + pieces cycles after the read is taken.
TYPED_TEST(MpaReqAsm, ReadOutRangesAndRate) {
  Harness<TypeParam> h(61);
  std::mt19937_64& rng = h.rng();
  const Bytes body = random_bytes(1024, rng);
  Cmd a;
  a.is_new = true;
  a.req = 0;
  a.payload.assign(body.begin(), body.begin() + 512);
  h.submit(a);
  Cmd b;
  b.req = 0;
  b.offset = 512;
  b.payload.assign(body.begin() + 512, body.end());
  h.submit(b);
  h.run();
  struct R {
    unsigned start, len;
  };
  std::vector<R> rr;
  for (unsigned s : {20u, 24u})
    for (unsigned l : {1u, 7u, 8u, 9u, 63u, 64u, 65u, 255u, 508u, 512u}) rr.push_back({s, l});
  for (int i = 0; i < 60; ++i) rr.push_back({unsigned(rng() % 1024), unsigned(rng() % 1024)});
  h.knobs = Knobs{0, 0, 0.4, 0, 0.5};
  for (const R& r : rr) h.read({0, 0, r.start, r.len, false, 0});
  h.run();
  ASSERT_EQ(h.read_data().size(), rr.size());
  for (size_t i = 0; i < rr.size(); ++i) {
    const Bytes& d = h.read_data()[i];
    ASSERT_EQ(d.size(), (rr[i].len + 63) / 64 * 64);
    for (unsigned k = 0; k < d.size(); ++k) {
      const unsigned o = rr[i].start + k;
      const uint8_t want = (k < rr[i].len && o < 1024) ? body[o] : 0;
      ASSERT_EQ(d[k], want) << "read " << i << " byte " << k;
    }
  }

  // rate
  h.knobs = Knobs{};
  const size_t r0 = h.read_data().size(), c0 = h.chunk_cycles().size();
  h.read({0, 0, 20, 512, false, 0});  // 8 full chunks
  h.read({0, 0, 24, 508, false, 0});  // 7 full + 60 bytes
  h.read({0, 0, 0, 1000, false, 0});
  h.run();
  const auto& cc = h.chunk_cycles();
  ASSERT_EQ(cc.size() - c0, 8u + 8u + 16u);
  EXPECT_EQ(cc[c0] - h.read_cycles()[r0], 2u + 8u) << "first chunk latency";
  // every chunk has 8 pieces except the very last one (1000 = 15 * 64 + 40: 5 pieces)
  for (size_t i = c0 + 1; i < cc.size(); ++i)
    EXPECT_EQ(cc[i] - cc[i - 1], i + 1 == cc.size() ? 5u : 8u) << "chunk " << i - c0;
}

// Nothing is taken from staging before its command: with commands held the staging RAM
// fills to exactly its capacity and tready stays low; released, everything completes.
TYPED_TEST(MpaReqAsm, StagingBackpressure) {
  Harness<TypeParam> h(71);
  std::mt19937_64& rng = h.rng();
  h.hold_cmds = true;
  std::vector<Request> rs;
  const unsigned want_beats = 2 * Harness<TypeParam>::kStageBeats + 3;
  unsigned beats = 0;
  int i = 0;
  while (beats < want_beats) {
    // the first kNbuf frames are requests, the rest discarded frames
    const Request r = make_request(2, 4 + unsigned(rng() % 300), rng);
    Cmd c;
    c.payload = r.bytes;
    if (unsigned(i) < TypeParam::kNbuf) {
      rs.push_back(r);
      c.is_new = true;
      c.req = i;
      h.read({i, 0, 24, r.pd_len, true, size_t(i) + 1});
    } else {
      c.append = false;
    }
    beats +=
        unsigned((c.payload.size() + Harness<TypeParam>::kBytes - 1) / Harness<TypeParam>::kBytes);
    h.submit(c);
    ++i;
  }
  h.cycles(want_beats + 50);
  EXPECT_EQ(h.beats_in(), Harness<TypeParam>::kStageBeats);
  EXPECT_FALSE(h.dut().s_axis_payload_tready);
  EXPECT_EQ(h.rsps().size(), 0u);
  h.hold_cmds = false;
  h.knobs = Knobs{0.1, 0.1, 0, 0.2, 0.2};
  h.run();
  ASSERT_EQ(h.read_data().size(), rs.size());
  for (size_t j = 0; j < rs.size(); ++j) {
    const Bytes& d = h.read_data()[j];
    EXPECT_EQ(Bytes(d.begin(), d.begin() + std::min<size_t>(d.size(), rs[j].pd_len)), pd_of(rs[j]));
  }
}

// A command that arrives before its frame waits for the beats; a zero-length command
// consumes none.
TYPED_TEST(MpaReqAsm, CommandWaitsForItsBeats) {
  Harness<TypeParam> h(81);
  const Request r = make_request(1, 100, h.rng());
  Cmd z;  // s_cmd_len = 0: answered without touching the stream
  z.buf = 1 % TypeParam::kNbuf;
  z.offset = 30;
  h.submit(z);
  Cmd c;
  c.is_new = true;
  c.req = 0;
  c.payload = r.bytes;
  h.hold_payload = true;
  h.submit(c);
  h.cycles(60);
  ASSERT_EQ(h.rsps().size(), 1u);
  EXPECT_EQ(h.rsps()[0].total, 30u);
  EXPECT_TRUE(h.rsps()[0].ok);
  EXPECT_FALSE(h.dut().s_cmd_ready) << "the command should be waiting for its beats";
  EXPECT_EQ(h.beats_in(), 0u);
  h.hold_payload = false;
  h.run();
  ASSERT_EQ(h.rsps().size(), 2u);
  EXPECT_TRUE(h.rsps()[1].key_ok);
  EXPECT_EQ(h.rsps()[1].pd_len, 100u);
}

// Exact append timing with the frame already staged: the response comes P + 3 cycles
// after the command is taken, P = beats at DATA_W 64; at 512, per beat max(1, pieces
// stored). 8 bytes per cycle while appending, a beat per cycle while discarding.
TYPED_TEST(MpaReqAsm, AppendLatency) {
  using H = Harness<TypeParam>;
  Harness<TypeParam> h(91);
  std::mt19937_64& rng = h.rng();
  struct Case {
    bool append;
    unsigned offset, len;
  };
  std::vector<Case> cases = {{true, 0, 532},    {true, 0, 1},     {true, 5, 64},
                             {true, 1000, 100}, {false, 0, 1500}, {true, 20, 300}};
  for (const Case& k : cases) {
    if (k.len > TypeParam::kStageBytes) continue;
    Cmd c;
    c.append = k.append;
    c.is_new = k.append && k.offset == 0;
    c.buf = 0;
    c.offset = k.offset;
    c.payload = random_bytes(k.len, rng);
    h.hold_cmds = true;
    h.submit(c);
    while (h.pending_beats() > 0) h.cycle();
    h.cycles(3);
    h.hold_cmds = false;
    h.run();
    const uint64_t lat = h.rsp_cycles().back() - h.cmd_cycles().back();
    uint64_t p = 0;
    for (unsigned w = 0; w * H::kBytes < k.len; ++w) {
      if (H::kBytes == 8) {
        ++p;
        continue;
      }
      unsigned stored = 0;
      for (unsigned q = 0; q < 8; ++q) {
        const unsigned pos = w * 64 + q * 8;
        if (k.append && pos < k.len && k.offset + pos < 1024) ++stored;
      }
      p += std::max(1u, stored);
    }
    EXPECT_EQ(lat, p + 3) << "append " << k.append << " offset " << k.offset << " len " << k.len;
    h.free_buf({-1, 0, 0});
    h.run();
  }
}

}  // namespace
