// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_sq_cqe_queue: the reject SQ's completions, posted. A FIFO of DEPTH CQEs between the
// SQ engine and the CQ writer: the engine hands each CQE over in one cycle and goes on with the
// next WQE; it waits only when the queue is full (the CQ writer waits for room in the CQ, or
// is still writing). Completions leave in the order they came, each exactly once.
//
// The SQ_CI the host reads (sq_ci) is published here, not by the engine: SQ n's CI moves past
// a WQE when that WQE's CQE has been written (the CQ writer's done), to WQEIDX + 1 of the
// CQE. So SQ_CI == SQ_PI still means "every CQE of this SQ is in the CQ" (Device::reset_sq
// relies on it), while the engine's own CI (the next WQE to take) runs up to DEPTH + 1 WQEs
// ahead. sq_reset[n] (SQ_SIZE of SQ n) zeroes SQ n's published CI; a CQE of SQ n still queued
// then is written (it completes a WQE the engine finished) but no longer moves that CI.
// Latency: a CQE is offered to the CQ writer the cycle after it was taken (count_q and the
// head entry are flops); the head's SQ and index go to the CQE_WRITTEN probe.
`default_nettype none
module bouncer_sq_cqe_queue #(
  parameter int NUM_SQ     = 4,   // 1..4
  parameter int DEPTH_LOG2 = 2    // 1..4: 2..16 CQEs
) (
  input  wire                  clk,
  input  wire                  rst,

  input  wire [NUM_SQ*4-1:0]   sq_size_log2,
  input  wire [NUM_SQ-1:0]     sq_reset,
  output logic [NUM_SQ*15-1:0] sq_ci,        // published: past the last written CQE

  input  wire                  s_cqe_valid,  // from the SQ engine
  output logic                 s_cqe_ready,
  input  wire [255:0]          s_cqe,

  output logic                 m_cqe_valid,  // to the CQ writer
  input  wire                  m_cqe_ready,  // the CQE is in host memory
  output logic [255:0]         m_cqe,
  output logic [1:0]           head_sq,      // SQ and WQEIDX of the CQE offered
  output logic [14:0]          head_idx,
  output logic                 busy          // holds at least one CQE
);

  localparam int DEPTH = 1 << DEPTH_LOG2;
  localparam int SQB = bouncer_regs_pkg::CQE_SQ_IDX_LSB;
  localparam int IXB = bouncer_regs_pkg::CQE_WQEIDX_LSB;

  logic [255:0]          mem_q [DEPTH];
  logic [DEPTH-1:0]      live_q;        // the entry still moves its SQ's CI (no sq_reset since)
  logic [1:0]            sq_q [DEPTH];  // the entry's SQ (a copy of its SQ_IDX, for sq_reset)
  logic [DEPTH_LOG2-1:0] wr_q, rd_q;
  logic [DEPTH_LOG2:0]   count_q;
  logic [14:0]           ci_q [NUM_SQ];

  wire push = s_cqe_valid && s_cqe_ready;
  wire pop  = m_cqe_valid && m_cqe_ready;

  assign s_cqe_ready = (count_q != (DEPTH_LOG2+1)'(DEPTH));
  assign m_cqe_valid = (count_q != '0);
  assign m_cqe       = mem_q[rd_q];
  assign head_sq     = m_cqe[SQB +: 2];
  assign head_idx    = m_cqe[IXB +: 15];
  assign busy        = m_cqe_valid;

  logic in_reset;   // sq_reset of the incoming CQE's SQ
  always_comb begin
    in_reset = 1'b0;
    for (int n = 0; n < NUM_SQ; n++) if (s_cqe[SQB +: 2] == 2'(n) && sq_reset[n]) in_reset = 1'b1;
  end

  always_ff @(posedge clk) begin
    if (push) begin
      mem_q[wr_q] <= s_cqe;
      sq_q[wr_q]  <= s_cqe[SQB +: 2];
      wr_q        <= wr_q + DEPTH_LOG2'(1);
    end
    if (pop) rd_q <= rd_q + DEPTH_LOG2'(1);
    count_q <= count_q + (DEPTH_LOG2+1)'(push) - (DEPTH_LOG2+1)'(pop);

    for (int n = 0; n < NUM_SQ; n++) begin
      if (pop && live_q[rd_q] && head_sq == 2'(n))
        ci_q[n] <= (head_idx + 15'd1) & bouncer_util_pkg::ring_mask(sq_size_log2[4*n +: 4]);
      if (rst || sq_reset[n]) ci_q[n] <= '0;
    end
    // per entry, with a compare for the slot written (no variable-index assignment: Yosys
    // lowers one through a negation): the new entry's slot takes the new CQE's flag (a CQE
    // taken in the cycle of its SQ's reset completes a WQE of the ring that is gone), every
    // other entry of an SQ being reset loses it
    for (int e = 0; e < DEPTH; e++) begin
      for (int n = 0; n < NUM_SQ; n++) begin
        if (sq_reset[n] && sq_q[e] == 2'(n)) live_q[e] <= 1'b0;
      end
      if (push && wr_q == DEPTH_LOG2'(e)) live_q[e] <= !in_reset;
    end

    if (rst) begin
      wr_q    <= '0;
      rd_q    <= '0;
      count_q <= '0;
      live_q  <= '0;
    end
  end

  for (genvar n = 0; n < NUM_SQ; n++) begin : g_ci
    assign sq_ci[15*n +: 15] = ci_q[n];
  end

  // ------------------------------------------------------------------ parameter checks
  if (NUM_SQ < 1 || NUM_SQ > 4) begin : g_bad_num_sq
    $error("bouncer_sq_cqe_queue: NUM_SQ must be 1..4");
  end
  if (DEPTH_LOG2 < 1 || DEPTH_LOG2 > 4) begin : g_bad_depth
    $error("bouncer_sq_cqe_queue: DEPTH_LOG2 must be 1..4");
  end

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  always_ff @(posedge clk) if (!rst) assert (count_q <= (DEPTH_LOG2+1)'(DEPTH));
`endif

endmodule
`default_nettype wire
