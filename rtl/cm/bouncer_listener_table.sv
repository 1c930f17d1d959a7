// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_listener_table: the N listeners (NUM_LISTENERS, in flops) and their backlog
// accounting.
//
// Configuration (cfg_*): cfg_valid with cfg_create = 1 installs entry cfg_wqe.LISTENER
// (the low $clog2(N) bits) from a cqp_listen_wqe, overwriting a valid entry; cfg_create = 0
// destroys it. cfg_ok (combinational, meaningful with cfg_valid) is 0 only for the destroy
// of an entry that is not valid (nothing changes then). Stored normalised: FIN_POLICY
// DEFAULT is stored as SIW_SAFE, TTL 0 as 64. Takes effect at the clock edge.
//
// Match (lk_*): which listener takes a SYN to (lk_ip, lk_port). An entry matches when it is
// valid, its port equals lk_port and its address equals lk_ip or is 0 (wildcard). An exact
// address match wins over a wildcard one; among equals the lowest index wins. lk_full: the
// winner has a backlog limit (BACKLOG != 0) and pending >= BACKLOG; lk_auto_reject: the
// winner's AUTO_REJECT (0 on a miss), so no read through rd_idx is needed. Latency 2: lk_res_* are
// registered and valid two cycles after lk_valid; they reflect the table as it was in the
// lk_valid cycle (a cfg or pend update in that same cycle is not seen). One lookup per
// cycle (pipelined). lk_idx is 0 and lk_full 0 on a miss.
//
// Read port (rd_*): the stored fields of entry rd_idx, combinational (latency 0).
//
// Template bank: each entry's PD template lives on chip in one of two banks
// (bouncer_tmpl_ram). rd_tmpl_bank is the bank entry rd_idx uses; cfg_tmpl_bank is the other
// bank of entry cfg_wqe.LISTENER, into which the control queue copies a new template before it
// creates the entry. A create flips the entry's bank, so the template of the previous
// incarnation stays intact for a request that took it before the create.
//
// Backlog (pend_*): per entry a 16-bit count of this listener's nodes between SYN and the
// host's reject (or the node's end). pend_inc / pend_dec may come in the same cycle, also
// for the same entry: the result is pending + inc - dec, floored at 0 and capped at
// 0xFFFF. Neither create nor destroy changes pending (nodes of an earlier incarnation still
// end and decrement); reset clears it.
// N: a power of two, 2 .. 16 (the LISTENER field has 4 bits).
`default_nettype none
module bouncer_listener_table #(
  parameter int N = 16
) (
  input  wire                   clk,
  input  wire                   rst,

  input  wire                   cfg_valid,
  input  wire                   cfg_create,
  input  wire [511:0]           cfg_wqe,
  output logic                  cfg_ok,
  output logic                  cfg_tmpl_bank,

  input  wire                   lk_valid,
  input  wire [31:0]            lk_ip,
  input  wire [15:0]            lk_port,
  output logic                  lk_res_valid,
  output logic                  lk_hit,
  output logic [$clog2(N)-1:0]  lk_idx,
  output logic                  lk_full,
  output logic [1:0]            lk_auto_reject,

  input  wire  [$clog2(N)-1:0]  rd_idx,
  output logic                  rd_valid_entry,
  output logic [31:0]           rd_loc_ip,
  output logic [15:0]           rd_loc_port,
  output logic [15:0]           rd_backlog,
  output logic [1:0]            rd_fin_policy,
  output logic [1:0]            rd_auto_reject,
  output logic                  rd_aeq_full_rst,
  output logic                  rd_tmpl_bank,
  output logic [9:0]            rd_tmpl_len,
  output logic                  rd_tmpl_ird_ord_valid,
  output logic [31:0]           rd_tmpl_ird_ord,
  output logic [47:0]           rd_loc_mac,
  output logic [7:0]            rd_ttl,
  output logic [7:0]            rd_tos,
  output logic [13:0]           rd_max_ird,
  output logic [13:0]           rd_max_ord,
  output logic [15:0]           rd_pending,

  input  wire                   pend_inc,
  input  wire  [$clog2(N)-1:0]  pend_inc_idx,
  input  wire                   pend_dec,
  input  wire  [$clog2(N)-1:0]  pend_dec_idx
);

  localparam int LW = $clog2(N);

  // ---------------------------------------------------------------- configuration
  /* verilator lint_off UNUSEDSIGNAL */  // a view: reserved, SCRATCH, OPCODE, VALID unused
  bouncer_regs_pkg::cqp_listen_wqe_t wqe;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [LW-1:0] cfg_idx;
  logic [1:0]    cfg_fin;
  logic [7:0]    cfg_ttl;

  assign wqe     = cfg_wqe;
  assign cfg_idx = wqe.listener[LW-1:0];
  assign cfg_fin = (wqe.fin_policy == bouncer_regs_pkg::FIN_POLICY_DEFAULT)
                   ? bouncer_regs_pkg::FIN_POLICY_SIW_SAFE : wqe.fin_policy;
  assign cfg_ttl = (wqe.ttl == 8'd0) ? 8'd64 : wqe.ttl;

  logic [N-1:0] valid_q;
  logic [31:0]  ip_q       [N];
  logic [15:0]  port_q     [N];
  logic [15:0]  backlog_q  [N];
  logic [1:0]   fin_q      [N];
  logic [1:0]   auto_q     [N];
  logic         aeqrst_q   [N];
  logic [N-1:0] tbank_q;
  logic [9:0]   tlen_q     [N];
  logic         tiov_q     [N];
  logic [31:0]  tio_q      [N];
  logic [47:0]  mac_q      [N];
  logic [7:0]   ttl_q      [N];
  logic [7:0]   tos_q      [N];
  logic [13:0]  mird_q     [N];
  logic [13:0]  mord_q     [N];
  logic [N*16-1:0] pend_q, pend_d;  // entry i in bits [16*i +: 16]

  assign cfg_ok        = cfg_create || valid_q[cfg_idx];
  assign cfg_tmpl_bank = !tbank_q[cfg_idx];

  always_ff @(posedge clk) begin
    if (cfg_valid && cfg_create) begin
      ip_q[cfg_idx]      <= wqe.loc_ip;
      port_q[cfg_idx]    <= wqe.loc_port;
      backlog_q[cfg_idx] <= wqe.backlog;
      fin_q[cfg_idx]     <= cfg_fin;
      auto_q[cfg_idx]    <= wqe.auto_reject;
      aeqrst_q[cfg_idx]  <= wqe.aeq_full_rst;
      tlen_q[cfg_idx]    <= wqe.tmpl_len;
      tiov_q[cfg_idx]    <= wqe.tmpl_ird_ord_valid;
      tio_q[cfg_idx]     <= wqe.tmpl_ird_ord;
      mac_q[cfg_idx]     <= wqe.loc_mac;
      ttl_q[cfg_idx]     <= cfg_ttl;
      tos_q[cfg_idx]     <= wqe.tos;
      mird_q[cfg_idx]    <= wqe.max_ird;
      mord_q[cfg_idx]    <= wqe.max_ord;
    end
  end

  always_ff @(posedge clk) begin
    for (int i = 0; i < N; i++) begin
      if (cfg_valid && cfg_idx == LW'(i)) valid_q[i] <= cfg_create;
      if (cfg_valid && cfg_create && cfg_idx == LW'(i)) tbank_q[i] <= !tbank_q[i];
    end
    if (rst) begin
      valid_q <= '0;
      tbank_q <= '0;
    end
  end

  // ---------------------------------------------------------------- backlog counters
  logic [N-1:0] inc_v, dec_v;

  always_comb begin
    for (int i = 0; i < N; i++) begin
      inc_v[i]  = pend_inc && pend_inc_idx == LW'(i);
      dec_v[i]  = pend_dec && pend_dec_idx == LW'(i);
      pend_d[16*i +: 16] = pend_q[16*i +: 16];
      if (inc_v[i] && !dec_v[i] && pend_q[16*i +: 16] != 16'hFFFF)
        pend_d[16*i +: 16] = pend_q[16*i +: 16] + 16'd1;
      if (dec_v[i] && !inc_v[i] && pend_q[16*i +: 16] != 16'd0)
        pend_d[16*i +: 16] = pend_q[16*i +: 16] - 16'd1;
    end
  end

  always_ff @(posedge clk) begin
    pend_q <= pend_d;
    if (rst) pend_q <= '0;
  end

  // ---------------------------------------------------------------- match
  // Two registered stages, so that neither the 48-bit compares nor the choice among the N
  // entries sits on one long path. Stage 1: per entry, exact and wildcard match vectors, and
  // (from the same cycle's counters) whether the entry is at its backlog limit. Stage 2: the
  // lowest matching index, exact before wildcard, and its limit bit.
  logic [N-1:0]  ex_vec_q, wc_vec_q, atcap_q;
  logic [2*N-1:0] auto1_q;
  logic          s1_v_q;
  logic [N-1:0]  ex_first, wc_first, win_oh;
  logic          ex_hit, wc_hit;
  logic [LW-1:0] win;
  logic          res_v_q, hit_q, full_q;
  logic [1:0]    lauto_q, win_auto;
  logic [LW-1:0] idx_q;

  always_ff @(posedge clk) begin
    s1_v_q <= lk_valid;
    for (int i = 0; i < N; i++) begin
      ex_vec_q[i] <= valid_q[i] && port_q[i] == lk_port && ip_q[i] == lk_ip;
      wc_vec_q[i] <= valid_q[i] && port_q[i] == lk_port && ip_q[i] == 32'd0;
      atcap_q[i]  <= backlog_q[i] != 16'd0 && pend_q[16*i +: 16] >= backlog_q[i];
      auto1_q[2*i +: 2] <= auto_q[i];
    end
    if (rst) s1_v_q <= 1'b0;
  end

  always_comb begin
    ex_hit   = |ex_vec_q;
    wc_hit   = |wc_vec_q;
    // lowest set bit of each vector (one-hot)
    ex_first = ex_vec_q & (~ex_vec_q + 1'b1);
    wc_first = wc_vec_q & (~wc_vec_q + 1'b1);
    win_oh   = ex_hit ? ex_first : wc_first;
    win      = '0;
    win_auto = '0;
    for (int i = 0; i < N; i++) begin
      if (win_oh[i]) win = win | LW'(i);
      if (win_oh[i]) win_auto = win_auto | auto1_q[2*i +: 2];
    end
  end

  always_ff @(posedge clk) begin
    res_v_q <= s1_v_q;
    hit_q   <= ex_hit || wc_hit;
    idx_q   <= win;
    full_q  <= |(win_oh & atcap_q);
    lauto_q <= win_auto;
    if (rst) res_v_q <= 1'b0;
  end

  assign lk_res_valid = res_v_q;
  assign lk_hit       = hit_q;
  assign lk_idx       = idx_q;
  assign lk_full      = full_q;
  assign lk_auto_reject = lauto_q;

  // ---------------------------------------------------------------- read port
  assign rd_valid_entry        = valid_q[rd_idx];
  assign rd_loc_ip             = ip_q[rd_idx];
  assign rd_loc_port           = port_q[rd_idx];
  assign rd_backlog            = backlog_q[rd_idx];
  assign rd_fin_policy         = fin_q[rd_idx];
  assign rd_auto_reject        = auto_q[rd_idx];
  assign rd_aeq_full_rst       = aeqrst_q[rd_idx];
  assign rd_tmpl_bank          = tbank_q[rd_idx];
  assign rd_tmpl_len           = tlen_q[rd_idx];
  assign rd_tmpl_ird_ord_valid = tiov_q[rd_idx];
  assign rd_tmpl_ird_ord       = tio_q[rd_idx];
  assign rd_loc_mac            = mac_q[rd_idx];
  assign rd_ttl                = ttl_q[rd_idx];
  assign rd_tos                = tos_q[rd_idx];
  assign rd_max_ird            = mird_q[rd_idx];
  assign rd_max_ord            = mord_q[rd_idx];
  assign rd_pending            = pend_q[32'(rd_idx) * 16 +: 16];

endmodule
`default_nettype wire
