// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_sq_engine: the reject send queues. NUM_SQ rings (1..4), one engine, one WQE at a
// time, each SQ in its ring order:
//
//   pick the next SQ with pending work, round-robin (registered: S_IDLE -> S_SEL)
//   -> take the WQE from that SQ's push page, or fetch its 64 bytes from its ring (DMA)
//   -> check it (polarity, opcode, lengths, alignment, cm_id range): a push page ahead of
//      time, a fetched WQE in the cycle of its last beat (the header is in beats 0-3)
//   -> hand the reject to the CM engine (bouncer_cm_engine owns the connection: it checks
//      the node's state, loads the PD, sends the frame and moves the node on)
//   -> turn the CM engine's answer into a CQE; advance the consumer index.
// The CQE goes to bouncer_sq_cqe_queue (posted completions: a hand-off of one cycle while the
// queue has room), which writes it and publishes the SQ_CI the host reads; sq_ci here is the
// engine's own index (the next WQE it takes), up to the queue's depth + 1 ahead of that.
// Any failed check skips straight to an error CQE: nothing is sent and the engine goes on
// with the next WQE, so every WQE gets exactly one CQE. The CQE carries SQ_IDX (the SQ) and
// WQEIDX (the index within that SQ).
// Per SQ: ring base, size and producer index come from the register file; the engine holds
// the consumer index, the polarity, the last doorbell's cycle and a registered "the push
// page holds the WQE at CI" flag (push_hit_q, refreshed every cycle and ANDed with the live
// push_armed, so a page write one cycle earlier still makes the engine fetch from the ring).
// Fairness: the round-robin pointer moves to the SQ it picked, so with every SQ pending the
// service order is strictly rotating (0, 1, 2, 3, 0, ...), one WQE per turn.
// SQ_SIZE of SQ n (sq_reset[n]) resets that SQ's indices and polarity only; if the engine is
// working on an SQ n WQE it drops it (no CQE), as a single SQ did. The engine does not pick
// in a cycle in which any SQ is reset.
// Latency, doorbell to the CM engine: push = 3 cycles (doorbell pulse/pick, S_SEL, S_REJ: the
// push page of every SQ is checked ahead, per SQ in two registered steps, push_cond_q and
// push_chk_q); ring =
// S_SEL, one 8-beat DMA read (memory latency + 8; the WQE is checked with its last beat),
// S_REJ. The CQE's LATENCY is doorbell (or end of the previous WQE, of any SQ) to the first
// TX byte of the reject.
`default_nettype none
module bouncer_sq_engine #(
  parameter int ADDR_W         = 64,
  parameter int CTX_DEPTH_LOG2 = 10,
  parameter int NUM_SQ         = 4      // 1..NUM_SQ_MAX
) (
  input  wire                      clk,
  input  wire                      rst,

  // configuration / doorbells, per SQ n: bits [n*W +: W]
  input  wire                      enable,
  input  wire [NUM_SQ*ADDR_W-1:0]  sq_base,
  input  wire [NUM_SQ*4-1:0]       sq_size_log2,
  input  wire [NUM_SQ-1:0]         sq_reset,
  input  wire [NUM_SQ*15-1:0]      sq_pi,
  input  wire                      sq_db,         // a doorbell of SQ sq_db_sq registered
  input  wire [1:0]                sq_db_sq,
  input  wire [NUM_SQ*512-1:0]     push_wqe,
  input  wire [NUM_SQ-1:0]         push_armed,
  input  wire [NUM_SQ*15-1:0]      push_idx,
  output logic [NUM_SQ-1:0]        push_take,
  output logic [NUM_SQ*15-1:0]     sq_ci,
  output logic [1:0]               cur_sq,        // SQ of the WQE in work (valid while busy)
  output logic [14:0]              cur_ci,        // its index in that SQ
  output logic                     busy,
  input  wire [63:0]               cycle_count,

  // DMA read client
  output logic                     dma_valid,
  input  wire                      dma_ready,
  output logic [ADDR_W-1:0]        dma_addr,
  output logic [7:0]               dma_beats,
  input  wire                      rd_valid,      // beat for this client
  input  wire [63:0]               rd_data,
  input  wire                      rd_last,
  input  wire                      rd_err,

  // reject requests to the CM engine, and its answer
  output logic                     rej_valid,
  input  wire                      rej_ready,
  output logic [CTX_DEPTH_LOG2-1:0] rej_cm_id,
  output logic                     rej_pd_inline,
  output logic [ADDR_W-1:0]        rej_pd_addr,
  output logic [9:0]               rej_pd_len,
  output logic [255:0]             rej_inline_pd,
  output logic [1:0]               rej_fin_policy,
  output logic                     rej_ird_ord_valid,
  output logic [31:0]              rej_ird_ord,
  input  wire                      rsp_valid,
  input  wire [15:0]               rsp_major,
  input  wire [15:0]               rsp_minor,
  input  wire [15:0]               rsp_frame_len,
  input  wire [31:0]               rsp_seq,
  input  wire [63:0]               rsp_first_cycle,

  // completion writer
  output logic                     cqe_valid,
  input  wire                      cqe_ready,
  output logic [255:0]             cqe,

  // statistics
  output logic                     stat_wqe,
  output logic                     stat_error,
  output logic                     stat_push_used,
  output logic                     stat_push_dropped,
  output logic                     stat_latency_valid,
  output logic [31:0]              stat_latency
);

  typedef enum logic [2:0] {
    S_IDLE, S_SEL, S_FETCH_CMD, S_FETCH_DATA, S_REJ, S_REJ_WAIT, S_CQE
  } state_t;
  state_t state_q;

  // per SQ
  logic [14:0]       ci_q     [NUM_SQ];
  logic [NUM_SQ-1:0] pol_q, push_hit_q;
  (* keep *) logic [NUM_SQ-1:0] pending;
  logic [63:0]       db_ts_q  [NUM_SQ];
  logic [14:0]       mask     [NUM_SQ];
  // the SQ in work (registered at the pick and in S_SEL)
  logic [1:0]        cur_q;
  logic [14:0]       cur_ci_q, cur_mask_q;
  logic              cur_pol_q;
  logic [ADDR_W-1:0] cur_base_q;
  logic [511:0] wqe_q;
  /* verilator lint_off UNUSEDSIGNAL */  // a view: reserved bits are unused
  bouncer_regs_pkg::sq_wqe_t w;
  /* verilator lint_on UNUSEDSIGNAL */
  logic        from_push_q;
  logic [2:0]  beat_q;
  logic [15:0] major_q, minor_q;
  logic [63:0] t0_q, last_end_q;
  logic [31:0] latency_q;
  logic [15:0] flen_q;
  logic [31:0] seq_q;

  assign w = wqe_q;

  // pending[n]: CI != PI. PI is always inside the ring (< 2**size_log2: the register file
  // takes a doorbell only then, formal_axil_db proves it, and a SIZE write zeroes PI), and so
  // is CI, so the compare needs no ring mask: the size decode stays off the request -> pick
  // path. The compare is a bouncer_eq_sliced (3-bit slices kept as nets), so it is 2 LUT
  // levels in front of the round-robin choice; left to itself, ABC maps it into a wide-mux
  // tree and merges it into the arbiter (about 1.5 levels deeper). `enable` is in pick_en,
  // not in each request.
  for (genvar n = 0; n < NUM_SQ; n++) begin : g_sq
    logic pi_eq;
    bouncer_eq_sliced #(.W(15)) u_pi_eq (.a(ci_q[n]), .b(sq_pi[15*n +: 15]), .eq(pi_eq));
    assign pending[n] = !pi_eq;
    assign mask[n]    = bouncer_util_pkg::ring_mask(sq_size_log2[4*n +: 4]);
    assign sq_ci[15*n +: 15] = ci_q[n];
  end

  // round-robin among the SQs with pending work; the choice is registered (cur_q)
  logic       rr_valid;
  logic [1:0] rr_grant;
  logic       pick;
  generate
    if (NUM_SQ > 1) begin : g_rr
      logic [$clog2(NUM_SQ)-1:0] g;
      bouncer_rr_arbiter #(.N(NUM_SQ)) u_rr (
        .clk, .rst, .req(pending), .accept(pick), .grant_valid(rr_valid), .grant(g)
      );
      assign rr_grant = 2'(g);
    end else begin : g_one
      assign rr_valid = pending[0];
      assign rr_grant = 2'd0;
    end
  endgenerate
  // pick_en does not depend on the requests (a kept net: not merged into the compare tree)
  (* keep *) logic pick_en;
  assign pick_en = (state_q == S_IDLE) && enable && !(|sq_reset);
  assign pick    = pick_en && rr_valid;

  // the selected SQ's push and ring state (cur_q is a flop: one 4:1 mux level)
  logic              take_push;
  logic [511:0]      cur_push;
  logic [ADDR_W-1:0] cur_base;
  logic [14:0]       cur_ci_sel, cur_mask_sel;
  logic              cur_pol_sel;
  logic [63:0]       cur_db_ts;
  always_comb begin
    take_push    = 1'b0;
    cur_push     = '0;
    cur_base     = '0;
    cur_ci_sel   = '0;
    cur_mask_sel = '0;
    cur_pol_sel  = 1'b1;
    cur_db_ts    = '0;
    for (int n = 0; n < NUM_SQ; n++) begin
      if (cur_q == 2'(n)) begin
        take_push    = push_hit_q[n] && push_armed[n];
        cur_push     = push_wqe[512*n +: 512];
        cur_base     = sq_base[ADDR_W*n +: ADDR_W];
        cur_ci_sel   = ci_q[n];
        cur_mask_sel = mask[n];
        cur_pol_sel  = pol_q[n];
        cur_db_ts    = db_ts_q[n];
      end
    end
  end

  // The checks of a WQE, in two steps that can sit on either side of a register:
  // wqe_conds(img) = the image's own conditions (everything but the polarity), then
  // wqe_verdict(conds, pol) = in priority order, {a reject that passed, the error to report or
  // OK} (bit slices, not the sq_wqe_t view: Yosys 0.23 cannot size a struct local of a function)
  localparam int WC_VALID = 0, WC_NOP = 1, WC_NOT_REJ = 2, WC_TOO_LONG = 3, WC_MISALIGNED = 4,
                 WC_CM_ID = 5;
  function automatic logic [5:0] wqe_conds(input logic [511:0] img);
    logic [15:0] pd_len;
    logic        pd_inline;
    logic [5:0]  op;
    pd_len    = img[bouncer_regs_pkg::SQ_WQE_PD_LEN_LSB +: 16];
    pd_inline = img[bouncer_regs_pkg::SQ_WQE_PD_INLINE_LSB];
    op        = img[bouncer_regs_pkg::SQ_WQE_OPCODE_LSB +: 6];
    wqe_conds[WC_VALID]      = img[bouncer_regs_pkg::SQ_WQE_VALID_LSB];
    wqe_conds[WC_NOP]        = op == bouncer_regs_pkg::SQ_OP_NOP;
    wqe_conds[WC_NOT_REJ]    = op != bouncer_regs_pkg::SQ_OP_MPA_REJECT;
    wqe_conds[WC_TOO_LONG]   = (pd_inline && pd_len > 16'(bouncer_regs_pkg::INLINE_PD_MAX))
                            || pd_len > 16'(bouncer_regs_pkg::MPA_PD_MAX);
    wqe_conds[WC_MISALIGNED] = !pd_inline && pd_len != 16'd0
                            && img[bouncer_regs_pkg::SQ_WQE_PD_ADDR_LSB +: 3] != 3'd0;
    wqe_conds[WC_CM_ID]      = (img[bouncer_regs_pkg::SQ_WQE_CM_ID_LSB +: 24] >> CTX_DEPTH_LOG2)
                            != 24'd0;
  endfunction
  function automatic logic [32:0] wqe_verdict(input logic [5:0] c, input logic pol);
    logic [15:0] maj, mnr;
    logic        go;
    go  = 1'b0;
    maj = bouncer_regs_pkg::CQ_MAJOR_OK;
    mnr = bouncer_regs_pkg::CQ_MINOR_NONE;
    if (c[WC_VALID] != pol) begin
      maj = bouncer_regs_pkg::CQ_MAJOR_WQE;
      mnr = bouncer_regs_pkg::CQ_MINOR_STALE_WQE;
    end else if (c[WC_NOP]) begin
      maj = bouncer_regs_pkg::CQ_MAJOR_OK;
    end else if (c[WC_NOT_REJ]) begin
      maj = bouncer_regs_pkg::CQ_MAJOR_WQE;
      mnr = bouncer_regs_pkg::CQ_MINOR_BAD_OPCODE;
    end else if (c[WC_TOO_LONG]) begin
      maj = bouncer_regs_pkg::CQ_MAJOR_WQE;
      mnr = bouncer_regs_pkg::CQ_MINOR_PD_TOO_LONG;
    end else if (c[WC_MISALIGNED]) begin
      maj = bouncer_regs_pkg::CQ_MAJOR_WQE;
      mnr = bouncer_regs_pkg::CQ_MINOR_ADDR_MISALIGNED;
    end else if (c[WC_CM_ID]) begin
      maj = bouncer_regs_pkg::CQ_MAJOR_CTX;
      mnr = bouncer_regs_pkg::CQ_MINOR_CM_ID_RANGE;
    end else begin
      go  = 1'b1;
    end
    wqe_verdict = {go, maj, mnr};
  endfunction

  // a fetched WQE is checked with its last beat (S_FETCH_DATA); a push page is checked
  // ahead, every cycle, per SQ, in two registered steps (push_cond_q, push_chk_q): a page
  // write disarms the page, so its image has not changed since the edge before it was armed
  // at the latest; push_hit_q takes one more edge after the arming, by which time push_chk_q
  // describes that image. So a push WQE goes from S_SEL straight to S_REJ
  // The fetched WQE's check is two registers (fetch_cond_q, then fetch_chk_q, taken every
  // cycle from wqe_q): it reads only the 32-byte header (beats 0-3, bits 255:0), which is in
  // wqe_q from 4 edges before the last beat on, so in the cycle of the last beat fetch_chk_q
  // describes it and no check logic sits between the WQE register and major_q / minor_q /
  // state_q.
  logic [5:0]  fetch_cond_q;
  logic [32:0] fetch_chk_q;
  always_ff @(posedge clk) begin
    fetch_cond_q <= wqe_conds(wqe_q);
    fetch_chk_q  <= wqe_verdict(fetch_cond_q, cur_pol_q);
  end
  logic [5:0]  push_cond_q [NUM_SQ];
  logic [32:0] push_chk_q [NUM_SQ];
  logic [32:0] cur_push_chk;   // the selected SQ's: {a reject that passed, major, minor}
  always_comb begin
    cur_push_chk = '0;
    for (int n = 0; n < NUM_SQ; n++)
      if (cur_q == 2'(n)) cur_push_chk = push_chk_q[n];
  end

  always_ff @(posedge clk) begin
    push_take          <= '0;
    stat_wqe           <= 1'b0;
    stat_error         <= 1'b0;
    stat_push_used     <= 1'b0;
    stat_push_dropped  <= 1'b0;
    stat_latency_valid <= 1'b0;
    for (int n = 0; n < NUM_SQ; n++) begin
      if (sq_db && sq_db_sq == 2'(n)) db_ts_q[n] <= cycle_count;
      push_hit_q[n] <= push_armed[n] && ((push_idx[15*n +: 15] & mask[n]) == ci_q[n]);
      push_cond_q[n] <= wqe_conds(push_wqe[512*n +: 512]);
      push_chk_q[n]  <= wqe_verdict(push_cond_q[n], pol_q[n]);
    end

    case (state_q)
      S_IDLE: begin
        if (pick) begin
          cur_q   <= rr_grant;
          state_q <= S_SEL;
        end
      end
      S_SEL: begin
        cur_ci_q   <= cur_ci_sel;
        cur_mask_q <= cur_mask_sel;
        cur_pol_q  <= cur_pol_sel;
        cur_base_q <= cur_base;
        t0_q       <= (last_end_q > cur_db_ts) ? last_end_q : cur_db_ts;
        major_q    <= bouncer_regs_pkg::CQ_MAJOR_OK;
        minor_q    <= bouncer_regs_pkg::CQ_MINOR_NONE;
        latency_q  <= '0;
        flen_q     <= '0;
        seq_q      <= '0;
        if (take_push) begin
          wqe_q          <= cur_push;
          from_push_q    <= 1'b1;
          for (int n = 0; n < NUM_SQ; n++) push_take[n] <= (cur_q == 2'(n));
          stat_push_used <= 1'b1;
          // checked already (push_chk_q): an error or a NOP completes, a reject goes out
          major_q        <= cur_push_chk[31:16];
          minor_q        <= cur_push_chk[15:0];
          state_q        <= cur_push_chk[32] ? S_REJ : S_CQE;
        end else begin
          wqe_q       <= '0;
          from_push_q <= 1'b0;
          state_q     <= S_FETCH_CMD;
        end
      end
      S_FETCH_CMD: if (dma_ready) begin
        beat_q  <= '0;
        state_q <= S_FETCH_DATA;
      end
      S_FETCH_DATA: if (rd_valid) begin
        for (int b = 0; b < 8; b++) if (beat_q == 3'(b)) wqe_q[64*b +: 64] <= rd_data;
        beat_q <= beat_q + 3'd1;
        if (rd_last) begin
          if (rd_err) begin
            major_q <= bouncer_regs_pkg::CQ_MAJOR_DMA;
            minor_q <= bouncer_regs_pkg::CQ_MINOR_DMA_WQE;
            state_q <= S_CQE;
          end else begin
            // the header (beats 0-3) is in wqe_q already, only inline PD comes in the last
            // beat: fetch_chk_q holds the WQE's check in this cycle (no decode state)
            if (w.pushwqe && w.valid == cur_pol_q) stat_push_dropped <= 1'b1;
            major_q <= fetch_chk_q[31:16];
            minor_q <= fetch_chk_q[15:0];
            state_q <= fetch_chk_q[32] ? S_REJ : S_CQE;
          end
        end
      end
      S_REJ: if (rej_ready) state_q <= S_REJ_WAIT;
      S_REJ_WAIT: if (rsp_valid) begin
        major_q <= rsp_major;
        minor_q <= rsp_minor;
        flen_q  <= rsp_frame_len;
        seq_q   <= rsp_seq;
        if (rsp_frame_len != 16'd0) latency_q <= 32'(rsp_first_cycle - t0_q);
        state_q <= S_CQE;
      end
      S_CQE: if (cqe_ready) begin
        for (int n = 0; n < NUM_SQ; n++) begin
          if (cur_q == 2'(n)) begin
            ci_q[n] <= (cur_ci_q + 15'd1) & cur_mask_q;
            if (((cur_ci_q + 15'd1) & cur_mask_q) == 15'd0) pol_q[n] <= ~cur_pol_q;
          end
        end
        last_end_q <= cycle_count;
        stat_wqe   <= 1'b1;
        stat_error <= (major_q != bouncer_regs_pkg::CQ_MAJOR_OK);
        if (flen_q != 16'd0) begin
          stat_latency_valid <= 1'b1;
          stat_latency       <= latency_q;
        end
        state_q <= S_IDLE;
      end
      default: state_q <= S_IDLE;
    endcase

    for (int n = 0; n < NUM_SQ; n++) begin
      if (rst || sq_reset[n]) begin
        ci_q[n]  <= '0;
        pol_q[n] <= 1'b1;
      end
      if (sq_reset[n] && cur_q == 2'(n) && state_q != S_IDLE) state_q <= S_IDLE;
      if (rst) begin
        db_ts_q[n]    <= '0;
        push_hit_q[n] <= 1'b0;
      end
    end
    if (rst) begin
      state_q      <= S_IDLE;
      cur_q        <= '0;
      last_end_q   <= '0;
      from_push_q  <= 1'b0;
      stat_latency <= '0;
      // pulses decided in the reset cycle (e.g. a take in S_SEL) must not come out after it
      push_take          <= '0;
      stat_wqe           <= 1'b0;
      stat_error         <= 1'b0;
      stat_push_used     <= 1'b0;
      stat_push_dropped  <= 1'b0;
      stat_latency_valid <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ outputs
  assign dma_valid = (state_q == S_FETCH_CMD);
  assign dma_addr  = cur_base_q + {{(ADDR_W-21){1'b0}}, cur_ci_q, 6'b000000};
  assign dma_beats = 8'd8;

  assign rej_valid         = (state_q == S_REJ);
  assign rej_cm_id         = w.cm_id[CTX_DEPTH_LOG2-1:0];
  assign rej_pd_inline     = w.pd_inline;
  assign rej_pd_addr       = w.pd_addr;
  assign rej_pd_len        = w.pd_len[9:0];
  assign rej_inline_pd     = w.inline_pd;
  assign rej_fin_policy    = w.fin_policy;
  assign rej_ird_ord_valid = w.ird_ord_valid;
  assign rej_ird_ord       = w.ird_ord;

  bouncer_regs_pkg::cqe_t c;
  always_comb begin
    c           = '0;
    c.latency   = latency_q;
    c.frame_len = flen_q;
    c.wr_id     = w.wr_id;
    c.tcp_seq   = seq_q;
    c.cm_id     = w.cm_id;
    c.minerr    = minor_q;
    c.majerr    = major_q;
    c.wqeidx    = cur_ci_q;
    c.sq_idx    = 4'(cur_q);
    c.pshdrop   = !from_push_q && w.pushwqe;
    c.error     = (major_q != bouncer_regs_pkg::CQ_MAJOR_OK);
    c.op        = w.opcode;
    c.sq        = 1'b1;
    c.valid     = 1'b0;     // stamped with the CQ polarity by the writer
  end
  assign cqe       = c;
  assign cqe_valid = (state_q == S_CQE);
  assign cur_sq    = cur_q;
  assign cur_ci    = cur_ci_q;
  assign busy      = (state_q != S_IDLE);

endmodule
`default_nettype wire
