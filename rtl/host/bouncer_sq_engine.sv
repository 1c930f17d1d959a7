// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_sq_engine: the reject send queue. One WQE at a time, in ring order:
//
//   take the WQE from the push page, or fetch its 64 bytes from the ring (DMA)
//   -> check it (polarity, opcode, lengths, alignment, cm_id range)
//   -> hand the reject to the CM engine (bouncer_cm_engine owns the connection: it checks
//      the node's state, loads the PD, sends the frame and moves the node on)
//   -> turn the CM engine's answer into a CQE; advance the consumer index.
// Any failed check skips straight to an error CQE: nothing is sent and the engine goes on
// with the next WQE, so every WQE gets exactly one CQE.
// Latency, doorbell to the CM engine: push = 3 cycles; ring = one 8-beat DMA read (memory
// latency + 8) more. The CQE's LATENCY is doorbell (or end of the previous WQE) to the
// first TX byte of the reject.
`default_nettype none
module bouncer_sq_engine #(
  parameter int ADDR_W         = 64,
  parameter int CTX_DEPTH_LOG2 = 10
) (
  input  wire                      clk,
  input  wire                      rst,

  // configuration / doorbells
  input  wire                      enable,
  input  wire [ADDR_W-1:0]         sq_base,
  input  wire [3:0]                sq_size_log2,
  input  wire                      sq_reset,
  input  wire [14:0]               sq_pi,
  input  wire                      sq_db,
  input  wire [511:0]              push_wqe,
  input  wire                      push_armed,
  input  wire [14:0]               push_idx,
  output logic                     push_take,
  output logic [14:0]              sq_ci,
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
    S_IDLE, S_FETCH_CMD, S_FETCH_DATA, S_DECODE, S_REJ, S_REJ_WAIT, S_CQE
  } state_t;
  state_t state_q;

  logic [14:0] ci_q, mask;
  logic        pol_q;
  logic [511:0] wqe_q;
  /* verilator lint_off UNUSEDSIGNAL */  // a view: reserved bits are unused
  bouncer_regs_pkg::sq_wqe_t w;
  /* verilator lint_on UNUSEDSIGNAL */
  logic        from_push_q;
  logic [2:0]  beat_q;
  logic [15:0] major_q, minor_q;
  logic [63:0] t0_q, db_ts_q, last_end_q;
  logic [31:0] latency_q;
  logic [15:0] flen_q;
  logic [31:0] seq_q;

  assign mask = 15'((32'd1 << sq_size_log2) - 32'd1);
  assign w    = wqe_q;

  // the doorbell that makes a WQE visible is stamped in the same cycle the engine may start
  logic [63:0] db_ts_now;
  assign db_ts_now = sq_db ? cycle_count : db_ts_q;

  logic pending, take_push;
  assign pending   = enable && (ci_q != (sq_pi & mask));
  assign take_push = push_armed && ((push_idx & mask) == ci_q);

  // the error to report from DECODE, in priority order
  logic [15:0] dec_major, dec_minor;
  always_comb begin
    dec_major = bouncer_regs_pkg::CQ_MAJOR_OK;
    dec_minor = bouncer_regs_pkg::CQ_MINOR_NONE;
    if (w.valid != pol_q) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_STALE_WQE;
    end else if (w.opcode == bouncer_regs_pkg::SQ_OP_NOP) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_OK;
    end else if (w.opcode != bouncer_regs_pkg::SQ_OP_MPA_REJECT) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_BAD_OPCODE;
    end else if ((w.pd_inline && w.pd_len > 16'(bouncer_regs_pkg::INLINE_PD_MAX))
                 || w.pd_len > 16'(bouncer_regs_pkg::MPA_PD_MAX)) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_PD_TOO_LONG;
    end else if (!w.pd_inline && w.pd_len != 16'd0 && w.pd_addr[2:0] != 3'd0) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_ADDR_MISALIGNED;
    end else if ((w.cm_id >> CTX_DEPTH_LOG2) != 24'd0) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_CTX;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_CM_ID_RANGE;
    end
  end

  always_ff @(posedge clk) begin
    push_take          <= 1'b0;
    stat_wqe           <= 1'b0;
    stat_error         <= 1'b0;
    stat_push_used     <= 1'b0;
    stat_push_dropped  <= 1'b0;
    stat_latency_valid <= 1'b0;
    if (sq_db) db_ts_q <= cycle_count;

    case (state_q)
      S_IDLE: begin
        if (pending) begin
          t0_q      <= (last_end_q > db_ts_now) ? last_end_q : db_ts_now;
          major_q   <= bouncer_regs_pkg::CQ_MAJOR_OK;
          minor_q   <= bouncer_regs_pkg::CQ_MINOR_NONE;
          latency_q <= '0;
          flen_q    <= '0;
          seq_q     <= '0;
          if (take_push) begin
            wqe_q          <= push_wqe;
            from_push_q    <= 1'b1;
            push_take      <= 1'b1;
            stat_push_used <= 1'b1;
            state_q        <= S_DECODE;
          end else begin
            wqe_q       <= '0;
            from_push_q <= 1'b0;
            state_q     <= S_FETCH_CMD;
          end
        end
      end
      S_FETCH_CMD: if (dma_ready) begin
        beat_q  <= '0;
        state_q <= S_FETCH_DATA;
      end
      S_FETCH_DATA: if (rd_valid) begin
        wqe_q[64*beat_q +: 64] <= rd_data;
        beat_q <= beat_q + 3'd1;
        if (rd_last) begin
          if (rd_err) begin
            major_q <= bouncer_regs_pkg::CQ_MAJOR_DMA;
            minor_q <= bouncer_regs_pkg::CQ_MINOR_DMA_WQE;
            state_q <= S_CQE;
          end else begin
            state_q <= S_DECODE;
          end
        end
      end
      S_DECODE: begin
        if (!from_push_q && w.pushwqe && w.valid == pol_q) stat_push_dropped <= 1'b1;
        major_q <= dec_major;
        minor_q <= dec_minor;
        if (dec_major != bouncer_regs_pkg::CQ_MAJOR_OK || w.opcode == bouncer_regs_pkg::SQ_OP_NOP)
          state_q <= S_CQE;
        else
          state_q <= S_REJ;
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
        ci_q       <= (ci_q + 15'd1) & mask;
        if (((ci_q + 15'd1) & mask) == 15'd0) pol_q <= ~pol_q;
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

    if (rst || sq_reset) begin
      state_q    <= S_IDLE;
      ci_q       <= '0;
      pol_q      <= 1'b1;
      last_end_q <= '0;
    end
    if (rst) begin
      db_ts_q      <= '0;
      from_push_q  <= 1'b0;
      stat_latency <= '0;
    end
  end

  // ------------------------------------------------------------------ outputs
  assign dma_valid = (state_q == S_FETCH_CMD);
  assign dma_addr  = sq_base + {{(ADDR_W-21){1'b0}}, ci_q, 6'b000000};
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
    c.wqeidx    = ci_q;
    c.pshdrop   = !from_push_q && w.pushwqe;
    c.error     = (major_q != bouncer_regs_pkg::CQ_MAJOR_OK);
    c.op        = w.opcode;
    c.sq        = 1'b1;
    c.valid     = 1'b0;     // stamped with the CQ polarity by the writer
  end
  assign cqe       = c;
  assign cqe_valid = (state_q == S_CQE);
  assign sq_ci     = ci_q;
  assign busy      = (state_q != S_IDLE);

endmodule
`default_nettype wire
