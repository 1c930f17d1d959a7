// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bench_cmd.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <vector>

namespace bouncer::cli {

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');) {
    if (!t.empty()) v.push_back(t);
  }
  return v;
}

std::vector<unsigned> split_u(const std::string& s, const char* what) {
  std::vector<unsigned> v;
  for (const auto& t : split(s)) {
    try {
      size_t used = 0;
      const unsigned long x = std::stoul(t, &used);
      if (used != t.size()) throw std::invalid_argument(t);
      v.push_back(static_cast<unsigned>(x));
    } catch (const std::exception&) {
      throw CLI::ValidationError(what, "not a number: " + t);
    }
  }
  if (v.empty()) throw CLI::ValidationError(what, "empty list");
  return v;
}

}  // namespace

void add_bench_options(CLI::App& app, BenchOptions& o, bool sim) {
  app.add_option("--paths", o.paths, "push, dma_inline, dma_buffer (comma-separated)")
      ->capture_default_str();
  app.add_option("--pd", o.pd, "PD lengths in bytes (comma-separated, 0..512)")
      ->capture_default_str();
  app.add_option("--rev", o.rev, "MPA revisions of the requests (1,2)")->capture_default_str();
  app.add_option("--outstanding", o.outstanding, "rejects in flight at once (comma-separated)")
      ->capture_default_str();
  app.add_option("--sqs", o.sqs,
                 "SQ counts the rejects are spread over, round-robin (comma-separated, 1..4)")
      ->capture_default_str();
  app.add_option("--samples", o.samples, "rejects per point (at least 2 x outstanding)")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  app.add_option("--out", o.out, "write the records as JSON lines (bench.json latency schema)");
  if (sim) {
    app.add_option("--width", o.width, "data width of the simulated core")
        ->check(CLI::IsMember({64u, 512u}))
        ->capture_default_str();
    app.add_option("--mem-latency", o.mem_latency, "host-memory latency in cycles")
        ->check(CLI::Range(uint64_t{0}, uint64_t{100'000}))
        ->capture_default_str();
    app.add_flag("--loopback", o.loopback, "run with CTRL.LOOPBACK set, as on a card");
  }
}

ProbeBenchConfig bench_config(const BenchOptions& o) {
  ProbeBenchConfig c;
  c.paths = split(o.paths);
  for (const auto& p : c.paths) {
    if (p != "push" && p != "dma_inline" && p != "dma_buffer") {
      throw CLI::ValidationError("--paths", "unknown path " + p);
    }
  }
  c.pd_lens = split_u(o.pd, "--pd");
  for (unsigned pd : c.pd_lens) {
    if (pd > 512) throw CLI::ValidationError("--pd", "PD longer than 512 bytes");
  }
  c.revs = split_u(o.rev, "--rev");
  for (unsigned r : c.revs) {
    if (r != 1 && r != 2) throw CLI::ValidationError("--rev", "MPA revision 1 or 2");
  }
  c.outstanding = split_u(o.outstanding, "--outstanding");
  for (unsigned k : c.outstanding) {
    if (k == 0) throw CLI::ValidationError("--outstanding", "at least 1");
  }
  c.sqs = split_u(o.sqs, "--sqs");
  for (unsigned s : c.sqs) {
    if (s == 0 || s > regs::kNumSqMax) {
      throw CLI::ValidationError("--sqs", fmt::format("SQ count 1..{}", regs::kNumSqMax));
    }
  }
  c.samples = o.samples;
  c.loopback = o.loopback;
  return c;
}

int run_bench_on(Device& dev, const BenchOptions& o, const ProbeBenchConfig& cfg, const char* who) {
  if (auto ready = dev.wait_cm_ready(std::chrono::milliseconds(40)); !ready) {
    fmt::print(stderr, "{}: {}\n", who, ready.error().message);
    return 1;
  }
  ContextDiag diag(dev);
  auto recs = run_probe_bench(dev, diag, cfg);
  if (!recs) {
    fmt::print(stderr, "{}: {}\n", who, recs.error().message);
    return 1;
  }
  fmt::print(
      "{:<24} {:<10} {:>4} {:>3} {:>3} {:>3} {:>6} {:>6} {:>6} {:>6}  (cycles, from the probes)\n",
      "stage", "path", "pd", "rev", "out", "sqs", "min", "median", "p99", "max");
  for (const auto& r : *recs) {
    fmt::print("{:<24} {:<10} {:>4} {:>3} {:>3} {:>3} {:>6} {:>6} {:>6} {:>6}\n", r.stage, r.path,
               r.pd_len, r.rev, r.outstanding, r.sqs, r.min, r.median, r.p99, r.max);
  }
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    f << probe_bench_jsonl(*recs);
    f.close();
    if (!f) {  // a full disk shows here
      fmt::print(stderr, "{}: --out {}: writing the records failed: {}\n", who, o.out,
                 std::strerror(errno));
      return 1;
    }
    fmt::print("{} records -> {}\n", recs->size(), o.out);
  }
  return 0;
}

}  // namespace bouncer::cli
