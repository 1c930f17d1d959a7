// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_cqp_engine: the control queue (irdma's CQP). One WQE at a time, in ring order:
//
//   fetch the 64-byte WQE (DMA) -> check polarity, opcode, cm_id range, alignment
//   WRITE_CM_CONTEXT: DMA-read the 64-byte image at CTX_ADDR -> write the table entry
//   READ_CM_CONTEXT:  read the table entry -> DMA-write it to CTX_ADDR
//   CREATE_LISTENER:  DMA-read the template PD (TMPL_LEN bytes at TMPL_ADDR) into the
//                     listener's free template bank on chip -> install the entry
//   DESTROY_LISTENER: invalidate the entry
//   NOP:              nothing
//   -> hand the CCQE to the completion writer; advance the consumer index.
// Every WQE gets exactly one CCQE; a failed check or a DMA error only changes its codes.
// Latency per command: one WQE fetch (memory latency + 8) plus, for context commands,
// one more 64-byte DMA and a table access (2-3 cycles); for CREATE_LISTENER with a template,
// one DMA of ceil(TMPL_LEN / 8) beats (memory latency + beats), started once the CM engine is
// not reading the bank it goes into (tmpl_use_*: at most one auto-reject's template read).
// A template read that fails completes with DMA/DMA_PD and installs nothing.
`default_nettype none
module bouncer_cqp_engine #(
  parameter int ADDR_W         = 64,
  parameter int CTX_DEPTH_LOG2 = 10
) (
  input  wire                       clk,
  input  wire                       rst,

  input  wire                       enable,
  input  wire [ADDR_W-1:0]          cqp_base,
  input  wire [3:0]                 cqp_size_log2,
  input  wire                       cqp_reset,
  input  wire [14:0]                cqp_pi,
  output logic [14:0]               cqp_ci,
  output logic                      busy,

  // DMA read client
  output logic                      rd_cmd_valid,
  input  wire                       rd_cmd_ready,
  output logic [ADDR_W-1:0]         rd_cmd_addr,
  output logic [7:0]                rd_cmd_beats,
  input  wire                       rd_valid,
  input  wire [63:0]                rd_data,
  input  wire                       rd_last,
  input  wire                       rd_err,

  // DMA write client (context read-back)
  output logic                      wr_cmd_valid,
  input  wire                       wr_cmd_ready,
  output logic [ADDR_W-1:0]         wr_cmd_addr,
  output logic [3:0]                wr_cmd_beats,
  output logic [511:0]              wr_cmd_data,
  input  wire                       wr_done,
  input  wire                       wr_err,

  // connection-context table port
  output logic                      ctx_req_valid,
  input  wire                       ctx_req_ready,
  output logic                      ctx_req_we,
  output logic [CTX_DEPTH_LOG2-1:0] ctx_req_addr,
  output logic [511:0]              ctx_req_wdata,
  input  wire                       ctx_rsp_valid,
  input  wire [511:0]               ctx_rsp_rdata,

  // completion writer
  output logic                      cqe_valid,
  input  wire                       cqe_ready,
  output logic [255:0]              cqe,

  // listener table (CREATE_LISTENER / DESTROY_LISTENER)
  output logic                      lst_cfg_valid,
  output logic                      lst_cfg_create,
  output logic [511:0]              lst_cfg_wqe,
  input  wire                       lst_cfg_ok,
  input  wire                       lst_cfg_tmpl_bank,  // the bank a create writes

  // listener templates (bouncer_tmpl_ram write port) and the slot the CM engine is reading
  output logic                      tmpl_wr_en,
  output logic [4:0]                tmpl_wr_slot,       // {bank, listener}
  output logic [5:0]                tmpl_wr_word,
  output logic [63:0]               tmpl_wr_data,
  input  wire                       tmpl_use_valid,
  input  wire  [4:0]                tmpl_use_slot,

  output logic                      stat_wqe
);

  typedef enum logic [3:0] {
    S_IDLE, S_FETCH_CMD, S_FETCH_DATA, S_DECODE, S_CTXIN_CMD, S_CTXIN_DATA, S_CTX_WR,
    S_CTX_RD, S_CTX_WAIT, S_CTXOUT, S_CTXOUT_WAIT, S_TMPL_CMD, S_TMPL_DATA, S_LST, S_CQE
  } state_t;
  state_t state_q;

  logic [14:0]  ci_q, mask;
  logic         pol_q;
  logic [511:0] wqe_q, buf_q;
  logic [2:0]   beat_q;
  logic [5:0]   tw_q;        // template word being written
  logic [7:0]   tmpl_beats_q;
  logic [4:0]   tslot_q;     // {bank, listener} the template goes into
  logic         tmpl_busy;
  logic [15:0]  major_q, minor_q;
  /* verilator lint_off UNUSEDSIGNAL */  // a view: reserved bits are unused
  bouncer_regs_pkg::cqp_wqe_t w;
  /* verilator lint_on UNUSEDSIGNAL */

  assign mask = bouncer_util_pkg::ring_mask(cqp_size_log2);
  assign w    = wqe_q;

  /* verilator lint_off UNUSEDSIGNAL */
  bouncer_regs_pkg::cqp_listen_wqe_t lw;
  /* verilator lint_on UNUSEDSIGNAL */
  assign lw = wqe_q;
  logic is_lst_op, lst_create;
  assign lst_create = (w.opcode == bouncer_regs_pkg::CQP_OP_CREATE_LISTENER);
  assign is_lst_op  = lst_create || (w.opcode == bouncer_regs_pkg::CQP_OP_DESTROY_LISTENER);

  logic is_ctx_op;
  assign is_ctx_op = (w.opcode == bouncer_regs_pkg::CQP_OP_WRITE_CM_CONTEXT)
                  || (w.opcode == bouncer_regs_pkg::CQP_OP_READ_CM_CONTEXT);

  logic [15:0] dec_major, dec_minor;
  always_comb begin
    dec_major = bouncer_regs_pkg::CQ_MAJOR_OK;
    dec_minor = bouncer_regs_pkg::CQ_MINOR_NONE;
    if (w.valid != pol_q) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_STALE_WQE;
    end else if (!is_ctx_op && !is_lst_op && w.opcode != bouncer_regs_pkg::CQP_OP_NOP) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_BAD_OPCODE;
    end else if (is_ctx_op && w.ctx_addr[5:0] != 6'd0) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_ADDR_MISALIGNED;
    end else if (is_ctx_op && (w.cm_id >> CTX_DEPTH_LOG2) != 24'd0) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_CTX;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_CM_ID_RANGE;
    end else if (lst_create && lw.tmpl_len > 10'(bouncer_regs_pkg::MPA_PD_MAX - 4)) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_PD_TOO_LONG;
    end else if (lst_create && lw.tmpl_len != 10'd0 && lw.tmpl_addr[2:0] != 3'd0) begin
      dec_major = bouncer_regs_pkg::CQ_MAJOR_WQE;
      dec_minor = bouncer_regs_pkg::CQ_MINOR_ADDR_MISALIGNED;
    end
  end

  always_ff @(posedge clk) begin
    stat_wqe <= 1'b0;
    case (state_q)
      S_IDLE: if (enable && ci_q != (cqp_pi & mask)) begin
        major_q <= bouncer_regs_pkg::CQ_MAJOR_OK;
        minor_q <= bouncer_regs_pkg::CQ_MINOR_NONE;
        wqe_q   <= '0;
        state_q <= S_FETCH_CMD;
      end
      S_FETCH_CMD: if (rd_cmd_ready) begin
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
            state_q <= S_DECODE;
          end
        end
      end
      S_DECODE: begin
        major_q <= dec_major;
        minor_q <= dec_minor;
        if (dec_major != bouncer_regs_pkg::CQ_MAJOR_OK) state_q <= S_CQE;
        else if (w.opcode == bouncer_regs_pkg::CQP_OP_WRITE_CM_CONTEXT) state_q <= S_CTXIN_CMD;
        else if (w.opcode == bouncer_regs_pkg::CQP_OP_READ_CM_CONTEXT) state_q <= S_CTX_RD;
        else if (lst_create && lw.tmpl_len != 10'd0) state_q <= S_TMPL_CMD;
        else if (is_lst_op) state_q <= S_LST;
        else state_q <= S_CQE;
      end
      // the template into the listener's free bank, one word per beat
      S_TMPL_CMD: if (rd_cmd_ready && !tmpl_busy) begin
        tw_q    <= '0;
        state_q <= S_TMPL_DATA;
      end
      S_TMPL_DATA: if (rd_valid) begin
        tw_q <= tw_q + 6'd1;
        if (rd_last) begin
          if (rd_err) begin
            major_q <= bouncer_regs_pkg::CQ_MAJOR_DMA;
            minor_q <= bouncer_regs_pkg::CQ_MINOR_DMA_PD;
            state_q <= S_CQE;
          end else begin
            state_q <= S_LST;
          end
        end
      end
      S_LST: begin
        if (!lst_cfg_ok) begin
          major_q <= bouncer_regs_pkg::CQ_MAJOR_CTX;
          minor_q <= bouncer_regs_pkg::CQ_MINOR_BAD_LISTENER;
        end
        state_q <= S_CQE;
      end
      S_CTXIN_CMD: if (rd_cmd_ready) begin
        beat_q  <= '0;
        state_q <= S_CTXIN_DATA;
      end
      S_CTXIN_DATA: if (rd_valid) begin
        for (int b = 0; b < 8; b++) if (beat_q == 3'(b)) buf_q[64*b +: 64] <= rd_data;
        beat_q <= beat_q + 3'd1;
        if (rd_last) begin
          if (rd_err) begin
            major_q <= bouncer_regs_pkg::CQ_MAJOR_DMA;
            minor_q <= bouncer_regs_pkg::CQ_MINOR_DMA_CTX;
            state_q <= S_CQE;
          end else begin
            state_q <= S_CTX_WR;
          end
        end
      end
      S_CTX_WR: if (ctx_req_ready) state_q <= S_CQE;
      S_CTX_RD: if (ctx_req_ready) state_q <= S_CTX_WAIT;
      S_CTX_WAIT: if (ctx_rsp_valid) begin
        buf_q   <= ctx_rsp_rdata;
        state_q <= S_CTXOUT;
      end
      S_CTXOUT: if (wr_cmd_ready) state_q <= S_CTXOUT_WAIT;
      S_CTXOUT_WAIT: if (wr_done) begin
        if (wr_err) begin
          major_q <= bouncer_regs_pkg::CQ_MAJOR_DMA;
          minor_q <= bouncer_regs_pkg::CQ_MINOR_DMA_CTX;
        end
        state_q <= S_CQE;
      end
      S_CQE: if (cqe_ready) begin
        ci_q     <= (ci_q + 15'd1) & mask;
        if (((ci_q + 15'd1) & mask) == 15'd0) pol_q <= ~pol_q;
        stat_wqe <= 1'b1;
        state_q  <= S_IDLE;
      end
      default: state_q <= S_IDLE;
    endcase
    if (rst || cqp_reset) begin
      state_q <= S_IDLE;
      ci_q    <= '0;
      pol_q   <= 1'b1;
    end
  end

  assign rd_cmd_valid  = (state_q == S_FETCH_CMD) || (state_q == S_CTXIN_CMD) ||
                         (state_q == S_TMPL_CMD && !tmpl_busy);
  // the WQE's address, registered every cycle: ci_q only changes on the way to S_IDLE, which
  // S_FETCH_CMD always follows, so the 64-bit add is not in front of the DMA read master's
  // client mux (the add and the mux together exceed the ap_clk depth budget). A CQP_BASE
  // write is seen a cycle later.
  logic [ADDR_W-1:0] fetch_addr_q;
  always_ff @(posedge clk) fetch_addr_q <= cqp_base + {{(ADDR_W-21){1'b0}}, ci_q, 6'b000000};
  assign rd_cmd_addr   = (state_q == S_FETCH_CMD) ? fetch_addr_q : w.ctx_addr;
`ifndef SYNTHESIS
  logic [ADDR_W-1:0] a_base_q;
  always_ff @(posedge clk) begin
    a_base_q <= cqp_base;
    if (!rst && state_q == S_FETCH_CMD && a_base_q == cqp_base)
      assert (fetch_addr_q == cqp_base + {{(ADDR_W-21){1'b0}}, ci_q, 6'b000000});
  end
`endif
  // TMPL_ADDR and CTX_ADDR are the same field (qword 0), so the address needs no third input
  assign rd_cmd_beats  = (state_q == S_TMPL_CMD) ? tmpl_beats_q : 8'd8;
  always_ff @(posedge clk) begin
    tmpl_beats_q <= 8'((({1'b0, lw.tmpl_len}) + 11'd7) >> 3);
    tslot_q      <= {lst_cfg_tmpl_bank, lw.listener};
  end
  // the slot the CM engine holds: a request that took the listener's previous template
  // before the last create; every later request takes the other bank, so this wait ends
  assign tmpl_busy    = tmpl_use_valid && tmpl_use_slot == tslot_q;
  assign tmpl_wr_en   = (state_q == S_TMPL_DATA) && rd_valid;
  assign tmpl_wr_slot = tslot_q;
  assign tmpl_wr_word = tw_q;
  assign tmpl_wr_data = rd_data;

  assign wr_cmd_valid  = (state_q == S_CTXOUT);
  assign wr_cmd_addr   = w.ctx_addr;
  assign wr_cmd_beats  = 4'd8;
  assign wr_cmd_data   = buf_q;

  assign ctx_req_valid = (state_q == S_CTX_WR) || (state_q == S_CTX_RD);
  assign ctx_req_we    = (state_q == S_CTX_WR);
  assign ctx_req_addr  = w.cm_id[CTX_DEPTH_LOG2-1:0];
  assign ctx_req_wdata = buf_q;

  bouncer_regs_pkg::cqe_t c;
  always_comb begin
    c        = '0;
    c.wr_id  = w.scratch;
    c.cm_id  = w.cm_id;
    c.minerr = minor_q;
    c.majerr = major_q;
    c.wqeidx = ci_q;
    c.error  = (major_q != bouncer_regs_pkg::CQ_MAJOR_OK);
    c.op     = w.opcode;
    c.sq     = 1'b0;
    c.valid  = 1'b0;
  end
  assign cqe       = c;
  assign cqe_valid = (state_q == S_CQE);
  assign cqp_ci    = ci_q;
  assign busy      = (state_q != S_IDLE);

  assign lst_cfg_valid  = (state_q == S_LST);
  assign lst_cfg_create = lst_create;
  assign lst_cfg_wqe    = wqe_q;

endmodule
`default_nettype wire
