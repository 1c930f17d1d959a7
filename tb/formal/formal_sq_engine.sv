// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_sq_engine: bounded model check harness for the ring pointer logic of
// rtl/host/bouncer_sq_engine (NUM_SQ 2, ADDR_W 32, CTX_DEPTH_LOG2 4), observed at its ports.
// Environment (assumed), modelled on what bouncer_axil_regs, bouncer_dma_rd and
// bouncer_cm_engine guarantee:
//   - per SQ, the ring size (log2) is symbolic in 2..15 and changes only with that SQ's
//     sq_reset pulse or a reset; the ring bases are symbolic constants;
//   - per SQ, the producer index is 0 in the cycle after a reset, in a sq_reset cycle and in
//     the cycle after it (the SIZE write's B response), always < ring size, and a change never
//     lowers the pending count (PI - CI) mod size measured against the CI of the previous
//     cycle (what the DB_RANGE / DB_LAP doorbell checks of the register file enforce; the
//     formal_axil_regs harness proves that side);
//   - DMA: one command in flight (dma_ready only when none is), beats only for it, rd_last on
//     the 8th beat or earlier with rd_err (the watchdog); the CM engine takes a reject only
//     when it has none open, answers each exactly once and never with the engine's own
//     stale-WQE code; a push image changes only while its page is disarmed (a page write
//     disarms it); enable, doorbell pulses, push pages (armed, index, image) and every ready
//     are otherwise free.
// Shadow model kept by the harness, per SQ: CI (0 at reset / sq_reset, +1 mod size per CQE of
// that SQ) and the expected polarity (1 at reset / sq_reset, flips when CI wraps to 0).
// Asserts: sq_ci = shadow CI and < ring size; the engine is busy only with a posted WQE
// (CI != PI of the SQ it works on: no overrun) and picks only an SQ with pending work; per
// WQE (one busy interval) at most one ring fetch or push take, at most one reject, and the
// interval ends with exactly one CQE or with a drop by that SQ's sq_reset; the fetch address
// is base + 64 CI; a push image is taken only if the page was armed for CI two cycles before
// and still armed one cycle before (the take comes with the first offer of that WQE's
// reject or, for an error or a NOP checked ahead, of its CQE); a reject goes out only for a
// WQE read without error whose VALID bit equals the expected polarity and whose opcode is
// MPA_REJECT; the CQE carries the SQ, WQEIDX = CI, the WQE's wr_id, a DMA error for a failed
// fetch, STALE_WQE exactly when the VALID bit differs from the expected polarity; dma, rej
// and cqe obey formal_axis_check; a second copy from another initial state agrees on every
// valid/ready/status output.
`default_nettype none
module formal_sq_engine (
  input wire          clk,
  input wire          rst,
  input wire          enable,
  input wire [1:0]    sq_reset,
  input wire [29:0]   sq_pi,
  input wire          sq_db,
  input wire [1:0]    sq_db_sq,
  input wire [1:0]    push_v,          // push images: the fields the engine decodes,
  input wire [11:0]   push_op,         // per SQ (the other bits are 0, to keep the
  input wire [1:0]    push_inl,        // model small)
  input wire [31:0]   push_len,
  input wire [47:0]   push_cm_id,
  input wire [5:0]    push_addr_lo,
  input wire [15:0]   push_wrid,
  input wire [1:0]    push_armed,
  input wire [29:0]   push_idx,
  input wire          dma_ready,
  input wire          rd_valid,
  input wire [31:0]   rd_hi,           // read beats: bits 63:32 and 7:0 free, the rest 0
  input wire [7:0]    rd_lo,           // (covers VALID, opcode, flags, pd_len, cm_id, wr_id)
  input wire          rd_last,
  input wire          rd_err,
  input wire          rej_ready,
  input wire          rsp_valid,
  input wire [15:0]   rsp_major,
  input wire [15:0]   rsp_minor,
  input wire [15:0]   rsp_frame_len,
  input wire [31:0]   rsp_seq,
  input wire          cqe_ready
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  (* anyconst *) reg [63:0] sq_base;
  // ring sizes (constants: symbolic sizes cost too much): SQ 0 has 4 entries (RING_LOG2_MIN),
  // SQ 1 has 2, below the register file's minimum, so that it wraps within the BMC depth (the
  // engine's index arithmetic is the same mask logic for every size)
  wire [7:0]  size_in = 8'h12;
  wire [63:0] rsp_first_cycle = 64'd0;
  wire [63:0] rd_data = {rd_hi, 24'd0, rd_lo};
  bouncer_regs_pkg::sq_wqe_t pw0, pw1;
  always @* begin
    pw0 = '0;
    pw0.valid = push_v[0]; pw0.opcode = push_op[5:0]; pw0.pd_inline = push_inl[0];
    pw0.pd_len = push_len[15:0]; pw0.cm_id = push_cm_id[23:0];
    pw0.pd_addr = {61'd0, push_addr_lo[2:0]}; pw0.wr_id = {56'd0, push_wrid[7:0]};
    pw1 = '0;
    pw1.valid = push_v[1]; pw1.opcode = push_op[11:6]; pw1.pd_inline = push_inl[1];
    pw1.pd_len = push_len[31:16]; pw1.cm_id = push_cm_id[47:24];
    pw1.pd_addr = {61'd0, push_addr_lo[5:3]}; pw1.wr_id = {56'd0, push_wrid[15:8]};
  end
  wire [1023:0] push_wqe = {pw1, pw0};

  // ---------------------------------------------------------------- the two copies
  wire [1:0]   a_take, b_take;
  wire [29:0]  a_ci, b_ci;
  wire [1:0]   a_cur, b_cur;
  wire [14:0]  a_cur_ci, b_cur_ci;
  wire         a_busy, b_busy, a_dma_valid, b_dma_valid, a_rej_valid, b_rej_valid;
  wire         a_cqe_valid, b_cqe_valid;
  wire [31:0]  a_dma_addr, b_dma_addr;
  wire [7:0]   a_dma_beats, b_dma_beats;
  wire [3:0]   a_rej_cm_id, b_rej_cm_id;
  wire         a_rej_pd_inline, b_rej_pd_inline, a_rej_iov, b_rej_iov;
  wire [31:0]  a_rej_pd_addr, b_rej_pd_addr, a_rej_ird_ord, b_rej_ird_ord;
  wire [9:0]   a_rej_pd_len, b_rej_pd_len;
  wire [255:0] a_rej_inline_pd, b_rej_inline_pd, a_cqe, b_cqe;
  wire [1:0]   a_rej_fin, b_rej_fin;
  /* verilator lint_off UNUSEDSIGNAL */
  wire [5:0]   a_stat, b_stat;
  wire [31:0]  a_stat_lat, b_stat_lat;
  /* verilator lint_on UNUSEDSIGNAL */

  bouncer_sq_engine #(.ADDR_W(32), .CTX_DEPTH_LOG2(4), .NUM_SQ(2)) dut_a (
    .clk(clk), .rst(rst), .enable(enable), .sq_base(sq_base), .sq_size_log2(size_in),
    .sq_reset(sq_reset), .sq_pi(sq_pi), .sq_db(sq_db), .sq_db_sq(sq_db_sq),
    .push_wqe(push_wqe), .push_armed(push_armed), .push_idx(push_idx), .push_take(a_take),
    .sq_ci(a_ci), .cur_sq(a_cur), .cur_ci(a_cur_ci), .busy(a_busy), .cycle_count(64'd0),
    .dma_valid(a_dma_valid), .dma_ready(dma_ready), .dma_addr(a_dma_addr),
    .dma_beats(a_dma_beats), .rd_valid(rd_valid), .rd_data(rd_data), .rd_last(rd_last),
    .rd_err(rd_err),
    .rej_valid(a_rej_valid), .rej_ready(rej_ready), .rej_cm_id(a_rej_cm_id),
    .rej_pd_inline(a_rej_pd_inline), .rej_pd_addr(a_rej_pd_addr), .rej_pd_len(a_rej_pd_len),
    .rej_inline_pd(a_rej_inline_pd), .rej_fin_policy(a_rej_fin),
    .rej_ird_ord_valid(a_rej_iov), .rej_ird_ord(a_rej_ird_ord),
    .rsp_valid(rsp_valid), .rsp_major(rsp_major), .rsp_minor(rsp_minor),
    .rsp_frame_len(rsp_frame_len), .rsp_seq(rsp_seq), .rsp_first_cycle(rsp_first_cycle),
    .cqe_valid(a_cqe_valid), .cqe_ready(cqe_ready), .cqe(a_cqe),
    .stat_wqe(a_stat[0]), .stat_error(a_stat[1]), .stat_push_used(a_stat[2]),
    .stat_push_dropped(a_stat[3]), .stat_latency_valid(a_stat[4]), .stat_latency(a_stat_lat)
  );
  bouncer_sq_engine #(.ADDR_W(32), .CTX_DEPTH_LOG2(4), .NUM_SQ(2)) dut_b (
    .clk(clk), .rst(rst), .enable(enable), .sq_base(sq_base), .sq_size_log2(size_in),
    .sq_reset(sq_reset), .sq_pi(sq_pi), .sq_db(sq_db), .sq_db_sq(sq_db_sq),
    .push_wqe(push_wqe), .push_armed(push_armed), .push_idx(push_idx), .push_take(b_take),
    .sq_ci(b_ci), .cur_sq(b_cur), .cur_ci(b_cur_ci), .busy(b_busy), .cycle_count(64'd0),
    .dma_valid(b_dma_valid), .dma_ready(dma_ready), .dma_addr(b_dma_addr),
    .dma_beats(b_dma_beats), .rd_valid(rd_valid), .rd_data(rd_data), .rd_last(rd_last),
    .rd_err(rd_err),
    .rej_valid(b_rej_valid), .rej_ready(rej_ready), .rej_cm_id(b_rej_cm_id),
    .rej_pd_inline(b_rej_pd_inline), .rej_pd_addr(b_rej_pd_addr), .rej_pd_len(b_rej_pd_len),
    .rej_inline_pd(b_rej_inline_pd), .rej_fin_policy(b_rej_fin),
    .rej_ird_ord_valid(b_rej_iov), .rej_ird_ord(b_rej_ird_ord),
    .rsp_valid(rsp_valid), .rsp_major(rsp_major), .rsp_minor(rsp_minor),
    .rsp_frame_len(rsp_frame_len), .rsp_seq(rsp_seq), .rsp_first_cycle(rsp_first_cycle),
    .cqe_valid(b_cqe_valid), .cqe_ready(cqe_ready), .cqe(b_cqe),
    .stat_wqe(b_stat[0]), .stat_error(b_stat[1]), .stat_push_used(b_stat[2]),
    .stat_push_dropped(b_stat[3]), .stat_latency_valid(b_stat[4]), .stat_latency(b_stat_lat)
  );
  assign a_stat[5] = 1'b0;
  assign b_stat[5] = 1'b0;

  // ---------------------------------------------------------------- per-SQ views
  wire [14:0] mask0 = 15'((32'd1 << size_in[3:0]) - 32'd1);
  wire [14:0] mask1 = 15'((32'd1 << size_in[7:4]) - 32'd1);
  wire [14:0] pi0 = sq_pi[14:0], pi1 = sq_pi[29:15];
  wire [14:0] ci0 = a_ci[14:0], ci1 = a_ci[29:15];
  wire        posted0 = ((pi0 - ci0) & mask0) != 15'd0;
  wire        posted1 = ((pi1 - ci1) & mask1) != 15'd0;

  // the SQ the engine works on
  wire        cur1       = a_cur[0];
  wire [14:0] cur_mask   = cur1 ? mask1 : mask0;
  wire [14:0] cur_ci     = cur1 ? ci1 : ci0;
  wire        cur_posted = cur1 ? posted1 : posted0;
  wire [31:0] cur_base   = cur1 ? sq_base[63:32] : sq_base[31:0];
  wire        drop       = a_busy && sq_reset[a_cur[0]];   // sq_reset of the SQ in work

  wire dma_fire = a_dma_valid && dma_ready;
  wire rej_fire = a_rej_valid && rej_ready;
  wire cqe_fire = a_cqe_valid && cqe_ready;

  formal_axis_check #(.W(40), .MASTER(1)) chk_dma (
    .clk(clk), .rst(rst), .clr(drop), .valid(a_dma_valid), .ready(dma_ready),
    .payload({a_dma_addr, a_dma_beats}));
  formal_axis_check #(.W(338), .MASTER(1)) chk_rej (
    .clk(clk), .rst(rst), .clr(drop), .valid(a_rej_valid), .ready(rej_ready),
    .payload({a_rej_cm_id, a_rej_pd_inline, a_rej_pd_addr, a_rej_pd_len, a_rej_inline_pd,
              a_rej_fin, a_rej_iov, a_rej_ird_ord}));
  formal_axis_check #(.W(256), .MASTER(1)) chk_cqe (
    .clk(clk), .rst(rst), .clr(drop), .valid(a_cqe_valid), .ready(cqe_ready),
    .payload(a_cqe));

  // ---------------------------------------------------------------- environment
  reg         rst_q;
  reg  [1:0]  sq_reset_q;
  reg  [29:0] pi_q, ci_q;
  reg         dma_out_q;     // a DMA command accepted and not finished
  reg  [2:0]  env_beat_q;    // its beats delivered so far
  reg         rej_open_q;    // a reject accepted and not answered
  always @(posedge clk) begin
    rst_q      <= rst;
    sq_reset_q <= sq_reset;
    pi_q       <= sq_pi;
    ci_q       <= a_ci;
    if (dma_fire) begin
      dma_out_q  <= 1'b1;
      env_beat_q <= 3'd0;
    end
    if (rd_valid) env_beat_q <= env_beat_q + 3'd1;
    if (rd_valid && rd_last) dma_out_q <= 1'b0;
    if (rej_fire) rej_open_q <= 1'b1;
    if (rsp_valid) rej_open_q <= 1'b0;
    if (rst) begin
      dma_out_q  <= 1'b0;
      env_beat_q <= 3'd0;
      rej_open_q <= 1'b0;
    end
  end

  wire [14:0] pi_q0 = pi_q[14:0], pi_q1 = pi_q[29:15];
  wire [58:0] push_img0 = {push_v[0], push_op[5:0], push_inl[0], push_len[15:0], push_cm_id[23:0],
                           push_addr_lo[2:0], push_wrid[7:0]};
  wire [58:0] push_img1 = {push_v[1], push_op[11:6], push_inl[1], push_len[31:16],
                           push_cm_id[47:24], push_addr_lo[5:3], push_wrid[15:8]};
  reg  [58:0] push_img0_q, push_img1_q;
  always @(posedge clk) begin
    push_img0_q <= push_img0;
    push_img1_q <= push_img1;
  end
  wire [14:0] ci_q0 = ci_q[14:0], ci_q1 = ci_q[29:15];
  always @* begin
    if (!init_q && !rst) begin
      if (rst_q || sq_reset[0] || sq_reset_q[0]) assume (pi0 == 15'd0);
      else assume ((pi0 & ~mask0) == 15'd0
                   && ((pi0 - ci_q0) & mask0) >= ((pi_q0 - ci_q0) & mask0));
      if (rst_q || sq_reset[1] || sq_reset_q[1]) assume (pi1 == 15'd0);
      else assume ((pi1 & ~mask1) == 15'd0
                   && ((pi1 - ci_q1) & mask1) >= ((pi_q1 - ci_q1) & mask1));
    end
    // a push page changes only while disarmed (a page write disarms it in the same edge)
    if (!init_q && push_img0 != push_img0_q) assume (!push_armed[0]);
    if (!init_q && push_img1 != push_img1_q) assume (!push_armed[1]);
    if (dma_ready) assume (!dma_out_q);
    if (rd_valid) assume (dma_out_q);
    if (rd_last) assume (rd_valid);
    if (rd_valid && env_beat_q == 3'd7) assume (rd_last);
    if (rd_last && env_beat_q != 3'd7) assume (rd_err);
    if (rej_ready) assume (!rej_open_q);
    if (rsp_valid) assume (rej_open_q);
    assume (!(rsp_major == bouncer_regs_pkg::CQ_MAJOR_WQE
              && rsp_minor == bouncer_regs_pkg::CQ_MINOR_STALE_WQE));
  end

  // ---------------------------------------------------------------- shadow model
  reg [29:0] sh_ci;
  reg [1:0]  sh_pol;
  wire [14:0] sh_ci0 = sh_ci[14:0], sh_ci1 = sh_ci[29:15];
  wire [14:0] sh_cur_ci = cur1 ? sh_ci1 : sh_ci0;
  wire        sh_cur_pol = sh_pol[a_cur[0]];
  wire [14:0] sh_next = (sh_cur_ci + 15'd1) & cur_mask;
  always @(posedge clk) begin
    if (cqe_fire) begin
      if (cur1) sh_ci[29:15] <= sh_next;
      else sh_ci[14:0] <= sh_next;
      if (sh_next == 15'd0) sh_pol[a_cur[0]] <= ~sh_cur_pol;
    end
    if (sq_reset[0]) begin sh_ci[14:0]  <= 15'd0; sh_pol[0] <= 1'b1; end
    if (sq_reset[1]) begin sh_ci[29:15] <= 15'd0; sh_pol[1] <= 1'b1; end
    if (rst) begin
      sh_ci  <= 30'd0;
      sh_pol <= 2'b11;
    end
  end

  // ---------------------------------------------------------------- per-WQE (busy interval) record
  localparam int VB = bouncer_regs_pkg::SQ_WQE_VALID_LSB;
  localparam int OB = bouncer_regs_pkg::SQ_WQE_OPCODE_LSB;
  localparam int WB = bouncer_regs_pkg::SQ_WQE_WR_ID_LSB;
  reg        busy_q, cqe_fire_q, drop_q, pend0_q, pend1_q, en_q;
  reg        ep_dma_q, ep_push_q, ep_rej_q;      // this WQE was fetched / pushed / rejected
  reg        cap_done_q, cap_err_q, cap_valid_q;
  reg [5:0]  cap_op_q;
  reg [63:0] cap_wrid_q;
  // push pages: the image one cycle ago, armed one cycle ago, armed for CI two cycles ago
  reg [1:0]  pv_q, armed_q, hit_q, hit_qq;
  reg [11:0] pop_q;
  reg [127:0] pwr_q;
  wire hit0 = push_armed[0] && ((push_idx[14:0] & mask0) == ci0);
  wire hit1 = push_armed[1] && ((push_idx[29:15] & mask1) == ci1);
  wire [2:0] beat_sel = env_beat_q;
  always @(posedge clk) begin
    busy_q     <= a_busy;
    cqe_fire_q <= cqe_fire;
    drop_q     <= drop;
    pend0_q    <= posted0;
    pend1_q    <= posted1;
    en_q       <= enable;
    pv_q       <= {push_wqe[512 + VB], push_wqe[VB]};
    pop_q      <= {push_wqe[512 + OB +: 6], push_wqe[OB +: 6]};
    pwr_q      <= {push_wqe[512 + WB +: 64], push_wqe[WB +: 64]};
    armed_q    <= push_armed;
    hit_q      <= {hit1, hit0};
    hit_qq     <= hit_q;
    if (dma_fire) ep_dma_q <= 1'b1;
    if (rej_fire) ep_rej_q <= 1'b1;
    if (|a_take && a_busy) begin
      ep_push_q   <= 1'b1;
      cap_done_q  <= 1'b1;
      cap_err_q   <= 1'b0;
      cap_valid_q <= a_take[1] ? pv_q[1] : pv_q[0];
      cap_op_q    <= a_take[1] ? pop_q[11:6] : pop_q[5:0];
      cap_wrid_q  <= a_take[1] ? pwr_q[127:64] : pwr_q[63:0];
    end
    if (rd_valid && ep_dma_q && a_busy) begin
      if (beat_sel == 3'(WB / 64)) cap_wrid_q <= rd_data;
      if (beat_sel == 3'(VB / 64)) begin
        cap_valid_q <= rd_data[VB % 64];
        cap_op_q    <= rd_data[OB % 64 +: 6];
      end
      if (rd_last) begin
        cap_done_q <= 1'b1;
        cap_err_q  <= rd_err;
      end
    end
    if (!a_busy || rst) begin
      ep_dma_q   <= 1'b0;
      ep_push_q  <= 1'b0;
      ep_rej_q   <= 1'b0;
      cap_done_q <= 1'b0;
      cap_err_q  <= 1'b0;
    end
    if (rst) begin
      busy_q     <= 1'b0;
      cqe_fire_q <= 1'b0;
      drop_q     <= 1'b0;
    end
  end

  // the capture as of this cycle: a push WQE is taken (push_take) in the cycle its reject or
  // its CQE (an error or a NOP, checked ahead) is first offered, from the image of the cycle
  // before (S_SEL); the registered record above sees it one cycle later
  wire        take_now    = |a_take && a_busy;
  wire        ep_push_w   = ep_push_q || take_now;
  wire        cap_done_w  = cap_done_q || take_now;
  wire        cap_err_w   = cap_err_q && !take_now;
  wire        cap_valid_w = take_now ? (a_take[1] ? pv_q[1] : pv_q[0]) : cap_valid_q;
  wire [5:0]  cap_op_w    = take_now ? (a_take[1] ? pop_q[11:6] : pop_q[5:0]) : cap_op_q;
  wire [63:0] cap_wrid_w  = take_now ? (a_take[1] ? pwr_q[127:64] : pwr_q[63:0]) : cap_wrid_q;

  // ---------------------------------------------------------------- properties
  bouncer_regs_pkg::cqe_t c;
  assign c = a_cqe;
  wire stale = c.majerr == bouncer_regs_pkg::CQ_MAJOR_WQE
            && c.minerr == bouncer_regs_pkg::CQ_MINOR_STALE_WQE;

  always @(posedge clk) begin
    if (!init_q) begin
      // the second copy (another initial state) agrees from the first reset on
      assert (a_busy == b_busy && a_dma_valid == b_dma_valid && a_rej_valid == b_rej_valid);
      assert (a_cqe_valid == b_cqe_valid && a_ci == b_ci);
      // push_take and the stat pulses are cleared by a reset (a take decided in the reset
      // cycle does not come out after it)
      assert (a_take == b_take && a_stat == b_stat && a_stat_lat == b_stat_lat);
      if (rst_q) assert (a_take == 2'b00 && a_stat == 6'd0);
      if (a_busy) assert (a_cur == b_cur);
      if (!rst) begin
        // ring pointers: CI follows the shadow and stays inside the ring
        assert (ci0 == sh_ci0 && ci1 == sh_ci1);
        assert ((ci0 & ~mask0) == 15'd0 && (ci1 & ~mask1) == 15'd0);
        // no overrun: the WQE in work is posted; a pick takes an SQ with pending work
        if (a_busy) assert (a_cur[1] == 1'b0);
        if (a_busy && !drop) assert (cur_posted);
        if (a_busy && !busy_q && !rst_q) assert (en_q && (cur1 ? pend1_q : pend0_q));
        // one WQE per busy interval, ended by exactly one CQE or a drop
        if (busy_q && !a_busy && !rst_q) assert (cqe_fire_q || drop_q);
        if (busy_q && a_busy) assert (!cqe_fire_q);
        if (a_dma_valid || a_rej_valid || a_cqe_valid) assert (a_busy);
        if (dma_fire) begin
          assert (!ep_dma_q && !ep_push_q);
          assert (a_dma_addr == cur_base + {2'd0, cur_ci, 6'd0} && a_dma_beats == 8'd8);
        end
        if (|a_take && !rst_q) begin
          assert (a_take != 2'b11);
          assert ((a_busy && a_take[a_cur[0]] && !ep_dma_q && !ep_push_q) || drop_q);
          assert ((a_take & ~(armed_q & hit_qq)) == 2'b00);
        end
        // a reject only for a good WQE with the expected polarity
        if (a_rej_valid) begin
          assert (cap_done_w && !cap_err_w && (ep_dma_q || ep_push_w));
          assert (cap_valid_w == sh_cur_pol);
          assert (cap_op_w == bouncer_regs_pkg::SQ_OP_MPA_REJECT);
          assert (a_cur_ci == sh_cur_ci);
        end
        if (rej_fire) assert (!ep_rej_q);
        // the CQE: SQ, index, wr_id, error code; polarity
        if (a_cqe_valid) begin
          assert (c.sq_idx == {2'd0, a_cur} && c.wqeidx == sh_cur_ci && a_cur_ci == sh_cur_ci);
          assert (cap_done_w && (ep_dma_q || ep_push_w));
          assert (c.error == (c.majerr != bouncer_regs_pkg::CQ_MAJOR_OK));
          if (cap_err_w) assert (c.majerr == bouncer_regs_pkg::CQ_MAJOR_DMA);
          else begin
            assert (c.wr_id == cap_wrid_w);
            if (cap_valid_w != sh_cur_pol) assert (stale && !ep_rej_q);
            else assert (!stale);
          end
        end
      end
    end
  end

endmodule
`default_nettype wire
