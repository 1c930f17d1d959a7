// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_cm_engine: the passive connection manager. It owns every cm_node: the context
// (bouncer_cm_ctx_table), the 4-tuple entry (bouncer_conn_table), the cm_id (bouncer_id_alloc)
// and the timer (bouncer_cm_timer). Three kinds of jobs reach it and it runs them one at a
// time, so no two jobs ever race on a node:
//
//   RX record  (bouncer_rx_parser, one per received frame)
//   host reject (bouncer_sq_engine: an MPA_REJECT WQE, PD inline or by address)
//   timer expiry (bouncer_cm_timer)
//
// A job is a short program: gather (conn-table lookup, context read, listener match, MPA
// request assembly), decide (one combinational step per job kind: `plan`), then an epilogue
// that performs the plan's actions in a fixed order:
//
//   drop payload -> request PD to host (DMA write) -> control segment A (SYN-ACK/ACK/FIN/RST)
//   -> MPA reject (PD inline, or DMA-read from the host slot / listener template)
//   -> the reject's PD copied into the node's host slot when it came from elsewhere
//   -> control segment B (RST behind an ABORT reject) -> event (AEQ)
//   -> context write, or free (conn-table delete, cm_id back to the free list, timer off)
//   -> timer set -> host response (the SQ engine writes the CQE)
//
// A node's terminal event is always written before its cm_id is freed, so the host never
// sees a new CONNECT_REQUEST on a cm_id before the old node's end.
// Sequence-space rules (our side only ever sends SYN-ACK, one reject segment and one FIN):
//   SYN-ACK at ISS; reject at ISS + 1; FIN right behind the reject (in it for IRDMA).
//   ctx.IP_ID is the ID of the next frame that carries new sequence space; a retransmission
//   reuses IP_ID - 1 and the original sequence number, so it is byte-identical. Bare ACKs and
//   RSTs carry IP_ID without consuming it. A retransmitted reject reads its PD from the
//   node's slot (PD_BASE + cm_id * 512): when the first transmission took it from elsewhere
//   (inline in the WQE, another PD_ADDR, a listener template), the engine copies the PD it
//   sent into the slot right after the frame, so every retransmission carries the same bytes
//   whatever becomes of the WQE's buffer or the listener.
// TCP options: the peer's SYN decides. Its MSS bounds every segment we send (PEER_MSS; 536
//   without one); the SYN-ACK carries our window-scale option only if the SYN had one, and the
//   window we offer (TCP_WND bytes, scaled once scaling is in effect) is what we take.
// Timing: a job occupies the engine for ~10 cycles plus what it waits for (DMA, TX). Host
// reject: an inline PD is written into the builder while the context is read (intake + up
// to 3 cycles, done before the plan), and a host job whose plan sends the reject goes from
// S_DISPATCH straight to E_REJ_START (inline or no PD) or E_REJ_LOAD (PD by DMA): its
// epilogue has nothing to do before the reject. Intake -> builder start = 5 cycles.
`default_nettype none
module bouncer_cm_engine #(
  parameter int ADDR_W    = 64,
  parameter int ID_W      = 10,   // cm_id width = log2 of the context-table depth
  parameter int NBUF_LOG2 = 3,    // MPA reassembly buffers
  parameter int NL_LOG2   = 4     // listeners
) (
  input  wire                  clk,
  input  wire                  rst,
  input  wire                  enable,

  // configuration
  input  wire [63:0]           cycle_count,
  input  wire [31:0]           now,            // timer ticks
  input  wire                  now_inc,        // `now` advances at the next edge (bouncer_cm_timer)
  input  wire [ADDR_W-1:0]     pd_base,
  input  wire [31:0]           rto_init,
  input  wire [31:0]           rto_max,
  input  wire [3:0]            rtx_max,
  input  wire [31:0]           mpa_timeout,
  input  wire [31:0]           mpa_reasm_timeout,
  input  wire [31:0]           fin_timeout,
  input  wire [31:0]           time_wait,
  input  wire [15:0]           tcp_mss,
  input  wire [3:0]            tcp_wscale,
  input  wire [15:0]           tcp_wnd,
  input  wire                  promisc,        // CM_ROUTE.PROMISC
  input  wire [47:0]           port_mac,       // PORT_MAC_HI/LO: the MAC PROMISC 0 accepts
  input  wire [31:0]           port_ip,        // PORT_IP: the IPv4 destination taken (0: any)

  // RX records (bouncer_rx_parser m_meta_*)
  input  wire                  s_rec_valid,
  output logic                 s_rec_ready,
  input  wire [47:0]           s_rec_eth_dst,
  input  wire [47:0]           s_rec_eth_src,
  input  wire                  s_rec_vlan_present,
  input  wire [15:0]           s_rec_vlan_tci,
  input  wire                  s_rec_tcp,
  input  wire [7:0]            s_rec_ip_tos,
  input  wire [31:0]           s_rec_ip_src,
  input  wire [31:0]           s_rec_ip_dst,
  input  wire [15:0]           s_rec_src_port,
  input  wire [15:0]           s_rec_dst_port,
  input  wire [31:0]           s_rec_seq,
  input  wire [31:0]           s_rec_ack,
  input  wire [7:0]            s_rec_flags,
  input  wire [15:0]           s_rec_payload_len,
  input  wire                  s_rec_bad,
  input  wire                  s_rec_mss_present,  // TCP options (a SYN's count)
  input  wire [15:0]           s_rec_mss,
  input  wire                  s_rec_ws_present,

  // host reject requests (bouncer_sq_engine) and their results
  input  wire                  s_hrej_valid,
  output logic                 s_hrej_ready,
  input  wire [ID_W-1:0]       s_hrej_cm_id,
  input  wire                  s_hrej_pd_inline,
  input  wire [ADDR_W-1:0]     s_hrej_pd_addr,
  input  wire [9:0]            s_hrej_pd_len,
  input  wire [255:0]          s_hrej_inline_pd,
  input  wire [1:0]            s_hrej_fin_policy,
  input  wire                  s_hrej_ird_ord_valid,
  input  wire [31:0]           s_hrej_ird_ord,
  output logic                 m_hrsp_valid,   // one-cycle pulse per request
  output logic [15:0]          m_hrsp_major,
  output logic [15:0]          m_hrsp_minor,
  output logic [15:0]          m_hrsp_frame_len,
  output logic [31:0]          m_hrsp_seq,
  output logic [63:0]          m_hrsp_first_cycle,

  // timer (bouncer_cm_timer)
  input  wire                  s_exp_valid,
  output logic                 s_exp_ready,
  input  wire [ID_W-1:0]       s_exp_id,
  output logic                 tmr_set_valid,
  output logic [ID_W-1:0]      tmr_set_id,
  output logic                 tmr_set_on,
  output logic [31:0]          tmr_set_deadline,

  // connection table (bouncer_conn_table)
  output logic                 ct_cmd_valid,
  input  wire                  ct_cmd_ready,
  output logic [1:0]           ct_cmd_op,
  output logic [31:0]          ct_cmd_rem_ip,
  output logic [31:0]          ct_cmd_loc_ip,
  output logic [15:0]          ct_cmd_rem_port,
  output logic [15:0]          ct_cmd_loc_port,
  output logic [ID_W-1:0]      ct_cmd_cm_id,
  input  wire                  ct_res_valid,
  output logic                 ct_res_ready,
  input  wire                  ct_res_hit,
  input  wire [ID_W-1:0]       ct_res_cm_id,
  input  wire [1:0]            ct_res_status,

  // cm_id free list (bouncer_id_alloc)
  input  wire                  alloc_valid,
  output logic                 alloc_ready,
  input  wire [ID_W-1:0]       alloc_id,
  output logic                 free_valid,
  output logic [ID_W-1:0]      free_id,

  // listeners (bouncer_listener_table)
  output logic                 lk_valid,
  output logic [31:0]          lk_ip,
  output logic [15:0]          lk_port,
  input  wire                  lk_res_valid,
  input  wire                  lk_hit,
  input  wire [NL_LOG2-1:0]    lk_idx,
  input  wire                  lk_full,
  input  wire [1:0]            lk_auto_reject,  // the winner's AUTO_REJECT, with lk_full
  output logic [NL_LOG2-1:0]   lst_rd_idx,
  input  wire [1:0]            lst_fin_policy,
  input  wire [1:0]            lst_auto_reject,
  input  wire                  lst_aeq_full_rst,  // AEQ without room: RST (else auto-reject)
  input  wire                  lst_tmpl_bank,   // the listener's template bank (below)
  input  wire [9:0]            lst_tmpl_len,
  input  wire                  lst_tmpl_ird_ord_valid,
  input  wire [31:0]           lst_tmpl_ird_ord,
  input  wire [47:0]           lst_loc_mac,
  input  wire [7:0]            lst_ttl,
  input  wire [7:0]            lst_tos,
  input  wire [13:0]           lst_max_ird,
  input  wire [13:0]           lst_max_ord,
  output logic                 pend_inc,
  output logic [NL_LOG2-1:0]   pend_inc_idx,
  output logic                 pend_dec,
  output logic [NL_LOG2-1:0]   pend_dec_idx,

  // listener templates on chip (bouncer_tmpl_ram): an auto-reject reads its PD here, one
  // 64-bit word per cycle, registered (tmpl_rd_data is the word addressed the cycle before).
  // tmpl_use_*: the template slot {bank, listener} this job has taken and not finished reading;
  // the control queue does not write a slot while it is in use
  output logic                 tmpl_rd_en,
  output logic [NL_LOG2:0]     tmpl_rd_slot,
  output logic [5:0]           tmpl_rd_word,
  input  wire  [63:0]          tmpl_rd_data,
  output logic                 tmpl_use_valid,
  output logic [NL_LOG2:0]     tmpl_use_slot,

  // keyed ISN (bouncer_isn_hash)
  output logic                 isn_valid,
  input  wire                  isn_ready,
  output logic [31:0]          isn_loc_ip,
  output logic [31:0]          isn_rem_ip,
  output logic [15:0]          isn_loc_port,
  output logic [15:0]          isn_rem_port,
  input  wire                  isn_res_valid,
  output logic                 isn_res_ready,
  input  wire [31:0]           isn_res,

  // context table port
  output logic                 ctx_req_valid,
  input  wire                  ctx_req_ready,
  output logic                 ctx_req_we,
  output logic [ID_W-1:0]      ctx_req_addr,
  output logic [511:0]         ctx_req_wdata,
  input  wire                  ctx_rsp_valid,
  input  wire [511:0]          ctx_rsp_rdata,

  // MPA request assembler (bouncer_mpa_req_asm)
  output logic                 asm_cmd_valid,
  input  wire                  asm_cmd_ready,
  output logic                 asm_cmd_append,
  output logic                 asm_cmd_new,
  output logic [NBUF_LOG2-1:0] asm_cmd_buf,
  output logic [9:0]           asm_cmd_offset,
  output logic [15:0]          asm_cmd_len,
  input  wire                  asm_rsp_valid,
  output logic                 asm_rsp_ready,
  input  wire                  asm_rsp_ok,
  input  wire [NBUF_LOG2-1:0]  asm_rsp_buf,
  input  wire [15:0]           asm_rsp_total,
  input  wire                  asm_rsp_hdr_valid,
  input  wire                  asm_rsp_key_ok,
  input  wire [7:0]            asm_rsp_flags,
  input  wire [7:0]            asm_rsp_rev,
  input  wire [15:0]           asm_rsp_pd_len,
  input  wire                  asm_rsp_ird_ord_valid,
  input  wire [31:0]           asm_rsp_ird_ord,
  output logic                 asm_rd_valid,
  input  wire                  asm_rd_ready,
  output logic [NBUF_LOG2-1:0] asm_rd_buf,
  output logic [9:0]           asm_rd_start,
  output logic [9:0]           asm_rd_len,
  output logic                 asm_rd_free,
  input  wire                  asm_chunk_valid,
  output logic                 asm_chunk_ready,
  input  wire [511:0]          asm_chunk_data,
  input  wire [3:0]            asm_chunk_beats,
  input  wire                  asm_chunk_last,
  output logic                 asm_free_valid,
  output logic [NBUF_LOG2-1:0] asm_free_buf,

  // TCP control segments (bouncer_tcp_ctrl_builder)
  output logic                 ctl_valid,
  input  wire                  ctl_ready,
  output logic [1:0]           ctl_kind,
  output logic [47:0]          ctl_rem_mac,
  output logic [47:0]          ctl_loc_mac,
  output logic                 ctl_vlan_en,
  output logic [15:0]          ctl_vlan_tci,
  output logic [31:0]          ctl_loc_ip,
  output logic [31:0]          ctl_rem_ip,
  output logic [7:0]           ctl_tos,
  output logic [7:0]           ctl_ttl,
  output logic [15:0]          ctl_ip_id,
  output logic [15:0]          ctl_loc_port,
  output logic [15:0]          ctl_rem_port,
  output logic [31:0]          ctl_seq,
  output logic [31:0]          ctl_ack,
  output logic [15:0]          ctl_window,
  output logic [15:0]          ctl_mss,
  output logic [7:0]           ctl_wscale,
  output logic                 ctl_ws_en,      // SYN-ACK: the window-scale option (else NOPs)

  // MPA reject frames (bouncer_mpa_reject_builder)
  output logic                 pd_clear,
  output logic [9:0]           pd_len,
  output logic                 pd_wr_en,
  output logic [6:0]           pd_wr_idx,
  output logic [63:0]          pd_wr_data,
  output logic                 rej_start_valid,
  input  wire                  rej_start_ready,
  output logic [511:0]         rej_start_ctx,
  output logic                 rej_start_fin,
  output logic                 rej_start_ird_ord_valid,
  output logic [31:0]          rej_start_ird_ord,
  output logic [15:0]          rej_start_mss,   // the peer's MSS (0: no bound)
  input  wire [15:0]           rej_frame_len,
  input  wire [3:0]            rej_seg_count,   // segments of the reject (builder, 1..12)
  input  wire [15:0]           rej_seq_advance,
  input  wire                  rej_first_beat,
  input  wire                  rej_done,
  input  wire                  tx_rej_sof,      // the reject's first beat left the TX port

  // DMA read (PD of rejects) and write (request PD to the host slot, posted)
  output logic                 dma_rd_valid,
  input  wire                  dma_rd_ready,
  output logic [ADDR_W-1:0]    dma_rd_addr,
  output logic [7:0]           dma_rd_beats,
  input  wire                  rd_valid,
  input  wire [63:0]           rd_data,
  input  wire                  rd_last,
  input  wire                  rd_err,
  output logic                 dma_wr_valid,
  input  wire                  dma_wr_ready,
  output logic [ADDR_W-1:0]    dma_wr_addr,
  output logic [3:0]           dma_wr_beats,
  output logic [511:0]         dma_wr_data,
  input  wire                  dma_wr_done,

  // events (AEQ writer). aeq_free: entries the AEQ can still take (registered in the core,
  // from the host's AEQ_HEAD and the writer's tail); aeq_half: half the ring's capacity
  input  wire  [14:0]          aeq_free,
  input  wire  [14:0]          aeq_half,
  output logic                 evt_valid,
  input  wire                  evt_ready,
  output logic [255:0]         evt,

  output logic                 busy,
  output logic [27:0]          stat             // STAT_* pulses: bit i < 24 -> register 0x300 + 4i,
                                                // 24 -> STAT_RX_FILTERED, 25 -> STAT_RX_STRAY,
                                                // 26 -> STAT_AEQ_REFUSED, 27 -> STAT_EVT_COALESCED
);

  // statistics bit numbers (register 0x300 + 4 * bit)
  localparam int ST_RX_BAD = 1, ST_RX_NOT_TCP = 2, ST_SYN_NO_LST = 4, ST_SYN_FULL = 5,
                 ST_SYN_BACKLOG = 6, ST_SYN_DUP = 7, ST_ESTAB = 8, ST_MPA_REQ = 9,
                 ST_MPA_ERR = 10, ST_MPA_TMO = 11, ST_REJ_HOST = 12, ST_REJ_AUTO = 13,
                 ST_RTX = 14, ST_RTX_EXH = 15, ST_RST_TX = 16, ST_RST_RX = 17, ST_OOW = 18,
                 ST_FIN_TX = 19, ST_CLOSED = 20, ST_EVENTS = 21, ST_REJ_LATE = 22,
                 ST_ACK_TX = 23, ST_RX_FILTERED = 24, ST_RX_STRAY = 25, ST_AEQ_REFUSED = 26,
                 ST_EVT_COALESCED = 27;

  localparam logic [1:0] K_SYNACK = 2'd0, K_ACK = 2'd1, K_FIN = 2'd2, K_RST = 2'd3;
  localparam logic [1:0] CT_LOOKUP = 2'd0, CT_INSERT = 2'd1, CT_DELETE = 2'd2;

  typedef enum logic [5:0] {
    S_IDLE,
    // RX
    S_RX_CLASSIFY, S_CT_LOOKUP, S_CT_LOOKUP_WAIT, S_LST_LOOKUP, S_LST_WAIT, S_NOCONN,
    S_ALLOC, S_CT_INSERT, S_CT_INSERT_WAIT, S_ISN, S_ISN_WAIT, S_SYN_PLAN,
    S_CTX_RD, S_CTX_WAIT, S_DISPATCH, S_ASM_CMD, S_ASM_RSP, S_MPA,
    // epilogue
    E_DROP, E_DROP_RSP, E_PDDMA_CMD, E_PDDMA_CHUNK, E_PDDMA_WAIT, E_CTRL_A,
    E_REJ_LOAD, E_REJ_DMA_CMD, E_REJ_DMA_DATA, E_REJ_TMPL, E_REJ_START, E_REJ_WAIT,
    E_CTRL_B, E_EVT, E_CT_DEL, E_CT_DEL_WAIT, E_FREE, E_CTX_WR, E_TMR, E_HRSP
  } state_t;
  // one-hot: every next-state condition is then an AND of one state flop with its inputs, not
  // a decode of the 6-bit code in front of a wide mux (the engine's next state was the
  // deepest path in the 250 MHz budget)
  (* fsm_encoding = "one-hot" *) state_t state_q;

  typedef enum logic [1:0] { J_RX, J_HOST, J_TMR } job_t;
  job_t job_q;
  logic [1:0] rr_q;  // round-robin pointer over the three sources

  // ------------------------------------------------------------------ job registers
  // RX record
  logic [47:0] r_eth_src, r_eth_dst;
  logic        r_vlan;
  logic [15:0] r_vlan_tci;
  logic        r_tcp, r_bad;
  logic [7:0]  r_tos;
  logic [31:0] r_ip_src, r_ip_dst, r_seq, r_ack;
  logic [31:0] r_seq_p1;   // r_seq + 1, added as the record is taken
  // the route filter (CM_ROUTE.PROMISC, PORT_MAC, PORT_IP), compared as the record is taken
  logic        r_mac_ok, r_ip_ok;
  logic [15:0] r_sport, r_dport, r_len;
  logic [15:0] r_peer_mss;  // the SYN's MSS option, 536 without one, at least 48
  logic        r_ws;        // the SYN had a window-scale option
  /* verilator lint_off UNUSEDSIGNAL */  // URG, ECE, CWR, PSH are not looked at
  logic [7:0]  r_flags;
  /* verilator lint_on UNUSEDSIGNAL */
  // host request
  logic                h_pd_inline, h_ird_ord_valid;
  logic [ADDR_W-1:0]   h_pd_addr;
  logic [9:0]          h_pd_len;
  logic [255:0]        h_inline_pd;
  logic [1:0]          h_fin_policy;
  logic [31:0]         h_ird_ord;

  logic [ID_W-1:0]     id_q;            // the node this job works on
  bouncer_regs_pkg::cm_ctx_t             ctx_q;           // as read
  bouncer_regs_pkg::cm_ctx_t             nctx_q;          // as it will be written
  logic [NL_LOG2-1:0]  lst_q;

  // plan (what the epilogue does; see plan_t)
  logic        p_drop_q;                // payload of this record: discard command
  logic        p_ctrl_b_q;              // RST behind an ABORT reject
  logic [31:0] p_seq_b_q;
  logic [15:0] p_ipid_b_q;
  logic [ADDR_W-1:0] p_rej_addr_q;
  logic [9:0]  p_pd_start_q, p_pd_len_q;
  logic [15:0] h_major_q, h_minor_q;
  logic [15:0] h_flen_q;
  logic [31:0] h_seq_q;
  logic [63:0] h_first_q;
  logic        pre_q;           // host job: inline PD words still to write into the builder
  logic [1:0]  pre_idx_q;
  logic [ADDR_W-1:0] wr_addr_q;
  logic        sof_seen_q, done_seen_q;
  logic        asm_last_q;
  // the slot copy: this job's reject PD came from elsewhere and the node lives on (p_copy_q);
  // copy_q: the E_PDDMA_CHUNK / E_PDDMA_WAIT loop writes that copy (from the shadow RAM)
  // rather than the request PD (from the assembler)
  logic        p_copy_q, copy_q;
  // an auto-reject's PD from the on-chip template: p_tmpl_q from S_MPA until the last word is
  // read (the slot p_tslot_q is in use meanwhile); tw_q the next word to address, tv_q/ti_q
  // the word addressed in the cycle before, whose data is on tmpl_rd_data
  logic        p_tmpl_q, tv_q;
  logic [NL_LOG2:0] p_tslot_q;
  logic [6:0]  tw_q, ti_q;
  logic [3:0]  copy_row_q, copy_rows_q;   // 64-byte rows: this one, and how many
  logic [3:0]  copy_last_beats_q;         // 8-byte beats of the last row (1..8)

  // ------------------------------------------------------------------ helpers
  // the reference for dl_rtx_q below (assertions only)
  function automatic logic [31:0] rto_for(input logic [31:0] base, input logic [31:0] cap,
                                          input logic [3:0] n);
    logic [47:0] t;
    t = {16'd0, base} << n;
    rto_for = (t > {16'd0, cap}) ? cap : t[31:0];
  endfunction

  // The deadline after the (rtx_cnt+1)-th retransmission, now + RTO. Only a timer job uses
  // it (S_DISPATCH, the cycle after its context arrives), so it is computed from the context
  // as it is read and registered with ctx_q, with `now` one edge ahead (+ now_inc): neither
  // the shift and clamp nor the add sit in front of the plan's deadline mux.
  // The clamp is decided ahead, from the two configuration registers alone: rto_cap_q[k] says
  // that rto_init << (k+1) exceeds rto_max (rto_init * 2^m > rto_max exactly when rto_init >
  // rto_max >> m), so a timer job only selects a precomputed bit and shifts by the count. A
  // register write is seen one cycle later, long before a timer can use it.
  logic [31:0] dl_rtx_q;       // now + (rto_init << (rtx_cnt + 1)), for S_DISPATCH
  logic        rtx_cap_q;      // ... clamped: the deadline is dl_max_q (now + rto_max) instead
  logic [15:0] rto_cap_q;
  logic [3:0]  rto_n;
  logic [31:0] rto_init_x2;
  assign rto_n       = ctx_rsp_rdata[bouncer_regs_pkg::CM_CTX_RTX_CNT_LSB +: 4];
  assign rto_init_x2 = {rto_init[30:0], 1'b0};
  always_ff @(posedge clk) begin
    for (int k = 0; k < 16; k++) rto_cap_q[k] <= (rto_init > (rto_max >> (k + 1)));
    if (state_q == S_CTX_WAIT && ctx_rsp_valid) begin
      dl_rtx_q  <= now + (rto_init_x2 << rto_n) + {31'd0, now_inc};
      rtx_cap_q <= rto_cap_q[rto_n];
    end
  end

  // Deadlines `now + timeout`, one register per timeout, each loaded with now + timeout +
  // now_inc (the timer's `now` one edge ahead, as the add's carry-in), so it holds exactly
  // now + timeout in every cycle; a register write is seen one cycle late, long before a job
  // can arm a timer with it. The 32-bit adds are therefore not in front of the plans'
  // deadline muxes (S_SYN_PLAN, S_DISPATCH, S_MPA, ...).
  // now_p1_q is now + 1 the same way (for cx_due_q).
  logic [31:0] dl_rto_q, dl_max_q, dl_mpa_q, dl_reasm_q, dl_fin_q, dl_tw_q, now_p1_q;
  always_ff @(posedge clk) begin
    now_p1_q <= now + 32'd1 + {31'd0, now_inc};
    dl_reasm_q <= now + mpa_reasm_timeout + {31'd0, now_inc};
    dl_rto_q <= now + rto_init + {31'd0, now_inc};
    dl_max_q <= now + rto_max + {31'd0, now_inc};
    dl_mpa_q <= now + mpa_timeout + {31'd0, now_inc};
    dl_fin_q <= now + fin_timeout + {31'd0, now_inc};
    dl_tw_q  <= now + time_wait + {31'd0, now_inc};
  end

  // The window we offer: TCP_WND bytes, in the SYN-ACK as is; once window scaling is in effect
  // (WS_OK), the field of later segments is TCP_WND >> TCP_WSCALE rounded up, so it never
  // offers less than TCP_WND. Computed from the two configuration registers in two register
  // stages (a write takes effect two cycles later, long before a SYN can use it): the rounding
  // add, then the shift; wnd_ws_bytes_q is the byte window that field stands for (RFC 5961's
  // in-window test of a RST).
  logic [16:0] wnd_round_q;
  logic [15:0] wnd_scaled_q;
  logic [30:0] wnd_ws_bytes_q;
  always_ff @(posedge clk) begin
    wnd_round_q    <= {1'b0, tcp_wnd} + 17'((17'd1 << tcp_wscale) - 17'd1);
    wnd_scaled_q   <= 16'(wnd_round_q >> tcp_wscale);
    wnd_ws_bytes_q <= 31'({15'd0, wnd_scaled_q} << tcp_wscale);
  end

  // The IRD/ORD word of a reply against irdma's initiator (irdma_negotiate_mpa_v2_ird_ord,
  // which runs on rejects too and answers a word it refuses with a RST): the peer-to-peer bit
  // and a Write or Read RTR bit; unless either 14-bit field is 0x3FFF, no IRD 0 with the Read
  // RTR bit and no ORD above the initiator's IRD (`req`'s ctrl_ird).
  /* verilator lint_off UNUSEDSIGNAL */  // only the request's IRD counts
  function automatic logic io_safe(input logic [31:0] w, input logic [31:0] req);
    logic none;
    none = (w[29:16] == 14'h3FFF) || (w[13:0] == 14'h3FFF);
    io_safe = w[31] && (w[15] || w[14]) &&
              (none || (!(w[29:16] == 14'd0 && w[14]) && (w[13:0] <= req[29:16])));
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // Facts about the context, computed from ctx_rsp_rdata as it is read (S_CTX_WAIT) and
  // registered with ctx_q, so the 8- and 32-bit compares and the window subtractions do not
  // sit in front of the plans (S_DISPATCH). Only S_DISPATCH uses them, from the context as
  // read and the job's own record (r_*), which do not change in between; the assertions
  // below check them against ctx_q.
  /* verilator lint_off UNUSEDSIGNAL */  // a view of ctx_rsp_rdata; a few fields are used
  bouncer_regs_pkg::cm_ctx_t ctx_rd;
  /* verilator lint_on UNUSEDSIGNAL */
  logic        cx_rev_ok_q, cx_enh_q, cx_in_order_q, cx_all_acked_q, cx_syn_dup_q;
  logic        cx_ack_ok_q;   // acceptable ACK (see plan_rx), compared in S_CTX_WAIT
  logic        cx_rst_inwin_q;  // RCV.NXT <= SEG.SEQ < RCV.NXT + RCV.WND (RFC 5961 3.2)
  logic        cx_io_bad_q;     // a host reject's IRD/ORD word fails io_safe on this request
  logic        cx_reasm_sooner_q;  // now + MPA_REASM_TIMEOUT comes before DEADLINE
  logic        hx_slot_q;       // a host reject's PD_ADDR is the node's slot
  logic        cx_pd_long_q;    // a host reject's PD_Length on the wire over MPA_PD_MAX
  logic [15:0] cx_rej_ipid_q;   // IP ID of the reject's first segment: IP_ID - REJ_SEGS
  // A timer job's "due" (now reached the deadline) in S_DISPATCH, the next cycle: `now` is
  // then now + now_inc, so it is the compare against now or against now + 1 (now_p1_q), both
  // taken in S_CTX_WAIT, picked by now_inc.
  logic        cx_due_q;
  assign ctx_rd = ctx_rsp_rdata;
  always_ff @(posedge clk) begin
    if (state_q == S_CTX_WAIT && ctx_rsp_valid) begin
      cx_rev_ok_q    <= (ctx_rd.req_rev == 8'd1) || (ctx_rd.req_rev == 8'd2);
      cx_enh_q       <= (ctx_rd.req_rev == 8'd2) && ctx_rd.req_flags[4];
      cx_in_order_q  <= (r_seq == ctx_rd.rcv_nxt);
      cx_all_acked_q <= (r_ack == ctx_rd.snd_nxt);
      cx_syn_dup_q   <= (r_seq_p1 == ctx_rd.rcv_nxt);
      // for ISS + 1 <= SEG.ACK <= SND.NXT: both relative to ISS + 1 (see plan_rx)
      cx_ack_ok_q    <= (r_ack + ~ctx_rd.iss) <= (ctx_rd.snd_nxt + ~ctx_rd.iss);
      cx_rst_inwin_q <= ctx_rd.ws_ok ? ((r_seq - ctx_rd.rcv_nxt) < {1'b0, wnd_ws_bytes_q})
                                     : ((r_seq - ctx_rd.rcv_nxt) < {16'd0, tcp_wnd});
      cx_io_bad_q    <= h_ird_ord_valid && ctx_rd.req_rev == 8'd2 && ctx_rd.req_flags[4] &&
                        !io_safe(h_ird_ord, ctx_rd.req_ird_ord);
      cx_reasm_sooner_q <= $signed(dl_reasm_q - ctx_rd.deadline) < 0;
      hx_slot_q      <= (h_pd_addr == slot_addr_q);
      cx_rej_ipid_q  <= ctx_rd.ip_id - {12'd0, ctx_rd.rej_segs};
      cx_pd_long_q   <= (ctx_rd.req_rev == 8'd2 && ctx_rd.req_flags[4])
                        ? ({6'd0, h_pd_len} > 16'(bouncer_regs_pkg::MPA_PD_MAX - 4))
                        : ({6'd0, h_pd_len} > 16'(bouncer_regs_pkg::MPA_PD_MAX));
      cx_due_q       <= ctx_rd.ctx_valid && ctx_rd.timer_on
                        && (now_inc ? !($signed(now_p1_q - ctx_rd.deadline) < 0)
                                    : !($signed(now - ctx_rd.deadline) < 0));
    end
  end

  // a node still counts against its listener's backlog
  logic counted;
  assign counted = ctx_q.hw_node && !ctx_q.auto_rej && !ctx_q.rejected &&
                   (ctx_q.state == bouncer_regs_pkg::CM_STATE_SYN_RCVD || ctx_q.state == bouncer_regs_pkg::CM_STATE_ESTABLISHED ||
                    ctx_q.state == bouncer_regs_pkg::CM_STATE_MPAREQ_RCVD || ctx_q.state == bouncer_regs_pkg::CM_STATE_PEER_RESET);

  // request facts
  logic        enh_req, pd_too_long;
  assign enh_req  = (asm_rsp_rev == 8'd2) && asm_rsp_flags[4];
  // the reject's PD_Length on the wire (h_pd_len, + 4 for the IRD/ORD word of an enhanced
  // request) over MPA_PD_MAX, compared in S_CTX_WAIT (cx_pd_long_q)
  assign pd_too_long = cx_pd_long_q;

  // The segment's end, added as the record is taken (r_*), so the adds are not in front of
  // the plans: r_seg_end is the sequence number after its data, r_seg_end_sf after its data,
  // SYN and FIN (what a RST in reply acknowledges).
  logic [31:0] r_seg_end, r_seg_end_sf;

  logic [ADDR_W-1:0] slot_addr, slot_addr_q;
  assign slot_addr = pd_base + {{(ADDR_W-ID_W-9){1'b0}}, id_q, 9'd0};
  // the same, one cycle late, for the compare with a host reject's PD_ADDR (hx_slot_q): the
  // 64-bit add and the 64-bit equality are not one path. id_q of a host job is set at intake,
  // two cycles before S_CTX_WAIT (asserted below); PD_BASE does not change while enabled.
  always_ff @(posedge clk) slot_addr_q <= slot_addr;

  // a context for frames to a peer we hold no node for (RST to a stray segment)
  bouncer_regs_pkg::cm_ctx_t stray_ctx;
  always_comb begin
    stray_ctx          = '0;
    stray_ctx.rem_mac  = r_eth_src;
    stray_ctx.loc_mac  = r_eth_dst;
    stray_ctx.vlan_en  = r_vlan;
    stray_ctx.vlan_tci = r_vlan_tci;
    stray_ctx.loc_ip   = r_ip_dst;
    stray_ctx.rem_ip   = r_ip_src;
    stray_ctx.loc_port = r_dport;
    stray_ctx.rem_port = r_sport;
    stray_ctx.rcv_wnd  = tcp_wnd;
    stray_ctx.ttl      = 8'd64;
    stray_ctx.tos      = r_tos;
  end

  // ISN of the SYN being taken: requested from bouncer_isn_hash as soon as the engine is in
  // S_CT_INSERT (the hash's 11 cycles overlap the connection-table insert), taken into isn_q
  // in S_ISN_WAIT. isn_sent_q: the request for this SYN is out. A SYN dropped after its
  // request (bucket full) leaves a result behind: isn_skip_q counts such results, which are
  // taken and thrown away before S_ISN_WAIT takes one (the hash answers in request order).
  logic [31:0] isn_q;
  logic        isn_sent_q;
  logic [1:0]  isn_skip_q;

  // the node a SYN creates (S_SYN_PLAN); ISN from bouncer_isn_hash
  bouncer_regs_pkg::cm_ctx_t syn_ctx;
  logic lk_hit_q, lk_full_q;
  always_comb begin
    syn_ctx            = '0;
    syn_ctx.rem_mac    = r_eth_src;
    syn_ctx.loc_mac    = lst_loc_mac;
    syn_ctx.vlan_en    = r_vlan;
    syn_ctx.vlan_tci   = r_vlan_tci;
    syn_ctx.ctx_valid  = 1'b1;
    syn_ctx.loc_ip     = r_ip_dst;
    syn_ctx.rem_ip     = r_ip_src;
    syn_ctx.loc_port   = r_dport;
    syn_ctx.rem_port   = r_sport;
    syn_ctx.rcv_wnd    = r_ws ? wnd_scaled_q : tcp_wnd;
    syn_ctx.ws_ok      = r_ws;
    syn_ctx.peer_mss   = r_peer_mss;
    syn_ctx.ttl        = lst_ttl;
    syn_ctx.tos        = lst_tos;
    syn_ctx.snd_nxt    = isn_q + 32'd1;
    syn_ctx.rcv_nxt    = r_seq + 32'd1;
    syn_ctx.ip_id      = isn_q[31:16] + 16'd1;
    syn_ctx.state      = bouncer_regs_pkg::CM_STATE_SYN_RCVD;
    syn_ctx.fin_policy = lst_fin_policy;
    syn_ctx.listener   = 4'(lst_q);
    syn_ctx.auto_rej   = lk_full_q;     // BACKLOG mode, over the backlog: auto-reject
    syn_ctx.timer_on   = 1'b1;
    syn_ctx.deadline   = dl_rto_q;
    syn_ctx.iss        = isn_q;
    syn_ctx.hw_node    = 1'b1;
  end

  // ------------------------------------------------------------------ job selection
  // With `enable` low no new segment or timer job starts, but a host reject still does: the
  // SQ engine stops fetching WQEs then, and the one it has fetched must complete.
  logic take_rx, take_host, take_tmr, rec_v, exp_v;
  assign rec_v = s_rec_valid && enable;
  assign exp_v = s_exp_valid && enable;
  always_comb begin
    take_rx = 1'b0; take_host = 1'b0; take_tmr = 1'b0;
    if (state_q == S_IDLE) begin
      case (rr_q)
        2'd0: if (rec_v) take_rx = 1'b1;
              else if (s_hrej_valid) take_host = 1'b1;
              else if (exp_v) take_tmr = 1'b1;
        2'd1: if (s_hrej_valid) take_host = 1'b1;
              else if (exp_v) take_tmr = 1'b1;
              else if (rec_v) take_rx = 1'b1;
        default: if (exp_v) take_tmr = 1'b1;
              else if (rec_v) take_rx = 1'b1;
              else if (s_hrej_valid) take_host = 1'b1;
      endcase
    end
  end
  assign s_rec_ready  = take_rx;
  assign s_hrej_ready = take_host;
  assign s_exp_ready  = take_tmr;

  // ------------------------------------------------------------------ plans
  // Each plan_* block computes the whole decision of one job kind from the gathered state;
  // the state machine copies it into the p_* registers in one cycle.
  typedef struct packed {
    logic        ctrl_a;
    logic [1:0]  kind_a;
    logic [31:0] seq_a, ack_a;
    logic [15:0] ipid_a;
    logic        rej, rej_fin, rej_iov, rej_first, rst_after;
    logic [9:0]  rej_len;
    logic [31:0] rej_io, rej_seq;
    logic [15:0] rej_ipid;
    logic        evt;
    logic [7:0]  evt_code, evt_reason;
    logic        free, ctxwr, tmr, append, pddma;
    logic [15:0] major, minor;
    logic [27:0] stat;
    logic        pinc, pdec;
  } plan_t;

  plan_t    pl_rx, pl_mpa, pl_host, pl_tmr;
  /* verilator lint_off UNUSEDSIGNAL */  // fields used only while planning
  plan_t    p_q;
  /* verilator lint_on UNUSEDSIGNAL */
  bouncer_regs_pkg::cm_ctx_t  nc_rx, nc_mpa, nc_host, nc_tmr;

  // ---- RX segment on a known node (TCP state machine, passive side)
  always_comb begin : plan_rx
    logic ack_ok, all_acked, in_order;
    logic [3:0] st;
    pl_rx = '0;
    nc_rx = ctx_q;
    st    = ctx_q.state;
    in_order  = cx_in_order_q;    // r_seq == RCV.NXT
    all_acked = cx_all_acked_q;   // r_ack == SND.NXT
    // acceptable: ISS + 1 <= SEG.ACK <= SND_NXT (RFC 5961 5.2 with SND.UNA - MAX.SND.WND
    // taken as ISS + 1: an ACK of less than the SYN-ACK, or from the far past, is not):
    // (SEG.ACK - ISS - 1) <= (SND.NXT - ISS - 1), differences and compare taken in S_CTX_WAIT
    ack_ok    = cx_ack_ok_q;
    // every reply below that is an ACK uses the current numbers
    pl_rx.kind_a = K_ACK;
    pl_rx.seq_a  = ctx_q.snd_nxt;
    pl_rx.ack_a  = ctx_q.rcv_nxt;
    pl_rx.ipid_a = ctx_q.ip_id;
    if (!ctx_q.ctx_valid || st == bouncer_regs_pkg::CM_STATE_PEER_RESET) begin
      // nothing to do: a RST already ended the exchange; the host's reject frees the node.
      // The segment is counted as one that fits no window.
      pl_rx.stat[ST_OOW] = 1'b1;
    end else if (r_flags[2]) begin                                  // RST
      if (in_order) begin
        pl_rx.stat[ST_RST_RX] = 1'b1;
        if (st == bouncer_regs_pkg::CM_STATE_MPAREQ_RCVD && !ctx_q.rejected) begin
          nc_rx.state    = bouncer_regs_pkg::CM_STATE_PEER_RESET;
          nc_rx.timer_on = 1'b0;
          pl_rx.ctxwr    = 1'b1;
          pl_rx.tmr      = 1'b1;
          pl_rx.evt      = ctx_q.hosted;
          pl_rx.evt_code = bouncer_regs_pkg::AEQ_EVENT_RESET;
        end else begin
          pl_rx.free     = 1'b1;
          pl_rx.evt      = ctx_q.hosted;
          pl_rx.evt_code = bouncer_regs_pkg::AEQ_EVENT_RESET;
        end
      end else if (cx_rst_inwin_q) begin
        // in the window but not exactly RCV.NXT: a challenge ACK (RFC 5961 3.2); a peer that
        // really reset answers it with a RST at RCV.NXT, a blind attacker cannot
        pl_rx.stat[ST_OOW]    = 1'b1;
        pl_rx.stat[ST_ACK_TX] = 1'b1;
        pl_rx.ctrl_a          = 1'b1;
      end else begin
        pl_rx.stat[ST_OOW] = 1'b1;   // outside the window: dropped (RFC 5961 3.2)
      end
    end else if (r_flags[1]) begin                                  // SYN
      if (st == bouncer_regs_pkg::CM_STATE_SYN_RCVD && cx_syn_dup_q) begin   // r_seq == RCV.NXT - 1
        pl_rx.stat[ST_SYN_DUP] = 1'b1;                              // same SYN again
        pl_rx.ctrl_a = 1'b1;
        pl_rx.kind_a = K_SYNACK;
        pl_rx.seq_a  = ctx_q.iss;
        pl_rx.ipid_a = ctx_q.ip_id - 16'd1;
      end else begin
        pl_rx.stat[ST_OOW]     = 1'b1;                              // challenge ACK
        pl_rx.stat[ST_ACK_TX]  = 1'b1;
        pl_rx.ctrl_a = 1'b1;
      end
    end else if (!in_order) begin
      pl_rx.stat[ST_OOW]    = 1'b1;                                 // duplicate or future
      pl_rx.stat[ST_ACK_TX] = 1'b1;
      pl_rx.ctrl_a          = 1'b1;
    end else if (!r_flags[4]) begin
      pl_rx.stat[ST_OOW] = 1'b1;                                    // no ACK: dropped
    end else if (!ack_ok) begin
      pl_rx.stat[ST_OOW]    = 1'b1;                                 // acks unsent data
      pl_rx.stat[ST_ACK_TX] = 1'b1;
      pl_rx.ctrl_a          = 1'b1;
    end else begin
      // ---- ACK
      case (st)
        bouncer_regs_pkg::CM_STATE_SYN_RCVD: if (all_acked) begin
          nc_rx.state     = bouncer_regs_pkg::CM_STATE_ESTABLISHED;
          nc_rx.rtx_cnt   = '0;
          nc_rx.timer_on  = 1'b1;
          nc_rx.deadline  = dl_mpa_q;
          pl_rx.tmr       = 1'b1;
          pl_rx.stat[ST_ESTAB] = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_REJ_SENT: if (all_acked) begin                       // siw-safe: now the FIN
          pl_rx.ctrl_a   = 1'b1;
          pl_rx.kind_a   = K_FIN;
          pl_rx.seq_a    = ctx_q.snd_nxt;
          pl_rx.ipid_a   = ctx_q.ip_id;
          nc_rx.snd_nxt  = ctx_q.snd_nxt + 32'd1;
          nc_rx.ip_id    = ctx_q.ip_id + 16'd1;
          // a FIN in this very segment makes it a passive close too
          nc_rx.state    = (ctx_q.peer_fin || (r_flags[0] && r_len == 16'd0))
                         ? bouncer_regs_pkg::CM_STATE_LAST_ACK : bouncer_regs_pkg::CM_STATE_FIN_WAIT1;
          nc_rx.rtx_cnt  = '0;
          nc_rx.timer_on = 1'b1;
          nc_rx.deadline = dl_rto_q;
          pl_rx.tmr      = 1'b1;
          pl_rx.stat[ST_FIN_TX] = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_FIN_WAIT1: if (all_acked) begin
          nc_rx.state    = bouncer_regs_pkg::CM_STATE_FIN_WAIT2;
          nc_rx.rtx_cnt  = '0;
          nc_rx.timer_on = 1'b1;
          nc_rx.deadline = dl_fin_q;
          pl_rx.tmr      = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_CLOSING: if (all_acked) begin
          nc_rx.state    = bouncer_regs_pkg::CM_STATE_TIME_WAIT;
          nc_rx.timer_on = 1'b1;
          nc_rx.deadline = dl_tw_q;
          pl_rx.tmr      = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_LAST_ACK: if (all_acked) begin
          pl_rx.free     = 1'b1;
          pl_rx.evt      = ctx_q.hosted;
          pl_rx.evt_code = bouncer_regs_pkg::AEQ_EVENT_CLOSED;
        end
        default: ;
      endcase
      // ---- data: only the MPA request, only while collecting it
      if (r_len != 16'd0) begin
        if (nc_rx.state == bouncer_regs_pkg::CM_STATE_ESTABLISHED && !pl_rx.free) begin
          pl_rx.append = 1'b1;        // S_ASM_CMD/S_MPA take it from here
        end else begin
          pl_rx.stat[ST_OOW]    = 1'b1;   // data we never accept: not acknowledged
          pl_rx.stat[ST_ACK_TX] = !pl_rx.ctrl_a;
          pl_rx.ctrl_a          = 1'b1;
        end
      end else if (r_flags[0] && !pl_rx.free && ctx_q.peer_fin) begin
        // a FIN after their FIN: no sequence space follows a FIN, so it is not taken; it is
        // answered with the current numbers (an ACK, or the FIN this ACK released)
        pl_rx.stat[ST_OOW] = 1'b1;
        if (!pl_rx.ctrl_a) begin
          pl_rx.ctrl_a = 1'b1;
          pl_rx.stat[ST_ACK_TX] = 1'b1;
        end
      end else if (r_flags[0] && !pl_rx.free) begin                 // FIN, in order
        nc_rx.rcv_nxt  = ctx_q.rcv_nxt + 32'd1;
        nc_rx.peer_fin = 1'b1;
        case (nc_rx.state)
          bouncer_regs_pkg::CM_STATE_SYN_RCVD, bouncer_regs_pkg::CM_STATE_ESTABLISHED: begin                  // closed before a request
            pl_rx.ctrl_a   = 1'b1;
            pl_rx.kind_a   = K_RST;
            pl_rx.seq_a    = ctx_q.snd_nxt;
            pl_rx.ack_a    = ctx_q.rcv_nxt + 32'd1;
            pl_rx.free     = 1'b1;
            pl_rx.stat[ST_RST_TX] = 1'b1;
          end
          bouncer_regs_pkg::CM_STATE_FIN_WAIT1: begin
            nc_rx.state = bouncer_regs_pkg::CM_STATE_CLOSING;
          end
          bouncer_regs_pkg::CM_STATE_FIN_WAIT2: begin
            nc_rx.state    = bouncer_regs_pkg::CM_STATE_TIME_WAIT;
            nc_rx.timer_on = 1'b1;
            nc_rx.deadline = dl_tw_q;
            pl_rx.tmr      = 1'b1;
          end
          default: ;                                                // MPAREQ_RCVD, REJ_SENT: noted
        endcase
        if (!pl_rx.free) begin
          if (pl_rx.kind_a == K_FIN) begin
            pl_rx.ack_a = ctx_q.rcv_nxt + 32'd1;   // our FIN acknowledges theirs
          end else begin
            pl_rx.ctrl_a = 1'b1;
            pl_rx.kind_a = K_ACK;
            pl_rx.seq_a  = nc_rx.snd_nxt;
            pl_rx.ack_a  = ctx_q.rcv_nxt + 32'd1;
            pl_rx.ipid_a = nc_rx.ip_id;
            pl_rx.stat[ST_ACK_TX] = 1'b1;
          end
        end
      end
      if (!pl_rx.free && !pl_rx.append) pl_rx.ctxwr = 1'b1;
    end
    if (pl_rx.free) begin
      pl_rx.pdec = counted;
      pl_rx.stat[ST_CLOSED] = 1'b1;
    end
  end

  // ---- the MPA request's decisions, taken one cycle ahead of S_MPA (depth budget)
  // The listener fields are registered (lq_*: the LUT-RAM read and its index mux stay out of the
  // plan) and the request's checks are registered from them (mq_*). The cycle before S_MPA is
  // always S_ASM_RSP with asm_rsp_valid, and the two before that are S_ASM_CMD / S_ASM_RSP or
  // S_DISPATCH: the response is held until S_MPA takes it, ctx_q does not change after
  // S_DISPATCH and lst_rd_idx is ctx_q.listener from S_DISPATCH on, so in S_MPA the mq_* and
  // lq_* registers hold what S_MPA would read and compute itself (asserted below; a listener
  // rewritten by the control queue in those two cycles takes effect with the next request).
  logic [1:0]        lq_fin_policy_q, lq_auto_reject_q;
  logic              lq_aeq_rst_q;
  logic [13:0]       lq_max_ird_q, lq_max_ord_q;
  logic [9:0]        lq_tmpl_len_q;
  logic              lq_tmpl_iov_q;
  logic [31:0]       lq_tmpl_io_q;
  logic              lq_tmpl_bank_q;
  logic [NL_LOG2-1:0] lq_idx_q, mq_idx_q;
  logic [7:0]        mc_err, mq_err_q;
  logic              mc_complete, mq_complete_q, mq_autorej_q;
  logic              mq_refuse_q;       // no AEQ room for this request (see the AEQ section)
  logic              mq_tmpl_io_ok_q;   // the template's IRD/ORD word passes io_safe here
  always_comb begin : mpa_checks
    mc_err      = bouncer_regs_pkg::MPA_ERROR_NONE;
    mc_complete = asm_rsp_hdr_valid && (asm_rsp_total == 16'd20 + asm_rsp_pd_len);
    if (asm_rsp_hdr_valid) begin
      if (!asm_rsp_key_ok) mc_err = bouncer_regs_pkg::MPA_ERROR_BAD_KEY;
      else if (asm_rsp_rev == 8'd0 || asm_rsp_rev > 8'd2) mc_err = bouncer_regs_pkg::MPA_ERROR_BAD_REV;
      else if (asm_rsp_pd_len > 16'(bouncer_regs_pkg::MPA_PD_MAX)) mc_err = bouncer_regs_pkg::MPA_ERROR_PD_TOO_LONG;
      else if (asm_rsp_total > 16'd20 + asm_rsp_pd_len) mc_err = bouncer_regs_pkg::MPA_ERROR_TOO_LONG;
      else if (enh_req && asm_rsp_pd_len < 16'd4) mc_err = bouncer_regs_pkg::MPA_ERROR_BAD_REV;
    end
  end
  always_ff @(posedge clk) begin
    lq_idx_q         <= lst_rd_idx;
    lq_fin_policy_q  <= lst_fin_policy;
    lq_auto_reject_q <= lst_auto_reject;
    lq_aeq_rst_q     <= lst_aeq_full_rst;
    lq_max_ird_q     <= lst_max_ird;
    lq_max_ord_q     <= lst_max_ord;
    lq_tmpl_len_q    <= lst_tmpl_len;
    lq_tmpl_iov_q    <= lst_tmpl_ird_ord_valid;
    lq_tmpl_io_q     <= lst_tmpl_ird_ord;
    lq_tmpl_bank_q   <= lst_tmpl_bank;
    mq_idx_q         <= lq_idx_q;
    mq_err_q         <= mc_err;
    mq_complete_q    <= mc_complete;
    mq_tmpl_io_ok_q  <= io_safe(lq_tmpl_io_q, asm_rsp_ird_ord);
    mq_refuse_q      <= !room_req_q;
    mq_autorej_q     <= ctx_q.auto_rej || lq_auto_reject_q == bouncer_regs_pkg::AUTO_REJECT_ALL ||
                        (lq_auto_reject_q == bouncer_regs_pkg::AUTO_REJECT_IRD_ORD && enh_req &&
                         (asm_rsp_ird_ord[29:16] > lq_max_ird_q ||
                          asm_rsp_ird_ord[13:0] > lq_max_ord_q));
  end

  // ---- the MPA request after an append (S_MPA): error, incomplete, host or auto
  always_comb begin : plan_mpa
    logic [7:0]  err;
    logic        complete, autorej;
    logic [1:0]  apol;
    apol = (lq_fin_policy_q == bouncer_regs_pkg::FIN_POLICY_DEFAULT)
         ? bouncer_regs_pkg::FIN_POLICY_SIW_SAFE : lq_fin_policy_q;
    pl_mpa = '0;
    nc_mpa = ctx_q;
    err      = mq_err_q;
    complete = mq_complete_q;
    autorej  = mq_autorej_q;
    pl_mpa.kind_a = K_ACK;
    pl_mpa.seq_a  = ctx_q.snd_nxt;
    pl_mpa.ack_a  = r_seg_end;
    pl_mpa.ipid_a = ctx_q.ip_id;
    nc_mpa.reasm_on  = 1'b1;
    nc_mpa.reasm_idx = 4'(asm_rsp_buf);
    nc_mpa.rx_bytes  = (asm_rsp_total > 16'd1023) ? 10'd1023 : asm_rsp_total[9:0];
    if (!asm_rsp_ok) begin
      // no reassembly buffer: the segment is dropped unacknowledged, the peer resends it
      pl_mpa.stat[ST_OOW] = 1'b1;
    end else if (err != bouncer_regs_pkg::MPA_ERROR_NONE) begin
      nc_mpa.reasm_on   = 1'b0;             // S_MPA frees the buffer
      pl_mpa.ctrl_a     = 1'b1;
      pl_mpa.kind_a     = K_RST;
      pl_mpa.free       = 1'b1;
      // an event for no live node: only while the AEQ has room to spare, else counted
      pl_mpa.evt        = room_err_q;
      pl_mpa.stat[ST_EVT_COALESCED] = !room_err_q;
      pl_mpa.evt_code   = bouncer_regs_pkg::AEQ_EVENT_MPA_ERROR;
      pl_mpa.evt_reason = err;
      pl_mpa.pdec       = counted;
      pl_mpa.stat[ST_MPA_ERR] = 1'b1;
      pl_mpa.stat[ST_RST_TX]  = 1'b1;
      pl_mpa.stat[ST_CLOSED]  = 1'b1;
    end else if (!complete) begin
      nc_mpa.rcv_nxt = r_seg_end;
      // the first piece of a split request: it must be whole within MPA_REASM_TIMEOUT (it
      // holds a shared reassembly buffer), or by the node's deadline if that comes first
      if (!ctx_q.reasm_on && cx_reasm_sooner_q) nc_mpa.deadline = dl_reasm_q;
      pl_mpa.ctrl_a  = 1'b1;
      pl_mpa.ctxwr   = 1'b1;
      pl_mpa.tmr     = 1'b1;
      pl_mpa.stat[ST_ACK_TX] = 1'b1;
    end else begin
      nc_mpa.rcv_nxt     = r_seg_end;
      nc_mpa.req_rev     = asm_rsp_rev;
      nc_mpa.req_flags   = asm_rsp_flags;
      nc_mpa.req_ird_ord = enh_req ? asm_rsp_ird_ord : 32'd0;
      nc_mpa.reasm_on    = 1'b0;
      nc_mpa.timer_on    = 1'b0;
      nc_mpa.state       = bouncer_regs_pkg::CM_STATE_MPAREQ_RCVD;
      pl_mpa.ctxwr       = 1'b1;
      pl_mpa.tmr         = 1'b1;
      pl_mpa.stat[ST_MPA_REQ] = 1'b1;
      // no AEQ room for the request and the terminal event it would owe the host: the
      // listener's policy decides, auto-reject (below) or a RST
      if (!autorej && mq_refuse_q) begin
        autorej = !lq_aeq_rst_q;
        pl_mpa.stat[ST_AEQ_REFUSED] = 1'b1;
      end
      if (!autorej && mq_refuse_q) begin
        nc_mpa.reasm_on = 1'b0;
        pl_mpa.ctxwr    = 1'b0;
        pl_mpa.tmr      = 1'b0;
        pl_mpa.ctrl_a   = 1'b1;
        pl_mpa.kind_a   = K_RST;
        pl_mpa.free     = 1'b1;
        pl_mpa.pdec     = counted;
        pl_mpa.stat[ST_RST_TX]  = 1'b1;
        pl_mpa.stat[ST_CLOSED]  = 1'b1;
      end else if (autorej) begin
        // the listener's template and FIN policy, as if the host had rejected at once
        nc_mpa.rejected   = 1'b1;
        nc_mpa.fin_policy = apol;
        nc_mpa.rej_pd_len = lq_tmpl_len_q;
        // a template word this request's initiator would refuse: the default word instead
        nc_mpa.rej_ird_ord_valid = lq_tmpl_iov_q && mq_tmpl_io_ok_q;
        if (lq_tmpl_iov_q && mq_tmpl_io_ok_q) nc_mpa.req_ird_ord = lq_tmpl_io_q;
        nc_mpa.rej_fin    = (apol == bouncer_regs_pkg::FIN_POLICY_IRDMA);
        nc_mpa.ip_id      = ctx_q.ip_id + 16'd1;   // + the segment count once it is out
        nc_mpa.rej_segs   = 4'd1;
        nc_mpa.rtx_cnt    = '0;
        nc_mpa.state      = (apol == bouncer_regs_pkg::FIN_POLICY_IRDMA)
                          ? bouncer_regs_pkg::CM_STATE_FIN_WAIT1 : bouncer_regs_pkg::CM_STATE_REJ_SENT;
        nc_mpa.timer_on   = 1'b1;
        nc_mpa.deadline   = dl_rto_q;
        pl_mpa.rej_fin    = (apol == bouncer_regs_pkg::FIN_POLICY_IRDMA);
        pl_mpa.stat[ST_FIN_TX] = (apol == bouncer_regs_pkg::FIN_POLICY_IRDMA);
        if (apol == bouncer_regs_pkg::FIN_POLICY_ABORT) begin
          pl_mpa.rst_after = 1'b1;
          pl_mpa.free      = 1'b1;
          pl_mpa.ctxwr     = 1'b0;
          pl_mpa.stat[ST_RST_TX] = 1'b1;
          pl_mpa.stat[ST_CLOSED] = 1'b1;
        end
        pl_mpa.rej       = 1'b1;
        pl_mpa.rej_first = 1'b1;
        pl_mpa.rej_len   = lq_tmpl_len_q;
        pl_mpa.rej_iov   = lq_tmpl_iov_q && mq_tmpl_io_ok_q;
        pl_mpa.rej_io    = lq_tmpl_io_q;
        pl_mpa.rej_seq   = ctx_q.snd_nxt;
        pl_mpa.rej_ipid  = ctx_q.ip_id;
        pl_mpa.pdec      = counted;
        nc_mpa.auto_rej  = 1'b1;
        pl_mpa.stat[ST_REJ_AUTO] = 1'b1;
      end else begin
        pl_mpa.pddma  = 1'b1;
        pl_mpa.ctrl_a = 1'b1;           // acknowledge the request while the host decides
        pl_mpa.evt    = 1'b1;
        pl_mpa.evt_code = bouncer_regs_pkg::AEQ_EVENT_CONNECT_REQUEST;
        nc_mpa.hosted = 1'b1;
        pl_mpa.stat[ST_ACK_TX] = 1'b1;
      end
    end
  end

  // ---- host reject
  always_comb begin : plan_host
    logic [1:0] pol;
    pl_host = '0;
    nc_host = ctx_q;
    pol = (h_fin_policy != bouncer_regs_pkg::FIN_POLICY_DEFAULT) ? h_fin_policy : ctx_q.fin_policy;
    if (pol == bouncer_regs_pkg::FIN_POLICY_DEFAULT) pol = bouncer_regs_pkg::FIN_POLICY_SIW_SAFE;
    if (!ctx_q.ctx_valid) begin
      pl_host.major = bouncer_regs_pkg::CQ_MAJOR_CTX; pl_host.minor = bouncer_regs_pkg::CQ_MINOR_NO_CONTEXT;
    end else if (ctx_q.state == bouncer_regs_pkg::CM_STATE_PEER_RESET && !ctx_q.rejected) begin
      pl_host.major = bouncer_regs_pkg::CQ_MAJOR_CTX; pl_host.minor = bouncer_regs_pkg::CQ_MINOR_PEER_RESET;
      pl_host.free  = 1'b1;
      pl_host.pdec  = counted;
      pl_host.stat[ST_REJ_LATE] = 1'b1;
      pl_host.stat[ST_CLOSED]   = 1'b1;
    end else if (ctx_q.rejected || ctx_q.state != bouncer_regs_pkg::CM_STATE_MPAREQ_RCVD) begin
      pl_host.major = bouncer_regs_pkg::CQ_MAJOR_CTX; pl_host.minor = bouncer_regs_pkg::CQ_MINOR_BAD_STATE;
    end else if (!cx_rev_ok_q) begin                                // req_rev not 1 or 2
      pl_host.major = bouncer_regs_pkg::CQ_MAJOR_CTX; pl_host.minor = bouncer_regs_pkg::CQ_MINOR_BAD_REV;
    end else if (pd_too_long) begin
      pl_host.major = bouncer_regs_pkg::CQ_MAJOR_WQE; pl_host.minor = bouncer_regs_pkg::CQ_MINOR_PD_TOO_LONG;
    end else if (cx_io_bad_q) begin
      pl_host.major = bouncer_regs_pkg::CQ_MAJOR_WQE; pl_host.minor = bouncer_regs_pkg::CQ_MINOR_BAD_IRD_ORD;
    end else begin
      pl_host.rej       = 1'b1;
      pl_host.rej_first = 1'b1;
      pl_host.rej_len   = h_pd_len;
      pl_host.rej_fin   = (pol == bouncer_regs_pkg::FIN_POLICY_IRDMA);
      pl_host.rej_iov   = h_ird_ord_valid;
      pl_host.rej_io    = h_ird_ord;
      pl_host.rej_seq   = ctx_q.snd_nxt;
      pl_host.rej_ipid  = ctx_q.ip_id;
      pl_host.pdec      = counted;
      pl_host.stat[ST_REJ_HOST] = 1'b1;
      pl_host.stat[ST_FIN_TX]   = (pol == bouncer_regs_pkg::FIN_POLICY_IRDMA);
      nc_host.rejected  = 1'b1;
      nc_host.fin_policy = pol;
      nc_host.rej_pd_len = h_pd_len;
      nc_host.rej_ird_ord_valid = h_ird_ord_valid;
      if (h_ird_ord_valid) nc_host.req_ird_ord = h_ird_ord;
      nc_host.rej_fin   = (pol == bouncer_regs_pkg::FIN_POLICY_IRDMA);
      nc_host.ip_id     = ctx_q.ip_id + 16'd1;    // + the segment count once it is out
      nc_host.rej_segs  = 4'd1;
      nc_host.rtx_cnt   = '0;
      // SND_NXT moves by the builder's seq_advance once the frame is out (E_REJ_WAIT)
      case (pol)
        bouncer_regs_pkg::FIN_POLICY_IRDMA: nc_host.state = ctx_q.peer_fin ? bouncer_regs_pkg::CM_STATE_LAST_ACK : bouncer_regs_pkg::CM_STATE_FIN_WAIT1;
        bouncer_regs_pkg::FIN_POLICY_ABORT: nc_host.state = ctx_q.state;
        default:          nc_host.state = bouncer_regs_pkg::CM_STATE_REJ_SENT;
      endcase
      if (pol == bouncer_regs_pkg::FIN_POLICY_ABORT) begin
        pl_host.rst_after = 1'b1;
        pl_host.free  = ctx_q.hw_node;
        pl_host.ctxwr = !ctx_q.hw_node;
        pl_host.evt   = ctx_q.hw_node && ctx_q.hosted;
        pl_host.evt_code   = bouncer_regs_pkg::AEQ_EVENT_CLOSED;
        pl_host.evt_reason = 8'd1;
        pl_host.stat[ST_RST_TX] = 1'b1;
        pl_host.stat[ST_CLOSED] = ctx_q.hw_node;
      end else begin
        pl_host.ctxwr = 1'b1;
        // host-written contexts (no peer model behind them) get no timer
        nc_host.timer_on = ctx_q.hw_node;
        nc_host.deadline = dl_rto_q;
        pl_host.tmr      = ctx_q.hw_node;
      end
    end
  end

  // ---- timer expiry
  always_comb begin : plan_tmr
    logic due, exhausted, rej_again;
    logic [3:0] st;
    pl_tmr = '0;
    nc_tmr = ctx_q;
    st = ctx_q.state;
    due       = cx_due_q;
    exhausted = (ctx_q.rtx_cnt >= rtx_max);
    rej_again = (st == bouncer_regs_pkg::CM_STATE_REJ_SENT) || ctx_q.rej_fin;
    pl_tmr.seq_a  = ctx_q.snd_nxt;
    pl_tmr.ack_a  = ctx_q.rcv_nxt;
    pl_tmr.ipid_a = ctx_q.ip_id;
    pl_tmr.kind_a = K_RST;
    if (due) begin
      case (st)
        bouncer_regs_pkg::CM_STATE_SYN_RCVD: if (exhausted) begin                        // irdma: just drop it
          pl_tmr.free = 1'b1;
          pl_tmr.stat[ST_RTX_EXH] = 1'b1;
        end else begin
          pl_tmr.ctrl_a = 1'b1;
          pl_tmr.kind_a = K_SYNACK;
          pl_tmr.seq_a  = ctx_q.iss;
          pl_tmr.ipid_a = ctx_q.ip_id - 16'd1;
          pl_tmr.stat[ST_RTX] = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_ESTABLISHED: begin                                    // no MPA request in time
          pl_tmr.ctrl_a = 1'b1;
          pl_tmr.free   = 1'b1;
          pl_tmr.stat[ST_MPA_TMO] = 1'b1;
          pl_tmr.stat[ST_RST_TX]  = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_REJ_SENT, bouncer_regs_pkg::CM_STATE_FIN_WAIT1, bouncer_regs_pkg::CM_STATE_CLOSING, bouncer_regs_pkg::CM_STATE_LAST_ACK: if (exhausted) begin
          pl_tmr.ctrl_a   = 1'b1;
          pl_tmr.free     = 1'b1;
          pl_tmr.evt      = ctx_q.hosted;
          pl_tmr.evt_code = bouncer_regs_pkg::AEQ_EVENT_RTX_EXHAUSTED;
          pl_tmr.stat[ST_RTX_EXH] = 1'b1;
          pl_tmr.stat[ST_RST_TX]  = 1'b1;
        end else if (rej_again) begin
          pl_tmr.rej      = 1'b1;
          pl_tmr.rej_len  = ctx_q.rej_pd_len;
          pl_tmr.rej_fin  = ctx_q.rej_fin;
          pl_tmr.rej_iov  = ctx_q.rej_ird_ord_valid;
          pl_tmr.rej_io   = ctx_q.req_ird_ord;
          pl_tmr.rej_seq  = ctx_q.iss + 32'd1;
          pl_tmr.rej_ipid = cx_rej_ipid_q;      // the first segment's, as it went out
          pl_tmr.stat[ST_RTX] = 1'b1;
        end else begin                                              // the bare FIN again
          pl_tmr.ctrl_a = 1'b1;
          pl_tmr.kind_a = K_FIN;
          pl_tmr.seq_a  = ctx_q.snd_nxt - 32'd1;
          pl_tmr.ipid_a = ctx_q.ip_id - 16'd1;
          pl_tmr.stat[ST_RTX] = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_FIN_WAIT2: begin
          pl_tmr.ctrl_a   = 1'b1;
          pl_tmr.free     = 1'b1;
          pl_tmr.evt      = ctx_q.hosted;
          pl_tmr.evt_code = bouncer_regs_pkg::AEQ_EVENT_TIMEOUT;
          pl_tmr.stat[ST_RST_TX] = 1'b1;
        end
        bouncer_regs_pkg::CM_STATE_TIME_WAIT: begin
          pl_tmr.free     = 1'b1;
          pl_tmr.evt      = ctx_q.hosted;
          pl_tmr.evt_code = bouncer_regs_pkg::AEQ_EVENT_CLOSED;
        end
        default: ;
      endcase
      if (!pl_tmr.free && (pl_tmr.ctrl_a || pl_tmr.rej)) begin     // a retransmission
        nc_tmr.rtx_cnt  = ctx_q.rtx_cnt + 4'd1;
        nc_tmr.deadline = rtx_cap_q ? dl_max_q : dl_rtx_q;
        pl_tmr.ctxwr    = 1'b1;
        pl_tmr.tmr      = 1'b1;
      end
      if (pl_tmr.free) begin
        pl_tmr.pdec = counted;
        pl_tmr.stat[ST_CLOSED] = 1'b1;
      end
    end
  end

  // ------------------------------------------------------------------ AEQ admission
  // The AEQ must never stop the engine: a full ring would stall host rejects, timers and every
  // other connection behind one host that stops polling. owed_q counts the events already
  // promised: one terminal event (CLOSED, RESET, RTX_EXHAUSTED or TIMEOUT) for each node whose
  // CONNECT_REQUEST was written. A request goes to the host only while the ring has room for
  // its CONNECT_REQUEST, its terminal event and all the owed ones (room_req_q: aeq_free >
  // owed + 2; the margin of one covers aeq_free's registered lag). Then free >= owed holds
  // whatever the host does, so a promised event never waits for a slot. Otherwise the
  // listener's AEQ_FULL_RST decides (plan_mpa): auto-reject with the template, or a RST.
  // An MPA_ERROR event belongs to no live node: it is written only while more than half of
  // the ring is free beyond the owed events (room_err_q), else only counted, so a stream of
  // malformed requests cannot take the slots requests need.
  logic [ID_W:0] owed_q;
  logic [16:0]   owed_p2_q, owed_half_q;
  logic          room_req_q, room_err_q;
  logic          evt_owes, evt_pays;
  assign evt_owes = evt_valid && evt_ready &&
                    p_q.evt_code == bouncer_regs_pkg::AEQ_EVENT_CONNECT_REQUEST;
  assign evt_pays = evt_valid && evt_ready &&
                    p_q.evt_code != bouncer_regs_pkg::AEQ_EVENT_CONNECT_REQUEST &&
                    p_q.evt_code != bouncer_regs_pkg::AEQ_EVENT_MPA_ERROR;
  always_ff @(posedge clk) begin
    if (evt_owes) owed_q <= owed_q + 1'b1;
    // a host-written context may carry HOSTED without a CONNECT_REQUEST: never below 0
    else if (evt_pays && owed_q != '0) owed_q <= owed_q - 1'b1;
    // two register stages (the add, then the compare), so neither sits behind the other
    owed_p2_q   <= 17'(owed_q) + 17'd2;
    owed_half_q <= 17'(owed_q) + {2'b00, aeq_half};
    room_req_q  <= {2'b00, aeq_free} > owed_p2_q;
    room_err_q  <= {2'b00, aeq_free} > owed_half_q;
    if (rst) begin
      owed_q      <= '0;
      owed_p2_q   <= '1;
      owed_half_q <= '1;
      room_req_q  <= 1'b0;
      room_err_q <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ event image
  bouncer_regs_pkg::aeqe_t ev;
  always_comb begin
    ev            = '0;
    ev.rem_ip     = nctx_q.rem_ip;
    ev.loc_ip     = nctx_q.loc_ip;
    ev.rem_port   = nctx_q.rem_port;
    ev.loc_port   = nctx_q.loc_port;
    ev.cm_id      = 24'(id_q);
    ev.listener   = 4'(nctx_q.listener);
    ev.event_code = p_q.evt_code;
    ev.reason     = p_q.evt_reason;
    if (p_q.evt_code == bouncer_regs_pkg::AEQ_EVENT_CONNECT_REQUEST) begin
      ev.ird_ord   = nctx_q.req_ird_ord;
      ev.pd_offset = 32'({id_q, 9'd0});
      ev.pd_len    = {6'd0, p_pd_len_q};
      ev.rev       = nctx_q.req_rev;
      ev.flags     = nctx_q.req_flags;
    end
  end
  assign evt = ev;

  // ------------------------------------------------------------------ state machine
  logic        syn_seg;
  assign syn_seg = r_flags[1] && !r_flags[4] && !r_flags[2];


  always_ff @(posedge clk) begin
    m_hrsp_valid <= 1'b0;
    pend_inc     <= 1'b0;
    pend_dec     <= 1'b0;
    free_valid   <= 1'b0;
    tmr_set_valid <= 1'b0;
    asm_free_valid <= 1'b0;
    pd_clear     <= 1'b0;
    pd_wr_en     <= 1'b0;

    // host job, inline PD: write it into the builder while the context is read. The builder
    // is idle at intake (a job ends only after its frame's last beat), the first word goes
    // with pd_clear, one word per cycle after it, the last at most 4 cycles after intake.
    if (pre_q) begin
      pd_wr_en   <= 1'b1;
      pd_wr_idx  <= {5'd0, pre_idx_q};
      pd_wr_data <= h_inline_pd[64*pre_idx_q +: 64];
      pre_idx_q  <= pre_idx_q + 2'd1;
      if (pre_idx_q == 2'd3 || {5'd0, pre_idx_q + 2'd1, 3'b000} >= h_pd_len) pre_q <= 1'b0;
    end

    stat <= '0;
    case (state_q)
      // ================================================================ job intake
      S_IDLE: begin
        p_q <= '0; p_drop_q <= 1'b0; p_ctrl_b_q <= 1'b0; p_copy_q <= 1'b0; copy_q <= 1'b0;
        p_tmpl_q <= 1'b0;
        h_major_q <= bouncer_regs_pkg::CQ_MAJOR_OK; h_minor_q <= bouncer_regs_pkg::CQ_MINOR_NONE; h_flen_q <= '0; h_seq_q <= '0;
        h_first_q <= '0;
        if (take_rx) begin
          job_q      <= J_RX;
          rr_q       <= 2'd1;
          r_eth_src  <= s_rec_eth_src;   r_eth_dst <= s_rec_eth_dst;
          r_vlan     <= s_rec_vlan_present; r_vlan_tci <= s_rec_vlan_tci;
          r_tcp      <= s_rec_tcp;       r_bad     <= s_rec_bad;
          r_tos      <= s_rec_ip_tos;
          r_ip_src   <= s_rec_ip_src;    r_ip_dst  <= s_rec_ip_dst;
          r_sport    <= s_rec_src_port;  r_dport   <= s_rec_dst_port;
          r_seq      <= s_rec_seq;       r_ack     <= s_rec_ack;
          r_seq_p1   <= s_rec_seq + 32'd1;
          r_mac_ok   <= promisc || (s_rec_eth_dst == port_mac);
          r_ip_ok    <= (port_ip == 32'd0) || (s_rec_ip_dst == port_ip);
          r_flags    <= s_rec_flags;     r_len     <= s_rec_payload_len;
          r_peer_mss <= !s_rec_mss_present ? 16'd536
                      : (s_rec_mss < 16'd48) ? 16'd48 : s_rec_mss;
          r_ws       <= s_rec_ws_present;
          r_seg_end    <= s_rec_seq + {16'd0, s_rec_payload_len};
          r_seg_end_sf <= s_rec_seq + {16'd0, s_rec_payload_len} + {31'd0, s_rec_flags[1]}
                        + {31'd0, s_rec_flags[0]};
          state_q    <= S_RX_CLASSIFY;
        end else if (take_host) begin
          job_q        <= J_HOST;
          rr_q         <= 2'd2;
          id_q         <= s_hrej_cm_id;
          h_pd_inline  <= s_hrej_pd_inline;
          h_pd_addr    <= s_hrej_pd_addr;
          h_pd_len     <= s_hrej_pd_len;
          h_inline_pd  <= s_hrej_inline_pd;
          h_fin_policy <= s_hrej_fin_policy;
          h_ird_ord_valid <= s_hrej_ird_ord_valid;
          h_ird_ord    <= s_hrej_ird_ord;
          pd_clear     <= 1'b1;
          if (s_hrej_pd_inline && s_hrej_pd_len != 10'd0) begin
            pd_wr_en   <= 1'b1;
            pd_wr_idx  <= '0;
            pd_wr_data <= s_hrej_inline_pd[63:0];
            pre_idx_q  <= 2'd1;
            pre_q      <= s_hrej_pd_len > 10'd8;
          end
          state_q      <= S_CTX_RD;
        end else if (take_tmr) begin
          job_q   <= J_TMR;
          rr_q    <= 2'd0;
          id_q    <= s_exp_id;
          state_q <= S_CTX_RD;
        end
      end

      // ================================================================ RX gather
      S_RX_CLASSIFY: begin
        p_drop_q <= (r_len != 16'd0);       // until an append takes it
        if (r_bad) begin
          p_q.stat[ST_RX_BAD] <= 1'b1;
          state_q <= E_DROP;
        end else if (!r_mac_ok) begin
          p_q.stat[ST_RX_FILTERED] <= 1'b1;   // another host's MAC, or a group MAC
          state_q <= E_DROP;
        end else if (!r_tcp) begin
          p_q.stat[ST_RX_NOT_TCP] <= 1'b1;
          state_q <= E_DROP;
        end else if (!r_ip_ok) begin
          p_q.stat[ST_RX_FILTERED] <= 1'b1;   // for another host's IP: not routed
          state_q <= E_DROP;
        end else begin
          state_q <= S_CT_LOOKUP;
        end
      end
      S_CT_LOOKUP: if (ct_cmd_ready) state_q <= S_CT_LOOKUP_WAIT;
      S_CT_LOOKUP_WAIT: if (ct_res_valid) begin
        if (ct_res_hit) begin
          id_q    <= ct_res_cm_id;
          state_q <= S_CTX_RD;
        end else begin
          state_q <= S_LST_LOOKUP;
        end
      end
      S_LST_LOOKUP: state_q <= S_LST_WAIT;
      S_LST_WAIT: if (lk_res_valid) begin
        lst_q   <= lk_idx;
        nctx_q  <= stray_ctx;
        state_q <= S_NOCONN;
        if (syn_seg && lk_hit && !(lk_full && lk_auto_reject != bouncer_regs_pkg::AUTO_REJECT_BACKLOG)) begin
          state_q <= S_ALLOC;
        end else if (syn_seg && lk_hit) begin
          p_q.stat[ST_SYN_BACKLOG] <= 1'b1;
          state_q <= E_DROP;
        end
      end
      S_NOCONN: begin
        // a SYN with no listener, or a segment for no node on a listening port: RST.
        // Stray RSTs and segments to ports nobody listens on are dropped silently.
        if (r_flags[2] || (!syn_seg && (!lk_hit_q || !r_flags[4]))) begin
          p_q.stat[ST_RX_STRAY] <= 1'b1;
          state_q <= E_DROP;
        end else begin
          if (syn_seg) p_q.stat[ST_SYN_NO_LST] <= 1'b1;
          p_q.stat[ST_RST_TX] <= 1'b1;
          p_q.ctrl_a <= 1'b1;
          p_q.kind_a <= K_RST;
          p_q.seq_a  <= r_flags[4] ? r_ack : 32'd0;
          p_q.ack_a  <= r_seg_end_sf;
          p_q.ipid_a <= 16'd0;
          state_q    <= E_DROP;
        end
      end
      S_ALLOC: begin
        if (alloc_valid) begin
          id_q    <= alloc_id;
          state_q <= S_CT_INSERT;
        end else begin
          p_q.stat[ST_SYN_FULL] <= 1'b1;
          state_q <= E_DROP;
        end
      end
      S_CT_INSERT: if (ct_cmd_ready) state_q <= S_CT_INSERT_WAIT;
      S_CT_INSERT_WAIT: if (ct_res_valid) begin
        if (ct_res_status == 2'd0) begin
          state_q <= S_ISN;
        end else begin                      // bucket full (or a race we do not have): drop
          free_valid <= 1'b1;
          free_id    <= id_q;
          p_q.stat[ST_SYN_FULL] <= 1'b1;
          state_q <= E_DROP;
        end
      end
      S_ISN: if (isn_sent_q || isn_ready) state_q <= S_ISN_WAIT;
      S_ISN_WAIT: if (isn_res_valid && isn_skip_q == 2'd0) state_q <= S_SYN_PLAN;
      S_SYN_PLAN: begin
        // the new node, SYN-ACK out, timer armed
        nctx_q            <= syn_ctx;
        pend_inc          <= !lk_full_q;
        pend_inc_idx      <= lst_q;
        p_q.ctrl_a <= 1'b1;
        p_q.kind_a <= K_SYNACK;
        p_q.seq_a  <= isn_q;
        p_q.ack_a  <= r_seq + 32'd1;
        p_q.ipid_a <= isn_q[31:16];
        p_q.ctxwr  <= 1'b1;
        p_q.tmr    <= 1'b1;
        state_q    <= E_DROP;
      end

      // ================================================================ node jobs
      S_CTX_RD: if (ctx_req_ready) state_q <= S_CTX_WAIT;
      S_CTX_WAIT: if (ctx_rsp_valid) begin
        ctx_q   <= ctx_rsp_rdata;
        state_q <= S_DISPATCH;
      end
      S_DISPATCH: begin
        // lst_rd_idx follows ctx_q.listener from this cycle on (see below)
        case (job_q)
          J_RX: begin
            p_q <= pl_rx;
            nctx_q  <= nc_rx;
            if (pl_rx.append) begin
              ctx_q    <= nc_rx;          // S_MPA builds on the state after the ACK
              p_drop_q <= 1'b0;
              state_q  <= S_ASM_CMD;
            end else begin
              state_q  <= E_DROP;
            end
          end
          J_HOST: begin
            p_q <= pl_host;
            nctx_q    <= nc_host;
            h_major_q <= pl_host.major;
            h_minor_q <= pl_host.minor;
            p_ctrl_b_q <= pl_host.rst_after;
            p_copy_q   <= pl_host.rej && ctx_q.hw_node && !pl_host.rst_after &&
                          h_pd_len != 10'd0 && (h_pd_inline || !hx_slot_q);
            // nothing to drop, no request PD, no control segment A: a reject starts now
            // (the inline PD is in the builder already); anything else takes the epilogue
            if (!pl_host.rej) state_q <= E_DROP;
            else if (h_pd_inline || h_pd_len == 10'd0) state_q <= E_REJ_START;
            else state_q <= E_REJ_LOAD;
          end
          default: begin
            p_q <= pl_tmr;
            nctx_q  <= nc_tmr;
            state_q <= E_DROP;
          end
        endcase
      end
      S_ASM_CMD: if (asm_cmd_ready) state_q <= S_ASM_RSP;
      S_ASM_RSP: if (asm_rsp_valid) state_q <= S_MPA;
      S_MPA: begin
        // asm_rsp_* are held (ready only now)
        p_q <= pl_mpa;
        p_q.stat <= p_q.stat | pl_mpa.stat;
        nctx_q <= nc_mpa;
        p_pd_start_q <= enh_req ? 10'd24 : 10'd20;
        p_pd_len_q   <= asm_rsp_pd_len[9:0] - (enh_req ? 10'd4 : 10'd0);
        if (pl_mpa.free || (pl_mpa.rej && asm_rsp_ok)) begin
          asm_free_valid <= asm_rsp_ok;     // the request is no longer needed
          asm_free_buf   <= asm_rsp_buf;
        end
        if (pl_mpa.rej) begin
          // the template is read from chip (E_REJ_TMPL): its slot is held from here on
          p_tmpl_q     <= lq_tmpl_len_q != 10'd0;
          p_tslot_q    <= {lq_tmpl_bank_q, lq_idx_q};
          p_ctrl_b_q   <= pl_mpa.rst_after;
          p_copy_q     <= !pl_mpa.rst_after && lq_tmpl_len_q != 10'd0;  // the template
        end
        state_q <= E_DROP;
      end

      // ================================================================ epilogue
      E_DROP: begin
        if (!p_drop_q) state_q <= E_PDDMA_CMD;
        else if (asm_cmd_ready) state_q <= E_DROP_RSP;
      end
      E_DROP_RSP: if (asm_rsp_valid) state_q <= E_PDDMA_CMD;   // (the command went out in E_DROP)
      E_PDDMA_CMD: begin
        wr_addr_q <= slot_addr;
        if (!p_q.pddma) state_q <= E_CTRL_A;
        else if (asm_rd_ready) state_q <= (p_pd_len_q == 10'd0) ? E_CTRL_A : E_PDDMA_CHUNK;
      end
      E_PDDMA_CHUNK: if ((copy_q || asm_chunk_valid) && dma_wr_ready) begin
        asm_last_q <= copy_q ? (copy_row_q + 4'd1 == copy_rows_q) : asm_chunk_last;
        state_q    <= E_PDDMA_WAIT;
      end
      E_PDDMA_WAIT: if (dma_wr_done) begin
        wr_addr_q  <= wr_addr_q + 64;
        copy_row_q <= copy_row_q + {3'd0, copy_q};
        state_q    <= !asm_last_q ? E_PDDMA_CHUNK : copy_q ? E_CTRL_B : E_CTRL_A;
      end
      E_CTRL_A: if (!p_q.ctrl_a || ctl_ready) state_q <= E_REJ_LOAD;
      E_REJ_LOAD: begin
        if (!p_q.rej) begin
          state_q <= E_CTRL_B;
        end else begin
          pd_clear <= 1'b1;
          tw_q     <= '0;
          tv_q     <= 1'b0;
          if (p_q.rej_len == 10'd0) state_q <= E_REJ_START;
          else if (p_tmpl_q) state_q <= E_REJ_TMPL;
          else state_q <= E_REJ_DMA_CMD;
          if (job_q == J_TMR) p_rej_addr_q <= slot_addr;   // holds what the first one sent
          else if (job_q == J_HOST) p_rej_addr_q <= h_pd_addr;
        end
      end
      E_REJ_DMA_CMD: if (dma_rd_ready) begin
        pd_wr_idx <= '1;
        state_q   <= E_REJ_DMA_DATA;
      end
      E_REJ_DMA_DATA: if (rd_valid) begin
        pd_wr_en   <= 1'b1;
        pd_wr_idx  <= pd_wr_idx + 7'd1;
        pd_wr_data <= rd_data;
        if (rd_last) begin
          if (rd_err) begin
            // the PD cannot be read: nothing is sent. A host reject completes with
            // DMA/DMA_PD and leaves the node as it was; a retransmission is skipped.
            h_major_q <= bouncer_regs_pkg::CQ_MAJOR_DMA;
            h_minor_q <= bouncer_regs_pkg::CQ_MINOR_DMA_PD;
            p_q.rej   <= 1'b0;
            p_ctrl_b_q <= 1'b0;
            // nothing went out: count nothing (the backlog slot stays taken for a host reject)
            p_q.stat[ST_REJ_HOST] <= 1'b0;
            p_q.stat[ST_REJ_AUTO] <= 1'b0;
            p_q.stat[ST_FIN_TX]   <= 1'b0;
            p_q.stat[ST_RTX]      <= 1'b0;
            if (job_q == J_HOST) begin
              p_q.ctxwr <= 1'b0; p_q.tmr <= 1'b0; p_q.free <= 1'b0; p_q.evt <= 1'b0;
              p_q.pdec  <= 1'b0;
              p_q.stat[ST_RST_TX] <= 1'b0;
              p_q.stat[ST_CLOSED] <= 1'b0;
            end
            state_q   <= E_CTRL_B;
          end else begin
            state_q <= E_REJ_START;
          end
        end
      end
      E_REJ_TMPL: begin
        // word tw_q is addressed this cycle (tmpl_rd_*); the word addressed in the cycle
        // before (tv_q, index ti_q) is on tmpl_rd_data and goes into the builder
        tv_q <= !tlast_q;
        ti_q <= tw_q;
        if (!tlast_q) tw_q <= tw_q + 7'd1;
        if (tv_q) begin
          pd_wr_en   <= 1'b1;
          pd_wr_idx  <= ti_q;
          pd_wr_data <= tmpl_rd_data;
        end
        if (tv_q && ti_q + 7'd1 == tmpl_words) begin
          p_tmpl_q <= 1'b0;                 // the slot is read: the control queue may reuse it
          state_q  <= E_REJ_START;
        end
      end
      E_REJ_START: if (rej_start_ready && !pd_wr_en) begin
        sof_seen_q <= 1'b0;
        done_seen_q <= 1'b0;
        state_q <= E_REJ_WAIT;
      end
      E_REJ_WAIT: begin
        // the builder's done, and the frame's first beat out of the TX arbiter (the CQE's
        // latency is measured at the port, behind the arbiter's register)
        if (tx_rej_sof && !sof_seen_q) begin
          // the first segment's first beat (a reject split by the peer's MSS has more).
          // cycle_count still shows the count before this edge; the beat is transferred at
          // the edge that ends this cycle (the numbering of CYCLE_LO and the CQE doorbell stamp)
          h_first_q  <= cycle_count + 64'd1;
          sof_seen_q <= 1'b1;
        end
        if (rej_done) done_seen_q <= 1'b1;
        if ((rej_done || done_seen_q) && (tx_rej_sof || sof_seen_q)) begin
          h_flen_q <= rej_frame_len;
          h_seq_q  <= p_q.rej_seq;
          // a first transmission moves SND_NXT by the whole reply (its FIN included) and
          // IP_ID by its segments (one IP ID each); a retransmission moves neither
          if (p_q.rej_first) begin
            nctx_q.snd_nxt  <= p_q.rej_seq + {16'd0, rej_seq_advance};
            nctx_q.ip_id    <= p_q.rej_ipid + {12'd0, rej_seg_count};
            nctx_q.rej_segs <= rej_seg_count;
          end
          p_seq_b_q  <= p_q.rej_seq + {16'd0, rej_seq_advance};
          p_ipid_b_q <= p_q.rej_ipid + {12'd0, rej_seg_count};
          // the PD this reject sent, into the node's slot, 64 bytes per posted write
          wr_addr_q  <= slot_addr;
          copy_row_q <= '0;
          copy_q     <= p_copy_q;
          state_q <= p_copy_q ? E_PDDMA_CHUNK : E_CTRL_B;
        end
      end
      E_CTRL_B: if (!p_ctrl_b_q || ctl_ready) state_q <= E_EVT;
      E_EVT: if (!p_q.evt || evt_ready) begin
        if (p_q.evt) p_q.stat[ST_EVENTS] <= 1'b1;
        state_q <= p_q.free ? (nctx_q.hw_node ? E_CT_DEL : E_FREE) : E_CTX_WR;
      end
      E_CT_DEL: if (ct_cmd_ready) state_q <= E_CT_DEL_WAIT;
      E_CT_DEL_WAIT: if (ct_res_valid) state_q <= E_FREE;
      E_FREE: if (ctx_req_ready) begin
        free_valid    <= nctx_q.hw_node;
        free_id       <= id_q;
        tmr_set_valid <= 1'b1;
        tmr_set_id    <= id_q;
        tmr_set_on    <= 1'b0;
        tmr_set_deadline <= '0;
        if (nctx_q.reasm_on) begin
          asm_free_valid <= 1'b1;
          asm_free_buf   <= NBUF_LOG2'(nctx_q.reasm_idx);
        end
        state_q <= E_HRSP;
      end
      E_CTX_WR: if (!p_q.ctxwr || ctx_req_ready) state_q <= E_TMR;
      E_TMR: begin
        if (p_q.tmr) begin
          tmr_set_valid    <= 1'b1;
          tmr_set_id       <= id_q;
          tmr_set_on       <= nctx_q.timer_on;
          tmr_set_deadline <= nctx_q.deadline;
        end
        state_q <= E_HRSP;
      end
      E_HRSP: begin
        m_hrsp_valid <= (job_q == J_HOST);
        pend_dec     <= p_q.pdec;       // at the end, so a job that sent nothing keeps it
        pend_dec_idx <= NL_LOG2'(nctx_q.listener);
        stat         <= p_q.stat;
        state_q      <= S_IDLE;
      end
      default: state_q <= S_IDLE;
    endcase


    if (rst) begin
      state_q <= S_IDLE;
      rr_q    <= '0;
      job_q   <= J_RX;
      stat    <= '0;
      m_hrsp_valid <= 1'b0;
      pend_inc <= 1'b0;
      pend_dec <= 1'b0;
      free_valid <= 1'b0;
      tmr_set_valid <= 1'b0;
      asm_free_valid <= 1'b0;
      pd_clear <= 1'b0;
      pd_wr_en <= 1'b0;
      pre_q    <= 1'b0;
      copy_q   <= 1'b0;
      p_tmpl_q <= 1'b0;
    end
  end

  // listener facts captured with the match
  always_ff @(posedge clk) begin
    if (state_q == S_LST_WAIT && lk_res_valid) begin
      lk_hit_q  <= lk_hit;
      lk_full_q <= lk_full && lk_hit;
    end
  end


  // Which index reads the listener table, decoded one cycle ahead into two flops: lk_idx while
  // the match is pending (sel_lk_q: exactly the cycles in S_LST_WAIT), the matched listener while
  // a SYN is taken or refused (sel_lst_q: exactly S_NOCONN .. S_SYN_PLAN), the node's listener
  // otherwise. The 6-level budget leaves no room for a state_q decode in front of the LUT-RAM
  // read (state decode, listener fields, context write data in one cycle). The flags follow the transitions of
  // those states in the state machine above; the assertions below check that they agree.
  logic sel_lk_q, sel_lst_q;
  always_ff @(posedge clk) begin
    sel_lk_q  <= (state_q == S_LST_LOOKUP) || (sel_lk_q && !lk_res_valid);
    sel_lst_q <= (sel_lk_q && lk_res_valid &&                            // -> S_NOCONN / S_ALLOC
                  !(syn_seg && lk_hit && lk_full &&
                    lk_auto_reject != bouncer_regs_pkg::AUTO_REJECT_BACKLOG)) ||
                 (state_q == S_ALLOC && alloc_valid) ||                  // -> S_CT_INSERT
                 state_q == S_CT_INSERT ||
                 (state_q == S_CT_INSERT_WAIT && !(ct_res_valid && ct_res_status != 2'd0)) ||
                 state_q == S_ISN || state_q == S_ISN_WAIT;              // -> S_SYN_PLAN
    if (rst) begin
      sel_lk_q  <= 1'b0;
      sel_lst_q <= 1'b0;
    end
  end
`ifndef SYNTHESIS
  // the deadline registers hold now + (the timeout as of the previous cycle) in every cycle
  // that follows a cycle out of reset (`now` jumps to its initial value at reset)
  logic [31:0] a_rto_init_q, a_rto_max_q, a_mpa_timeout_q, a_fin_timeout_q, a_time_wait_q;
  logic        a_started_q = 1'b0;
  always_ff @(posedge clk) begin
    a_rto_init_q    <= rto_init;
    a_rto_max_q     <= rto_max;
    a_mpa_timeout_q <= mpa_timeout;
    a_fin_timeout_q <= fin_timeout;
    a_time_wait_q   <= time_wait;
    a_started_q     <= !rst;
    if (a_started_q) begin
      assert (now_p1_q == now + 32'd1);
      assert (dl_rto_q == now + a_rto_init_q);
      assert (dl_max_q == now + a_rto_max_q);
      assert (dl_mpa_q == now + a_mpa_timeout_q);
      assert (dl_fin_q == now + a_fin_timeout_q);
      assert (dl_tw_q == now + a_time_wait_q);
    end
  end
  always_ff @(posedge clk) begin
    if (!rst) begin
      assert (sel_lk_q == (state_q == S_LST_WAIT));
      assert (sel_lst_q == (state_q >= S_NOCONN && state_q <= S_SYN_PLAN));
      if (state_q == S_MPA) begin
        assert (mq_err_q == mc_err);
        assert (mq_complete_q == mc_complete);
        assert (lq_idx_q == lst_rd_idx && mq_idx_q == lst_rd_idx);
      end
      if (state_q == S_DISPATCH) begin
        // the r_* record (and r_seq_p1 with it) is only loaded by an RX job; a host or
        // timer job before the first RX job sees it uninitialised, and plan_rx is unused
        if (job_q == J_RX) begin
          assert (r_seg_end == r_seq + {16'd0, r_len});
          assert (r_seg_end_sf == r_seq + {16'd0, r_len} + {31'd0, r_flags[1]} + {31'd0, r_flags[0]});
          assert (cx_in_order_q == (r_seq == ctx_q.rcv_nxt));
          assert (cx_all_acked_q == (r_ack == ctx_q.snd_nxt));
          assert (cx_syn_dup_q == (r_seq == ctx_q.rcv_nxt - 32'd1));
          assert (cx_ack_ok_q == ((r_ack - ctx_q.iss - 32'd1) <= (ctx_q.snd_nxt - ctx_q.iss - 32'd1)));
        end
        assert (cx_rev_ok_q == (ctx_q.req_rev == 8'd1 || ctx_q.req_rev == 8'd2));
        assert (cx_enh_q == (ctx_q.req_rev == 8'd2 && ctx_q.req_flags[4]));
        // a timer job retransmits only below rtx_max (at most 15), so rtx_cnt + 1 fits
        if (ctx_q.rtx_cnt != 4'hF)
          assert ((rtx_cap_q ? dl_max_q : dl_rtx_q) == now + rto_for(rto_init, rto_max, ctx_q.rtx_cnt + 4'd1));
        assert (cx_due_q == (ctx_q.ctx_valid && ctx_q.timer_on && !($signed(now - ctx_q.deadline) < 0)));
      end
    end
  end
`endif

  // ------------------------------------------------------------------ outputs
  always_comb begin
    if (sel_lk_q)       lst_rd_idx = lk_idx;
    else if (sel_lst_q) lst_rd_idx = lst_q;
    else                lst_rd_idx = NL_LOG2'(ctx_q.listener);
  end

  assign lk_valid = (state_q == S_LST_LOOKUP);
  assign lk_ip    = r_ip_dst;
  assign lk_port  = r_dport;

  assign alloc_ready = (state_q == S_ALLOC);

  assign ct_cmd_valid    = (state_q == S_CT_LOOKUP) || (state_q == S_CT_INSERT) ||
                           (state_q == E_CT_DEL);
  assign ct_cmd_op       = (state_q == S_CT_INSERT) ? CT_INSERT :
                           (state_q == E_CT_DEL) ? CT_DELETE : CT_LOOKUP;
  assign ct_cmd_rem_ip   = (state_q == E_CT_DEL) ? nctx_q.rem_ip : r_ip_src;
  assign ct_cmd_loc_ip   = (state_q == E_CT_DEL) ? nctx_q.loc_ip : r_ip_dst;
  assign ct_cmd_rem_port = (state_q == E_CT_DEL) ? nctx_q.rem_port : r_sport;
  assign ct_cmd_loc_port = (state_q == E_CT_DEL) ? nctx_q.loc_port : r_dport;
  assign ct_cmd_cm_id    = id_q;
  assign ct_res_ready    = (state_q == S_CT_LOOKUP_WAIT) || (state_q == S_CT_INSERT_WAIT) ||
                           (state_q == E_CT_DEL_WAIT);

  assign isn_valid     = !isn_sent_q && ((state_q == S_CT_INSERT) ||
                                          (state_q == S_CT_INSERT_WAIT) || (state_q == S_ISN));
  assign isn_loc_ip    = r_ip_dst;
  assign isn_rem_ip    = r_ip_src;
  assign isn_loc_port  = r_dport;
  assign isn_rem_port  = r_sport;
  assign isn_res_ready = (state_q == S_ISN_WAIT) || (isn_skip_q != 2'd0);

  always_ff @(posedge clk) begin : isn_track
    logic sent, dropped, skipped;
    sent    = isn_sent_q || (isn_valid && isn_ready);
    dropped = (state_q == S_CT_INSERT_WAIT) && ct_res_valid && (ct_res_status != 2'd0);
    skipped = isn_res_valid && (isn_skip_q != 2'd0);
    if (state_q == S_ISN_WAIT && isn_res_valid && isn_skip_q == 2'd0) isn_q <= isn_res;
    isn_sent_q <= sent && !dropped && !(state_q == S_ISN_WAIT && isn_res_valid && !skipped);
    isn_skip_q <= isn_skip_q + 2'(dropped && sent) - 2'(skipped);
    if (rst) begin
      isn_sent_q <= 1'b0;
      isn_skip_q <= 2'd0;
    end
  end

  bouncer_regs_pkg::cm_ctx_t freed;
  always_comb begin
    freed           = nctx_q;
    freed.ctx_valid = 1'b0;
    freed.timer_on  = 1'b0;
    freed.reasm_on  = 1'b0;
  end
  assign ctx_req_valid = (state_q == S_CTX_RD) || (state_q == E_FREE) ||
                         (state_q == E_CTX_WR && p_q.ctxwr);
  assign ctx_req_we    = (state_q != S_CTX_RD);
  assign ctx_req_addr  = id_q;
  assign ctx_req_wdata = (state_q == E_FREE) ? freed : nctx_q;

  assign asm_cmd_valid  = (state_q == S_ASM_CMD) || (state_q == E_DROP && p_drop_q);
  assign asm_cmd_append = (state_q == S_ASM_CMD);
  assign asm_cmd_new    = !ctx_q.reasm_on;
  assign asm_cmd_buf    = NBUF_LOG2'(ctx_q.reasm_idx);
  assign asm_cmd_offset = ctx_q.rx_bytes;
  assign asm_cmd_len    = r_len;
  assign asm_rsp_ready  = (state_q == S_MPA) || (state_q == E_DROP_RSP);
  assign asm_rd_valid   = (state_q == E_PDDMA_CMD) && p_q.pddma;
  assign asm_rd_buf     = asm_rsp_buf_q;
  assign asm_rd_start   = p_pd_start_q;
  assign asm_rd_len     = p_pd_len_q;
  assign asm_rd_free    = 1'b1;
  assign asm_chunk_ready = (state_q == E_PDDMA_CHUNK) && dma_wr_ready && !copy_q;

  logic [NBUF_LOG2-1:0] asm_rsp_buf_q;
  always_ff @(posedge clk) if (state_q == S_MPA) asm_rsp_buf_q <= asm_rsp_buf;

  // The reject PD as it went into the builder (pd_wr_*), kept for the slot copy: 8 lanes of
  // 64-bit words, so one read gives a 64-byte row (distributed RAM, 4 Kib). Words past the
  // 512-byte PD never arrive (a DMA read is at most 64 words).
  logic [63:0] shadow_lane [8][8];
  logic [511:0] shadow_row;
  always_ff @(posedge clk) begin
    if (pd_wr_en && !pd_wr_idx[6]) shadow_lane[pd_wr_idx[2:0]][pd_wr_idx[5:3]] <= pd_wr_data;
  end
  always_comb begin
    for (int l = 0; l < 8; l++) shadow_row[64*l +: 64] = shadow_lane[l][copy_row_q[2:0]];
  end
  // rows and the last row's beats of the reject PD (pd_len_q, stable from the reject's start)
  logic [6:0] copy_words;
  assign copy_words = 7'((({1'b0, pd_len_q}) + 11'd7) >> 3);
  always_ff @(posedge clk) begin
    copy_rows_q       <= 4'((copy_words + 7'd7) >> 3);
    copy_last_beats_q <= (copy_words[2:0] == 3'd0) ? 4'd8 : {1'b0, copy_words[2:0]};
  end

  assign dma_wr_valid = (state_q == E_PDDMA_CHUNK) && (copy_q || asm_chunk_valid);
  assign dma_wr_addr  = wr_addr_q;
  assign dma_wr_beats = copy_q ? ((copy_row_q + 4'd1 == copy_rows_q) ? copy_last_beats_q : 4'd8)
                               : asm_chunk_beats;
  assign dma_wr_data  = copy_q ? shadow_row : asm_chunk_data;

  // control segments
  /* verilator lint_off UNUSEDSIGNAL */  // a view: the frame fields only
  bouncer_regs_pkg::cm_ctx_t tctx;
  /* verilator lint_on UNUSEDSIGNAL */
  assign tctx = nctx_q;
  assign ctl_valid    = (state_q == E_CTRL_A && p_q.ctrl_a) || (state_q == E_CTRL_B && p_ctrl_b_q);
  assign ctl_kind     = (state_q == E_CTRL_B) ? K_RST : p_q.kind_a;
  assign ctl_rem_mac  = tctx.rem_mac;
  assign ctl_loc_mac  = tctx.loc_mac;
  assign ctl_vlan_en  = tctx.vlan_en;
  assign ctl_vlan_tci = tctx.vlan_tci;
  assign ctl_loc_ip   = tctx.loc_ip;
  assign ctl_rem_ip   = tctx.rem_ip;
  assign ctl_tos      = tctx.tos;
  assign ctl_ttl      = tctx.ttl;
  assign ctl_ip_id    = (state_q == E_CTRL_B) ? p_ipid_b_q : p_q.ipid_a;
  assign ctl_loc_port = tctx.loc_port;
  assign ctl_rem_port = tctx.rem_port;
  assign ctl_seq      = (state_q == E_CTRL_B) ? p_seq_b_q : p_q.seq_a;
  assign ctl_ack      = (state_q == E_CTRL_B) ? tctx.rcv_nxt : p_q.ack_a;
  // a SYN-ACK offers TCP_WND unscaled (RFC 7323: the SYN-ACK's window is never scaled);
  // every other segment the node's RCV_WND. syn_kind_q follows p_q.kind_a one cycle late:
  // p_q is set at least two cycles before E_CTRL_A (asserted below).
  logic syn_kind_q;
  always_ff @(posedge clk) syn_kind_q <= p_q.ctrl_a && (p_q.kind_a == K_SYNACK);
  assign ctl_window   = syn_kind_q ? tcp_wnd : tctx.rcv_wnd;
  assign ctl_mss      = tcp_mss;
  assign ctl_wscale   = {4'd0, tcp_wscale};
  assign ctl_ws_en    = tctx.ws_ok;
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && state_q == E_CTRL_A && p_q.ctrl_a) assert (syn_kind_q == (p_q.kind_a == K_SYNACK));
    if (!rst && state_q == E_CTRL_B && p_ctrl_b_q) assert (!syn_kind_q);  // a RST behind a reject
    if (!rst && state_q == S_CTX_WAIT && job_q == J_HOST) assert (slot_addr_q == slot_addr);
    if (!rst && copy_q && state_q == E_PDDMA_CHUNK)
      assert (copy_rows_q == 4'((pd_len_q + 10'd63) >> 6));
  end
`endif

  // reject frames: the context as the frame must show it (retransmissions: old numbers)
  bouncer_regs_pkg::cm_ctx_t rctx;
  always_comb begin
    rctx         = nctx_q;
    rctx.snd_nxt = p_q.rej_seq;
    rctx.ip_id   = p_q.rej_ipid;
  end
  // The builder's PD length as a register, so the job mux is not in front of its byte-mask
  // compare and its length adders: a host job's length is loaded as the job is taken (its
  // first inline word is written in the next cycle), and otherwise the register follows
  // (job_q == J_HOST) ? h_pd_len : p_q.rej_len one cycle late. p_q.rej_len is set in
  // S_DISPATCH / S_MPA, at least three cycles before the first PD write or the start
  // (E_DROP, E_PDDMA_CMD, E_CTRL_A, E_REJ_LOAD come first); the assertion below checks that
  // the builder never sees the difference.
  logic [9:0] pd_len_q;
  always_ff @(posedge clk) begin
    if (take_host) pd_len_q <= s_hrej_pd_len;
    else pd_len_q <= (job_q == J_HOST) ? h_pd_len : p_q.rej_len;
  end
  assign pd_len                  = pd_len_q;
`ifndef SYNTHESIS
  always_ff @(posedge clk)
    if (!rst && (pd_wr_en || rej_start_valid))
      assert (pd_len_q == ((job_q == J_HOST) ? h_pd_len : p_q.rej_len));
`endif
  assign rej_start_valid         = (state_q == E_REJ_START) && !pd_wr_en;
  assign rej_start_ctx           = rctx;
  assign rej_start_fin           = p_q.rej_fin;
  assign rej_start_ird_ord_valid = p_q.rej_iov;
  assign rej_start_ird_ord       = p_q.rej_io;
  assign rej_start_mss           = rctx.peer_mss;

  logic [6:0] tmpl_words;
  logic       tlast_q;   // tw_q is past the template's last word
  assign tmpl_words = 7'((({1'b0, p_q.rej_len}) + 11'd7) >> 3);
  always_ff @(posedge clk) tlast_q <= (state_q == E_REJ_TMPL) && (tlast_q || tw_q + 7'd1 == tmpl_words);
  assign tmpl_rd_en     = (state_q == E_REJ_TMPL) && !tlast_q;
  assign tmpl_rd_slot   = p_tslot_q;
  assign tmpl_rd_word   = tw_q[5:0];
  // S_MPA takes the slot it read with the listener's other fields (lq_*); from then until the
  // last word is read the control queue leaves that slot alone
  assign tmpl_use_valid = (state_q == S_MPA) || p_tmpl_q;
  assign tmpl_use_slot  = (state_q == S_MPA) ? {lq_tmpl_bank_q, lq_idx_q} : p_tslot_q;

  assign dma_rd_valid = (state_q == E_REJ_DMA_CMD);
  assign dma_rd_addr  = p_rej_addr_q;
  assign dma_rd_beats = 8'(({6'd0, p_q.rej_len} + 16'd7) >> 3);

  assign evt_valid = (state_q == E_EVT) && p_q.evt;

  assign m_hrsp_major       = h_major_q;
  assign m_hrsp_minor       = h_minor_q;
  assign m_hrsp_frame_len   = h_flen_q;
  assign m_hrsp_seq         = h_seq_q;
  assign m_hrsp_first_cycle = h_first_q;

  assign busy = (state_q != S_IDLE);

  logic unused_ok;
  assign unused_ok = asm_rsp_ird_ord_valid   // implied by hdr_valid and PD_Length >= 4
                   ^ rej_first_beat;         // tx_rej_sof is what counts

endmodule
`default_nettype wire
