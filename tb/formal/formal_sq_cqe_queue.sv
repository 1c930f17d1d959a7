// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_sq_cqe_queue: bounded model check harness for rtl/host/bouncer_sq_cqe_queue (NUM_SQ 2,
// DEPTH_LOG2 2: 4 CQEs), the posted completions of the reject SQ.
// Environment (assumed): the SQ engine holds a CQE (valid and data) until ready, and names SQ
// 0 or 1 in it (WQEIDX 0..7, 8 free bits of the rest); the CQ writer's ready is free (it
// stands for "written"); the rings have 4 (SQ 0) and 2 (SQ 1) entries; sq_reset is free.
// Shadow: the number of CQEs taken and given (in_q, out_q); one symbolic CQE, the K-th taken
// (K a symbolic constant < 8), recorded with whether its SQ was reset while it was queued.
// Asserts: the queue takes a CQE whenever it holds fewer than 4 (the engine waits only when it
// is full) and offers one whenever it holds any (out_q < in_q: never a CQE it was not given);
// the K-th CQE given is the K-th taken, unchanged (in order, each exactly once: with the
// counts, no loss and no duplicate); the head's SQ / index outputs are that CQE's fields;
// published CI: SQ n's CI moves only by a write of a live CQE of SQ n (to its WQEIDX + 1 mod
// the ring size) or by sq_reset[n] (to 0), and the K-th CQE's write publishes exactly that
// unless its SQ was reset while it was queued; busy = holds a CQE; the output obeys
// formal_axis_check (valid held, payload stable); a second copy from another initial state
// agrees on every control output and on the CIs.
// Covers: the queue full with the engine waiting; a write that moves a CI; a CQE of a reset SQ
// written without moving the CI.
`default_nettype none
module formal_sq_cqe_queue (
  input wire        clk,
  input wire        rst,
  input wire [1:0]  sq_reset,
  input wire        s_valid,
  input wire        s_sq,        // the CQE's SQ (0 or 1)
  input wire [2:0]  s_idx,       // its WQEIDX (bits 14:3 zero, to keep the model small)
  input wire [7:0]  s_tag,       // a few free bits standing for the rest of the CQE
  input wire        m_ready
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  (* anyconst *) reg [2:0] K;
  // ring sizes (constants: symbolic sizes cost too much): SQ 0 has 4 entries, SQ 1 has 2, so
  // both wrap within the depth (the CI arithmetic is the same mask logic for every size)
  wire [7:0] size_in = 8'h12;
  wire [14:0] mask0 = 15'((32'd1 << size_in[3:0]) - 32'd1);
  wire [14:0] mask1 = 15'((32'd1 << size_in[7:4]) - 32'd1);

  localparam int SQB = bouncer_regs_pkg::CQE_SQ_IDX_LSB;
  localparam int IXB = bouncer_regs_pkg::CQE_WQEIDX_LSB;
  reg [255:0] s_cqe;
  always @* begin
    s_cqe = '0;
    s_cqe[SQB] = s_sq;
    s_cqe[IXB +: 3] = s_idx;
    s_cqe[0 +: 8] = s_tag;
  end

  wire         a_s_ready, b_s_ready, a_m_valid, b_m_valid, a_busy, b_busy;
  wire [255:0] a_m, b_m;
  wire [1:0]   a_hsq, b_hsq;
  wire [14:0]  a_hix, b_hix;
  wire [29:0]  a_ci, b_ci;
  bouncer_sq_cqe_queue #(.NUM_SQ(2), .DEPTH_LOG2(2)) dut_a (
    .clk(clk), .rst(rst), .sq_size_log2(size_in), .sq_reset(sq_reset), .sq_ci(a_ci),
    .s_cqe_valid(s_valid), .s_cqe_ready(a_s_ready), .s_cqe(s_cqe),
    .m_cqe_valid(a_m_valid), .m_cqe_ready(m_ready), .m_cqe(a_m),
    .head_sq(a_hsq), .head_idx(a_hix), .busy(a_busy)
  );
  bouncer_sq_cqe_queue #(.NUM_SQ(2), .DEPTH_LOG2(2)) dut_b (
    .clk(clk), .rst(rst), .sq_size_log2(size_in), .sq_reset(sq_reset), .sq_ci(b_ci),
    .s_cqe_valid(s_valid), .s_cqe_ready(b_s_ready), .s_cqe(s_cqe),
    .m_cqe_valid(b_m_valid), .m_cqe_ready(m_ready), .m_cqe(b_m),
    .head_sq(b_hsq), .head_idx(b_hix), .busy(b_busy)
  );

  formal_axis_check #(.W(12), .MASTER(0), .RESET_LOW(0)) chk_in (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(s_valid), .ready(a_s_ready),
    .payload({s_sq, s_idx, s_tag}));
  // (the output's payload: the bits the environment varies; the rest is 0 in every entry)
  formal_axis_check #(.W(12), .MASTER(1)) chk_out (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_m_valid), .ready(m_ready),
    .payload({a_m[SQB], a_m[IXB +: 3], a_m[7:0]}));

  wire push = s_valid && a_s_ready;
  wire pop  = a_m_valid && m_ready;

  // ---------------------------------------------------------------- shadow
  reg  [3:0]  in_q, out_q;
  reg         got_q, gone_q, reset_seen_q;
  reg  [11:0] rec_q;                     // the K-th CQE: {SQ, index, tag}
  reg  [14:0] ci0_q, ci1_q;
  reg         rst_q, pop_q, pop_k_q, live_k_q, pop_sq_q;
  reg  [1:0]  sq_reset_q;
  reg  [14:0] pop_idx_q;
  wire [3:0]  held = in_q - out_q;
  wire        pop_k = pop && out_q == {1'b0, K};
  always @(posedge clk) begin
    rst_q      <= rst;
    sq_reset_q <= sq_reset;
    ci0_q      <= a_ci[14:0];
    ci1_q      <= a_ci[29:15];
    pop_q      <= pop;
    pop_k_q    <= pop_k;
    live_k_q   <= !reset_seen_q;
    pop_sq_q   <= a_m[SQB];
    pop_idx_q  <= a_m[IXB +: 15];
    if (push) in_q <= in_q + 4'd1;
    if (pop) out_q <= out_q + 4'd1;
    if (push && in_q == {1'b0, K}) begin
      got_q        <= 1'b1;
      rec_q        <= {s_sq, s_idx, s_tag};
      reset_seen_q <= sq_reset[s_sq];
    end else if (got_q && !gone_q && sq_reset[rec_q[11]]) begin
      reset_seen_q <= 1'b1;
    end
    if (pop_k) gone_q <= 1'b1;
    if (rst) begin
      in_q         <= '0;
      out_q        <= '0;
      got_q        <= 1'b0;
      gone_q       <= 1'b0;
      reset_seen_q <= 1'b0;
    end
  end
  // the environment runs at most 8 CQEs through (the counters do not wrap)
  always @* if (in_q == 4'd8) assume (!s_valid);

  wire [14:0] pub_k = ({12'd0, rec_q[10:8]} + 15'd1) & (rec_q[11] ? mask1 : mask0);

  always @(posedge clk) begin
    if (!init_q && !rst) begin
      // the second copy agrees on the control outputs
      assert (a_s_ready == b_s_ready && a_m_valid == b_m_valid && a_busy == b_busy);
      assert (a_ci == b_ci);
      // never stalls the engine needlessly, never offers what it was not given
      assert (held <= 4'd4);
      assert (a_s_ready == (held != 4'd4));
      assert (a_m_valid == (held != 4'd0));
      assert (a_busy == a_m_valid);
      if (a_m_valid) assert (a_hsq == {1'b0, a_m[SQB]} && a_hix == a_m[IXB +: 15]);
      // in order, unchanged
      if (pop_k) begin
        assert (got_q && !gone_q);
        assert (a_m[SQB] == rec_q[11] && a_m[IXB +: 15] == {12'd0, rec_q[10:8]}
                && a_m[7:0] == rec_q[7:0]);
      end
      // published CIs: 0 after a reset of the SQ, else moved only by a write of that SQ
      if (!rst_q) begin
        if (sq_reset_q[0]) assert (a_ci[14:0] == 15'd0);
        else if (!(pop_q && !pop_sq_q)) assert (a_ci[14:0] == ci0_q);
        if (sq_reset_q[1]) assert (a_ci[29:15] == 15'd0);
        else if (!(pop_q && pop_sq_q)) assert (a_ci[29:15] == ci1_q);
        // the K-th CQE's write: its WQEIDX + 1, unless its SQ was reset while it was queued
        if (pop_k_q && !sq_reset_q[rec_q[11]]) begin
          if (live_k_q) assert ((rec_q[11] ? a_ci[29:15] : a_ci[14:0]) == pub_k);
          else assert ((rec_q[11] ? a_ci[29:15] : a_ci[14:0])
                       == (rec_q[11] ? ci1_q : ci0_q));
        end
      end
    end
  end

  always @(posedge clk) begin
    if (!init_q && !rst) begin
      cover (held == 4'd4 && s_valid);
      cover (pop_k_q && live_k_q && !rst_q && pub_k != 15'd0);
      cover (pop_k_q && !live_k_q && !rst_q);
    end
  end

endmodule
`default_nettype wire
