// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_axil_regs: AXI4-Lite register file, doorbells, push page and statistics.
//
// Offsets come from the generated bouncer_regs_pkg (regs/bouncer.toml).
// - CTRL: ENABLE and LOOPBACK are plain rw bits (reset 0); ctrl_loopback is the register
//   itself, the core latches it per port at frame boundaries.
// - Writes: AW and W are taken together; B follows one cycle later. A write to a
//   doorbell produces a one-cycle *_db pulse with the written index.
// - Reads: one at a time. ARREADY follows ARVALID by one cycle (the address is first
//   pre-decoded into registered selects; ARADDR must be held until AR is taken, as AXI requires)
//   and R follows AR by one cycle (the read mux is registered): RVALID rises 2 cycles after
//   ARVALID. The value and the read side effects (CYCLE_HI latch, probe_pop) are those of
//   the AR handshake cycle. Back-to-back reads take 2 cycles each.
// - Ring SIZE writes pulse *_reset so the engines restart at index 0, polarity 1.
// - NUM_SQ (1..NUM_SQ_MAX) reject SQs: SQ n's ring registers are the block at
//   SQ_BASE_LO + n * 0x20 (base, size, CI, PI) and its push page is at
//   PUSH_PAGE + n * 0x40. SQ_DB / SQ_PUSH_DB carry the SQ number in bits 23:16 and the
//   producer index in bits 14:0: the registered sq_db pulse names the SQ (sq_db_sq) and says
//   whether it was a push doorbell (sq_db_sq, sq_db_push and sq_db_pi are valid with the
//   pulse only: they follow every doorbell write). A doorbell for an SQ >= NUM_SQ changes
//   nothing, gives no pulse and counts in STAT_SQ_DB_BAD (it is not a queue error); blocks
//   and pages of SQs >= NUM_SQ read 0 and ignore writes.
// - QERR: a doorbell (SQ_DB, SQ_PUSH_DB for SQ n, CQP_DB) is checked in its write cycle
//   against that ring's own size, PI, CI and base: an index at or above the ring size, an
//   index that would reduce the posted-but-unconsumed count (the producer lapped the
//   consumer), a ring base not 64-byte aligned or a completion ring base (the shared CQ for
//   every SQ, the CCQ for the CQP) not 32-byte aligned puts that ring alone in its
//   queue-error state (cause in QERR.SQn / QERR.CQP): the doorbell and every later one to
//   that ring are ignored until its SIZE is written. The other rings keep working.
// - Each push page holds one 64-byte WQE image. Writing SQ_PUSH_DB arms SQ n's page for
//   index (PI - 1); writing any word of that page disarms it, so the engine never takes a
//   half-written image (it fetches that WQE from the ring instead).
// - Passive-CM registers: AEQ ring (AEQ_SIZE writes pulse aeq_reset and clear AEQ_HEAD),
//   private-data area base, the write-only 128-bit ISN key (reads 0), CM timer and TCP
//   settings with the reset values of regs/bouncer.toml (TIMER_TICK: a write of 0 is taken
//   as 1), CM_CONNS and STATUS from the core. These registers honour the byte strobes
//   (partial writes merge; read-only bits stay 0).
// - STAT_RX_FRAMES .. STAT_ACK_TX: one counter per stat_cm bit (bit i counts into the
//   register at STAT_RX_FRAMES + 4 i).
// - PROBE_*: the latency probes' registers (bouncer_probe holds the FIFO). PROBE_CTRL.CLEAR
//   writes give a one-cycle probe_clear pulse; a PROBE_DATA_LO read pops the head record
//   (probe_pop pulse) and latches its high word for PROBE_DATA_HI. PROBES = 0: they read 0.
// - DMA_TIMEOUT: the read watchdog (rw, reset 250000 cycles); STAT_DMA_*: DMA fault counters.
// - PORT_MAC_LO/HI: the MAC the RX filter accepts with CM_ROUTE.PROMISC 0 (rw, reset 0);
//   PORT_IP: the IPv4 destination the RX filter accepts when non-zero (rw, reset 0);
//   STAT_RX_FILTERED / STAT_RX_STRAY count the CM engine's filter and no-connection drops,
//   STAT_AEQ_REFUSED / STAT_EVT_COALESCED its AEQ admission decisions.
// - STAT_ARP_REPLIED / STAT_ARP_DROPPED: the ARP responder's counters.
// - CAP_*: the capture ring's registers (bouncer_capture holds the ring): CAP_CTRL.FREEZE and
//   CAP_INDEX are plain rw registers (reset 0), CAP_CTRL.CLEAR writes give a one-cycle
//   cap_clear pulse; CAP_STATUS and the frame's fields come from the core (flops there).
// - STAT_SYN_DROP_QUEUE: SYNs dropped at the RX port's full SYN queue.
// Statistics counters wrap at 2^32.
`default_nettype none
module bouncer_axil_regs #(
  parameter int ADDR_W         = 16,
  parameter int DATA_BYTES     = 8,
  parameter int CTX_DEPTH_LOG2 = 10,
  parameter int PROBES         = 0,     // latency probes present (CAPS.PROBES, PROBE_*)
  parameter int NUM_SQ         = 4      // reject SQs (1..NUM_SQ_MAX), CAPS.NUM_SQ
) (
  input  wire               clk,
  input  wire               rst,

  input  wire [ADDR_W-1:0]  s_axil_awaddr,
  input  wire               s_axil_awvalid,
  output logic              s_axil_awready,
  input  wire [31:0]        s_axil_wdata,
  input  wire [3:0]         s_axil_wstrb,
  input  wire               s_axil_wvalid,
  output logic              s_axil_wready,
  output logic [1:0]        s_axil_bresp,
  output logic              s_axil_bvalid,
  input  wire               s_axil_bready,
  input  wire [ADDR_W-1:0]  s_axil_araddr,
  input  wire               s_axil_arvalid,
  output logic              s_axil_arready,
  output logic [31:0]       s_axil_rdata,
  output logic [1:0]        s_axil_rresp,
  output logic              s_axil_rvalid,
  input  wire               s_axil_rready,

  // configuration
  output logic              ctrl_enable,
  output logic              ctrl_loopback,  // CTRL.LOOPBACK (the core switches at frame boundaries)
  output logic              ctrl_reset_req, // CTRL.RESET written 1 and not yet carried out
  input  wire               soft_rst,       // the core's state reset (CTRL.RESET) happens now
  // per SQ n: bits [n*W +: W] of each vector
  output logic [NUM_SQ*64-1:0]  sq_base,
  output logic [NUM_SQ*4-1:0]   sq_size_log2,
  output logic [NUM_SQ-1:0]     sq_reset,       // pulse: SQ_SIZE of that SQ written
  output logic [NUM_SQ*15-1:0]  sq_pi,
  output logic                  sq_db,          // pulse: SQ_DB or SQ_PUSH_DB for a valid SQ
  output logic [1:0]            sq_db_sq,       // ... its SQ number
  output logic                  sq_db_push,     // ... it was SQ_PUSH_DB
  output logic [14:0]           sq_db_pi,       // ... the producer index written
  output logic [NUM_SQ*512-1:0] push_wqe,
  output logic [NUM_SQ-1:0]     push_armed,
  output logic [NUM_SQ*15-1:0]  push_idx,
  input  wire  [NUM_SQ-1:0]     push_take,      // engine consumed that SQ's push image
  output logic [63:0]       cq_base,
  output logic [3:0]        cq_size_log2,
  output logic              cq_reset,
  output logic [14:0]       cq_head,
  output logic [63:0]       cqp_base,
  output logic [3:0]        cqp_size_log2,
  output logic              cqp_reset,
  output logic [14:0]       cqp_pi,
  output logic [63:0]       ccq_base,
  output logic [3:0]        ccq_size_log2,
  output logic              ccq_reset,
  output logic [14:0]       ccq_head,
  output logic [63:0]       cycle_count,

  // status from the engines
  input  wire [NUM_SQ*15-1:0] sq_ci,
  input  wire [14:0]        cq_tail,
  input  wire [14:0]        cqp_ci,
  input  wire [14:0]        ccq_tail,
  input  wire [8:0]         status,

  // statistics increments
  input  wire               stat_tx_frame,
  input  wire [15:0]        stat_tx_bytes,
  input  wire               stat_sq_wqe,
  input  wire               stat_sq_error,
  input  wire               stat_push_used,
  input  wire               stat_push_dropped,
  input  wire               stat_cqp_wqe,
  input  wire               stat_latency_valid,
  input  wire [31:0]        stat_latency,

  // passive CM: event queue, private-data area, ISN key, timers, TCP settings
  output logic [63:0]       aeq_base,
  output logic [3:0]        aeq_size_log2,
  output logic              aeq_reset,      // pulse: AEQ_SIZE written
  output logic [14:0]       aeq_head,
  input  wire [14:0]        aeq_tail,
  output logic [63:0]       pd_base,
  output logic [127:0]      isn_key,
  output logic [31:0]       hash_key,       // taken by the connection table at its reset
  output logic [31:0]       timer_tick,
  output logic [31:0]       rto_init,
  output logic [31:0]       rto_max,
  output logic [3:0]        rtx_max,
  output logic [31:0]       mpa_timeout,
  output logic [31:0]       mpa_reasm_timeout,
  output logic [31:0]       fin_timeout,
  output logic [31:0]       time_wait,
  output logic [15:0]       tcp_mss,
  output logic [3:0]        tcp_wscale,
  output logic [15:0]       tcp_wnd,
  output logic              cm_promisc,
  output logic [47:0]       port_mac,       // PORT_MAC_HI[15:0] : PORT_MAC_LO
  output logic [31:0]       port_ip,        // PORT_IP (0: any destination address)
  input  wire [16:0]        cm_conns,
  input  wire [23:0]        stat_cm,        // increment pulses, bit i -> STAT_RX_FRAMES + 4 i

  // latency probes (bouncer_probe)
  output logic              probe_enable,
  output logic              probe_clear,    // pulse: PROBE_CTRL.CLEAR written 1
  output logic              probe_pop,      // pulse: PROBE_DATA_LO read
  input  wire [63:0]        probe_head,     // oldest record (0 when empty)
  input  wire [7:0]         probe_count,
  input  wire               probe_overflow,
  input  wire [31:0]        probe_lost,

  // DMA faults
  output logic [31:0]       dma_timeout,      // DMA_TIMEOUT
  input  wire               stat_dma_rd_err,
  input  wire               stat_dma_wr_err,
  input  wire               stat_dma_timeout,
  input  wire               stat_rx_filtered,
  input  wire               stat_rx_stray,
  input  wire               stat_aeq_refused,
  input  wire               stat_evt_coalesced,
  // ARP responder (bouncer_arp_responder)
  input  wire               stat_arp_replied,
  input  wire               stat_arp_dropped,
  // on-card capture ring (bouncer_capture)
  output logic              cap_freeze,     // CAP_CTRL.FREEZE
  output logic              cap_clear,      // pulse: CAP_CTRL.CLEAR written 1
  output logic [31:0]       cap_index,      // CAP_INDEX
  input  wire  [31:0]       cap_status,     // CAP_STATUS
  input  wire  [15:0]       cap_len,
  input  wire  [63:0]       cap_stamp,
  input  wire  [31:0]       cap_end,
  input  wire  [31:0]       cap_data,
  input  wire               stat_syn_drop_queue
);

  // ------------------------------------------------------------------ write channel
  logic              bvalid_q;
  logic              wr_fire;
  logic [ADDR_W-1:0] wr_addr;
  logic [31:0]       wr_data;

  assign wr_fire        = s_axil_awvalid && s_axil_wvalid && !bvalid_q;
  assign s_axil_awready = s_axil_wvalid && !bvalid_q;
  assign s_axil_wready  = s_axil_awvalid && !bvalid_q;
  assign s_axil_bvalid  = bvalid_q;
  assign s_axil_bresp   = 2'b00;
  assign wr_addr        = {s_axil_awaddr[ADDR_W-1:2], 2'b00};
  logic unused_addr_lsbs;
  assign unused_addr_lsbs = ^{s_axil_awaddr[1:0], s_axil_araddr[1:0]};

  // Byte strobes: registers are written with full words; partial strobes merge.
  function automatic logic [31:0] merge(input logic [31:0] old, input logic [31:0] nw,
                                        input logic [3:0] strb);
    for (int b = 0; b < 4; b++) merge[8*b +: 8] = strb[b] ? nw[8*b +: 8] : old[8*b +: 8];
  endfunction

  logic [31:0] scratch_q;
  logic        enable_q, loopback_q, reset_req_q;
  logic [63:0] cq_base_q, cqp_base_q, ccq_base_q;
  logic [3:0]  cq_size_q, cqp_size_q, ccq_size_q;
  logic [14:0] cq_head_q, cqp_pi_q, ccq_head_q;
  logic        cq_reset_q, cqp_reset_q, ccq_reset_q, sq_db_q, sq_db_push_q;
  logic [1:0]  sq_db_sq_q;
  logic [14:0] sq_db_pi_q;
  // per SQ
  logic [63:0]  sq_base_q  [NUM_SQ];
  logic [3:0]   sq_size_q  [NUM_SQ];
  logic [14:0]  sq_pi_q    [NUM_SQ];
  logic [NUM_SQ-1:0] sq_reset_q, push_armed_q;
  logic [511:0] push_q     [NUM_SQ];
  logic [14:0]  push_idx_q [NUM_SQ];
  logic [31:0]  st_db_bad_q;
  logic [63:0] cycle_q;
  logic [31:0] cycle_hi_latch_q;
  logic [31:0] st_frames_q, st_bytes_q, st_sq_wqes_q, st_sq_err_q, st_push_used_q,
               st_push_drop_q, st_cqp_wqes_q, st_latency_q;

  assign wr_data = s_axil_wdata;

  // passive-CM registers
  localparam logic [15:0] STAT_CM_SPAN =
      bouncer_regs_pkg::REG_STAT_ACK_TX - bouncer_regs_pkg::REG_STAT_RX_FRAMES;
  localparam int NUM_STAT_CM = 32'(STAT_CM_SPAN[15:2]) + 1;   // 24 = $bits(stat_cm)
  logic [63:0]  aeq_base_q, pd_base_q;
  logic [3:0]   aeq_size_q;
  logic [14:0]  aeq_head_q;
  logic         aeq_reset_q;
  logic [127:0] isn_key_q;
  logic [31:0]  hash_key_q;
  logic [31:0]  timer_tick_q, rto_init_q, rto_max_q, mpa_timeout_q, fin_timeout_q, time_wait_q;
  logic [31:0]  mpa_reasm_timeout_q;
  logic [3:0]   rtx_max_q;
  logic [15:0]  tcp_mss_q, tcp_wnd_q;
  logic [3:0]   tcp_wscale_q;
  logic         cm_promisc_q;
  logic [47:0]  port_mac_q;
  logic [31:0]  port_ip_q;
  logic [31:0]  st_rx_filt_q, st_rx_stray_q, st_aeq_ref_q, st_evt_coal_q;
  logic [31:0]  st_arp_rep_q, st_arp_drop_q;
  logic         cap_freeze_q, cap_clr_q;
  logic [31:0]  cap_index_q;
  logic [31:0]  st_syn_dropq_q;
  logic [NUM_STAT_CM*32-1:0] st_cm_q;
  logic [31:0]  wr_merged_tick;
  logic         probe_en_q, probe_clr_q;
  logic [31:0]  probe_hi_q;
  logic [31:0]  dma_timeout_q, st_dma_rd_err_q, st_dma_wr_err_q, st_dma_to_q;

  // Clamp a written ring size to the supported range.
  function automatic logic [3:0] clamp_log2(input logic [31:0] v);
    if (v < bouncer_regs_pkg::RING_LOG2_MIN) clamp_log2 = 4'(bouncer_regs_pkg::RING_LOG2_MIN);
    else if (v > bouncer_regs_pkg::RING_LOG2_MAX) clamp_log2 = 4'(bouncer_regs_pkg::RING_LOG2_MAX);
    else clamp_log2 = v[3:0];
  endfunction

  // Doorbell checks (QERR): whether a doorbell to a ring passes, and if not the cause it
  // raises, in priority order. idx is the new producer index, pi/ci the ring's current ones.
  logic [3:0] sq_qerr_q [NUM_SQ];
  logic [3:0] cqp_qerr_q;
  // Doorbell check of one ring: {index ok, cause}. A new PI is accepted when it is < the ring
  // size and the posted-but-unconsumed count after it stays below the size: ((idx - ci) mod
  // size) >= ((pi - ci) mod size). That is the same as idx lying in the cyclic interval
  // [pi, ci - 1] (mod size; the whole ring when pi = ci), which is written here without a
  // subtraction: three compares side by side, each of two registers or of a register and
  // the written index (no adder in front of a comparator on the doorbell -> sq_db path):
  //   ci > pi:  pi <= idx < ci
  //   ci <= pi: idx >= pi or idx < ci (the interval wraps past the ring's end; for ci = 0
  //             idx < ci is false and it is [pi, size - 1])
  // The index-ok bit is an explicit AND of the checks, not "cause == NONE" behind the
  // priority chain, so sq_db does not wait for the cause encoding; the size check is a compare
  // with the registered ring size (*_lim_q) like the others. The CI used is the current one
  // (sq_ci in the doorbell's cycle): a registered, one cycle old CI would never let a bad
  // doorbell through (the CI only moves towards PI, so the old interval lies inside the
  // current one) but would raise a false DB_LAP for a doorbell that fills the slot freed in
  // that very cycle, which the check must accept.
  function automatic logic [4:0] db_check(input logic [14:0] idx, input logic [14:0] pi,
                                          input logic [14:0] ci, input logic [15:0] lim,
                                          input logic ring_misaligned,
                                          input logic cq_misaligned);
    logic range, ge_pi, lt_ci, wrap, in_iv, lap;
    range  = {1'b0, idx} >= lim;       // idx >= the ring size
    ge_pi  = idx >= pi;
    lt_ci  = idx < ci;
    wrap   = pi >= ci;                 // [pi, ci - 1] wraps past the ring's end
    in_iv  = (ge_pi && lt_ci) || (wrap && (ge_pi || lt_ci));
    lap    = !in_iv;
    db_check[4] = !range && !lap;      // the index checks alone
    if (range)                db_check[3:0] = bouncer_regs_pkg::QERR_CAUSE_DB_RANGE;
    else if (lap)             db_check[3:0] = bouncer_regs_pkg::QERR_CAUSE_DB_LAP;
    else if (ring_misaligned) db_check[3:0] = bouncer_regs_pkg::QERR_CAUSE_RING_ALIGN;
    else if (cq_misaligned)   db_check[3:0] = bouncer_regs_pkg::QERR_CAUSE_CQ_ALIGN;
    else                      db_check[3:0] = bouncer_regs_pkg::QERR_CAUSE_NONE;
  endfunction
  // The ring sizes and the per-ring state the check reads besides PI and CI are flops
  // computed from the ring's registers: a register write changes them and a doorbell is taken
  // 2 cycles later at the earliest (B is answered the cycle after the write, and the next
  // write is taken only after that), by which time these have followed; that holds for a
  // doorbell's own QERR change too. So the accept decision sees one flop (*_ok_q) besides the
  // index compares, not the 6-bit alignment ORs and the QERR compare.
  logic [15:0]       sq_lim_q [NUM_SQ];   // ring size (entries)
  logic [15:0]       cqp_lim_q;
  logic [NUM_SQ-1:0] sq_open_q;       // SQ n has no queue error (QERR.SQn = NONE)
  logic [NUM_SQ-1:0] sq_ring_mis_q;   // SQ n's ring base is not 64-byte aligned
  logic [NUM_SQ-1:0] sq_ok_q;         // SQ n is open and its ring and the CQ base are aligned
  logic              cq_mis_q;        // the CQ base is not 32-byte aligned
  logic              cqp_open_q, cqp_ring_mis_q, ccq_mis_q, cqp_ok_q;   // the same for the CQP
  // (a state reset, CTRL.RESET, counts as a reset here: the ring state it clears is
  // checked from these registers in the next cycle)
  logic any_rst;
  assign any_rst = rst || soft_rst;
  always_ff @(posedge clk) begin
    for (int n = 0; n < NUM_SQ; n++) begin
      sq_lim_q[n]      <= 16'd1 << (any_rst ? 4'(bouncer_regs_pkg::RING_LOG2_MIN) : sq_size_q[n]);
      sq_open_q[n]     <= any_rst || sq_qerr_q[n] == bouncer_regs_pkg::QERR_CAUSE_NONE;
      sq_ring_mis_q[n] <= !any_rst && sq_base_q[n][5:0] != 6'd0;
      sq_ok_q[n]       <= any_rst || (sq_qerr_q[n] == bouncer_regs_pkg::QERR_CAUSE_NONE
                                  && sq_base_q[n][5:0] == 6'd0 && cq_base_q[4:0] == 5'd0);
    end
    cq_mis_q       <= !any_rst && cq_base_q[4:0] != 5'd0;
    cqp_lim_q      <= 16'd1 << (any_rst ? 4'(bouncer_regs_pkg::RING_LOG2_MIN) : cqp_size_q);
    cqp_open_q     <= any_rst || cqp_qerr_q == bouncer_regs_pkg::QERR_CAUSE_NONE;
    cqp_ring_mis_q <= !any_rst && cqp_base_q[5:0] != 6'd0;
    ccq_mis_q      <= !any_rst && ccq_base_q[4:0] != 5'd0;
    cqp_ok_q       <= any_rst || (cqp_qerr_q == bouncer_regs_pkg::QERR_CAUSE_NONE
                              && cqp_base_q[5:0] == 6'd0 && ccq_base_q[4:0] == 5'd0);
  end
  // one check per SQ in parallel (no mux of SQ state in front of it); the doorbell's SQ
  // number picks which one applies. *_db_acc: the doorbell is accepted (the ring is open and
  // aligned, the index passes); else, if the ring is open, it is rejected with *_db_cause.
  logic [NUM_SQ-1:0] sq_idx_ok, sq_db_acc;
  logic [3:0]        sq_db_cause [NUM_SQ];
  logic              cqp_idx_ok, cqp_db_acc;
  logic [3:0]        cqp_db_cause;
  for (genvar n = 0; n < NUM_SQ; n++) begin : g_sq_cause
    assign {sq_idx_ok[n], sq_db_cause[n]} =
        db_check(wr_data[14:0], sq_pi_q[n], sq_ci[15*n +: 15], sq_lim_q[n], sq_ring_mis_q[n],
                 cq_mis_q);
    assign sq_db_acc[n] = sq_idx_ok[n] && sq_ok_q[n];
  end
  assign {cqp_idx_ok, cqp_db_cause} = db_check(wr_data[14:0], cqp_pi_q, cqp_ci, cqp_lim_q,
                                               cqp_ring_mis_q, ccq_mis_q);
  assign cqp_db_acc = cqp_idx_ok && cqp_ok_q;

  // push page write decode: page n = address bits 7:6 inside the 256-byte push window
  // CAP_INDEX: its WORD, FRAME and DIR bits; the others read 0
  localparam logic [31:0] CAP_INDEX_MASK =
      (((32'd1 << bouncer_regs_pkg::REG_CAP_INDEX_WORD_W) - 32'd1)
         << bouncer_regs_pkg::REG_CAP_INDEX_WORD_LSB)
    | (((32'd1 << bouncer_regs_pkg::REG_CAP_INDEX_FRAME_W) - 32'd1)
         << bouncer_regs_pkg::REG_CAP_INDEX_FRAME_LSB)
    | (((32'd1 << bouncer_regs_pkg::REG_CAP_INDEX_DIR_W) - 32'd1)
         << bouncer_regs_pkg::REG_CAP_INDEX_DIR_LSB);
  localparam logic [15:0] PUSH_OFF = 16'(bouncer_regs_pkg::PUSH_PAGE_OFFSET);
  logic        push_page_wr;
  logic [1:0]  push_page;
  logic [3:0]  push_word;
  assign push_page_wr = wr_fire && (wr_addr[ADDR_W-1:8] == PUSH_OFF[ADDR_W-1:8]);
  assign push_page = wr_addr[7:6];
  assign push_word = wr_addr[5:2];

  // per-SQ register blocks: 0x0500 + n * 0x20; the register within a block is bits 4:2
  localparam logic [15:0] SQBLK_OFF = bouncer_regs_pkg::REG_SQ_BASE_LO;
  localparam logic [2:0]  SQR_BASE_LO = 3'(bouncer_regs_pkg::REG_SQ_BASE_LO[4:2]);
  localparam logic [2:0]  SQR_BASE_HI = 3'(bouncer_regs_pkg::REG_SQ_BASE_HI[4:2]);
  localparam logic [2:0]  SQR_SIZE    = 3'(bouncer_regs_pkg::REG_SQ_SIZE[4:2]);
  localparam logic [2:0]  SQR_CI      = 3'(bouncer_regs_pkg::REG_SQ_CI[4:2]);
  localparam logic [2:0]  SQR_PI      = 3'(bouncer_regs_pkg::REG_SQ_PI[4:2]);
  logic        sqblk_wr;
  logic [1:0]  sqblk_n;
  logic [2:0]  sqblk_r;
  assign sqblk_wr = wr_fire && (wr_addr[15:7] == SQBLK_OFF[15:7]);
  assign sqblk_n  = wr_addr[6:5];
  assign sqblk_r  = wr_addr[4:2];

  // doorbell decode (SQ_DB and SQ_PUSH_DB share the layout)
  logic [7:0]  db_sq;
  logic        db_ok;
  assign db_sq = wr_data[bouncer_regs_pkg::REG_SQ_DB_SQ_LSB +: 8];
  assign db_ok = db_sq < 8'(NUM_SQ);

  // The sq_db pulse and the push page armed flags, written so that the doorbell check
  // (sq_db_acc, behind the compares' carry chains) meets the write decode as late as possible:
  // ABC takes carry outputs as early and otherwise stacks LUTs behind them (sq_db was 6.125
  // levels in the kernel). sq_db: a doorbell to a valid SQ that is accepted; the write decode
  // (db_any) is the flop's synchronous reset and its data the accept bit picked by the SQ
  // number bits. push_armed: a push page write or the SQ's SIZE write disarms it, and so do
  // the engine taking the image (push_take) and a push doorbell to the open SQ that is not
  // accepted; an accepted push doorbell arms it (first).
  logic              db_any;       // a doorbell write for a valid SQ
  logic [3:0]        db_acc4;      // sq_db_acc, 4 wide (SQs >= NUM_SQ: 0)
  logic [NUM_SQ-1:0] push_db_hit, push_clr;
  assign db_any  = wr_fire && (wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_DB
                               || wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_PUSH_DB) && db_ok;
  assign db_acc4 = 4'(sq_db_acc);
  always_comb begin
    for (int n = 0; n < NUM_SQ; n++) begin
      push_db_hit[n] = wr_fire && wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_PUSH_DB
                    && db_sq == 8'(n);
      push_clr[n]    = push_take[n]
                    || (push_page_wr && push_page == 2'(n))
                    || (sqblk_wr && sqblk_n == 2'(n) && sqblk_r == SQR_SIZE)
                    || (push_db_hit[n] && sq_open_q[n]);
    end
  end
  always_ff @(posedge clk) begin
    // a doorbell in the cycle of CTRL.RESET's reset is void, like the ring it named
    sq_db_q <= (rst || soft_rst || !db_any) ? 1'b0 : db_acc4[db_sq[1:0]];
    for (int n = 0; n < NUM_SQ; n++)
      push_armed_q[n] <= !rst && !soft_rst && ((push_db_hit[n] && sq_db_acc[n])
                                               || (push_armed_q[n] && !push_clr[n]));
  end

  // Each SQ's PI in a block of its own, for the same reason: the write decode (pi_db_dec: a
  // doorbell write naming SQ n) is formed beside the check, and the accept bit is the last AND
  // in front of the flop's enable (the PI was the kernel's deepest path at 6.125 levels while
  // it sat inside the register write case). The SIZE write and a reset clear it.
  logic [NUM_SQ-1:0] pi_db_dec, pi_clr;
  always_comb begin
    for (int n = 0; n < NUM_SQ; n++) begin
      pi_db_dec[n] = wr_fire && !push_page_wr && !sqblk_wr
                  && (wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_DB
                      || wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_PUSH_DB)
                  && db_sq == 8'(n);
      pi_clr[n]    = sqblk_wr && sqblk_n == 2'(n) && sqblk_r == SQR_SIZE;
    end
  end
  always_ff @(posedge clk) begin
    for (int n = 0; n < NUM_SQ; n++) begin
      if (any_rst || pi_clr[n]) sq_pi_q[n] <= '0;
      else if (pi_db_dec[n] && sq_db_acc[n]) sq_pi_q[n] <= wr_data[14:0];
    end
  end

  always_ff @(posedge clk) begin
    sq_reset_q  <= '0;
    sq_db_push_q <= 1'b0;
    cq_reset_q  <= 1'b0;
    cqp_reset_q <= 1'b0;
    ccq_reset_q <= 1'b0;
    aeq_reset_q <= 1'b0;
    probe_clr_q <= 1'b0;
    cap_clr_q   <= 1'b0;
    cycle_q     <= cycle_q + 64'd1;

    if (s_axil_bready) bvalid_q <= 1'b0;
    if (wr_fire) bvalid_q <= 1'b1;

    if (push_page_wr) begin
      for (int n = 0; n < NUM_SQ; n++) begin
        if (push_page == 2'(n)) begin
          for (int w = 0; w < 16; w++) begin
            if (push_word == 4'(w))
              push_q[n][32*w +: 32] <= merge(push_q[n][32*w +: 32], wr_data, s_axil_wstrb);
          end
        end
      end
    end else if (sqblk_wr) begin
      for (int n = 0; n < NUM_SQ; n++) begin
        if (sqblk_n == 2'(n)) begin
          if (sqblk_r == SQR_BASE_LO) sq_base_q[n][31:0]  <= wr_data;
          if (sqblk_r == SQR_BASE_HI) sq_base_q[n][63:32] <= wr_data;
          if (sqblk_r == SQR_SIZE) begin
            sq_size_q[n]    <= clamp_log2(wr_data);
            sq_reset_q[n]   <= 1'b1;
            sq_qerr_q[n]    <= bouncer_regs_pkg::QERR_CAUSE_NONE;
          end
        end
      end
    end else if (wr_fire) begin
      case (wr_addr[15:0])
        bouncer_regs_pkg::REG_CTRL: begin
          enable_q   <= wr_data[bouncer_regs_pkg::REG_CTRL_ENABLE_LSB];
          loopback_q <= wr_data[bouncer_regs_pkg::REG_CTRL_LOOPBACK_LSB];
          if (wr_data[bouncer_regs_pkg::REG_CTRL_RESET_LSB]) reset_req_q <= 1'b1;
        end
        bouncer_regs_pkg::REG_SCRATCH:     scratch_q <= merge(scratch_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_SQ_DB, bouncer_regs_pkg::REG_SQ_PUSH_DB: begin
          // The pulse's SQ, index and kind follow every doorbell (they only mean something
          // with the sq_db pulse), so they do not wait for the check.
          sq_db_sq_q   <= db_sq[1:0];
          sq_db_pi_q   <= wr_data[14:0];
          sq_db_push_q <= (wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_PUSH_DB);
          if (db_ok) begin
            for (int n = 0; n < NUM_SQ; n++) begin
              if (db_sq == 8'(n)) begin
                // A doorbell to an open SQ sets its cause (NONE when it is accepted: an open
                // SQ's cause is NONE already) and, if accepted, its PI; a push doorbell also
                // sets the page's index (only meaningful while armed; push_armed_q above
                // arms the page when the doorbell is accepted and disarms it when not). A
                // doorbell to an SQ in error changes nothing.
                if (sq_open_q[n]) begin
                  sq_qerr_q[n] <= sq_db_cause[n];
                  if (wr_addr[15:0] == bouncer_regs_pkg::REG_SQ_PUSH_DB)
                    push_idx_q[n] <= wr_data[14:0] - 15'd1;
                end
              end
            end
          end else begin
            st_db_bad_q <= st_db_bad_q + 32'd1;
          end
        end
        bouncer_regs_pkg::REG_CQ_BASE_LO:  cq_base_q[31:0] <= wr_data;
        bouncer_regs_pkg::REG_CQ_BASE_HI:  cq_base_q[63:32] <= wr_data;
        bouncer_regs_pkg::REG_CQ_SIZE: begin
          cq_size_q  <= clamp_log2(wr_data);
          cq_head_q  <= '0;
          cq_reset_q <= 1'b1;
        end
        bouncer_regs_pkg::REG_CQ_HEAD:     cq_head_q <= wr_data[14:0];
        bouncer_regs_pkg::REG_CQP_BASE_LO: cqp_base_q[31:0] <= wr_data;
        bouncer_regs_pkg::REG_CQP_BASE_HI: cqp_base_q[63:32] <= wr_data;
        bouncer_regs_pkg::REG_CQP_SIZE: begin
          cqp_size_q  <= clamp_log2(wr_data);
          cqp_pi_q    <= '0;
          cqp_reset_q <= 1'b1;
          cqp_qerr_q  <= bouncer_regs_pkg::QERR_CAUSE_NONE;
        end
        bouncer_regs_pkg::REG_CQP_DB: begin   // as for an SQ
          if (cqp_open_q) cqp_qerr_q <= cqp_db_cause;
          if (cqp_db_acc) cqp_pi_q <= wr_data[14:0];
        end
        bouncer_regs_pkg::REG_CCQ_BASE_LO: ccq_base_q[31:0] <= wr_data;
        bouncer_regs_pkg::REG_CCQ_BASE_HI: ccq_base_q[63:32] <= wr_data;
        bouncer_regs_pkg::REG_CCQ_SIZE: begin
          ccq_size_q  <= clamp_log2(wr_data);
          ccq_head_q  <= '0;
          ccq_reset_q <= 1'b1;
        end
        bouncer_regs_pkg::REG_CCQ_HEAD:    ccq_head_q <= wr_data[14:0];
        bouncer_regs_pkg::REG_AEQ_BASE_LO: aeq_base_q[31:0] <= merge(aeq_base_q[31:0], wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_AEQ_BASE_HI: aeq_base_q[63:32] <= merge(aeq_base_q[63:32], wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_AEQ_SIZE: begin
          aeq_size_q  <= clamp_log2(merge({28'd0, aeq_size_q}, wr_data, s_axil_wstrb));
          aeq_head_q  <= '0;
          aeq_reset_q <= 1'b1;
        end
        bouncer_regs_pkg::REG_AEQ_HEAD: begin
          aeq_head_q <= 15'(merge({17'd0, aeq_head_q}, wr_data, s_axil_wstrb));
        end
        bouncer_regs_pkg::REG_PD_BASE_LO:  pd_base_q[31:0] <= merge(pd_base_q[31:0], wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_PD_BASE_HI:  pd_base_q[63:32] <= merge(pd_base_q[63:32], wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_TIMER_TICK:  timer_tick_q <= (wr_merged_tick == 32'd0) ? 32'd1 : wr_merged_tick;
        bouncer_regs_pkg::REG_RTO_INIT:    rto_init_q <= merge(rto_init_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_RTO_MAX:     rto_max_q <= merge(rto_max_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_RTX_MAX:     if (s_axil_wstrb[0]) rtx_max_q <= wr_data[3:0];
        bouncer_regs_pkg::REG_MPA_TIMEOUT: mpa_timeout_q <= merge(mpa_timeout_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_MPA_REASM_TIMEOUT:
          mpa_reasm_timeout_q <= merge(mpa_reasm_timeout_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_FIN_TIMEOUT: fin_timeout_q <= merge(fin_timeout_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_TIME_WAIT:   time_wait_q <= merge(time_wait_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_TCP_CFG: begin
          if (s_axil_wstrb[0]) tcp_mss_q[7:0]  <= wr_data[bouncer_regs_pkg::REG_TCP_CFG_MSS_LSB +: 8];
          if (s_axil_wstrb[1]) tcp_mss_q[15:8] <= wr_data[bouncer_regs_pkg::REG_TCP_CFG_MSS_LSB + 8 +: 8];
          if (s_axil_wstrb[2]) tcp_wscale_q    <= wr_data[bouncer_regs_pkg::REG_TCP_CFG_WSCALE_LSB +: 4];
        end
        bouncer_regs_pkg::REG_TCP_WND:     tcp_wnd_q <= 16'(merge({16'd0, tcp_wnd_q}, wr_data, s_axil_wstrb));
        bouncer_regs_pkg::REG_CM_ROUTE: begin
          if (s_axil_wstrb[0]) cm_promisc_q <= wr_data[bouncer_regs_pkg::REG_CM_ROUTE_PROMISC_LSB];
        end
        bouncer_regs_pkg::REG_DMA_TIMEOUT: dma_timeout_q <= merge(dma_timeout_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_PORT_MAC_LO:
          port_mac_q[31:0] <= merge(port_mac_q[31:0], wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_PORT_MAC_HI: begin
          if (s_axil_wstrb[0]) port_mac_q[39:32] <= wr_data[7:0];
          if (s_axil_wstrb[1]) port_mac_q[47:40] <= wr_data[15:8];
        end
        bouncer_regs_pkg::REG_PORT_IP: port_ip_q <= merge(port_ip_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_HASH_KEY: hash_key_q <= merge(hash_key_q, wr_data, s_axil_wstrb);
        bouncer_regs_pkg::REG_CAP_CTRL: begin
          cap_freeze_q <= wr_data[bouncer_regs_pkg::REG_CAP_CTRL_FREEZE_LSB];
          cap_clr_q    <= wr_data[bouncer_regs_pkg::REG_CAP_CTRL_CLEAR_LSB];
        end
        bouncer_regs_pkg::REG_CAP_INDEX: cap_index_q <= wr_data & CAP_INDEX_MASK;
        bouncer_regs_pkg::REG_PROBE_CTRL: begin
          if (s_axil_wstrb[0]) begin
            probe_en_q  <= (PROBES != 0) && wr_data[bouncer_regs_pkg::REG_PROBE_CTRL_ENABLE_LSB];
            probe_clr_q <= (PROBES != 0) && wr_data[bouncer_regs_pkg::REG_PROBE_CTRL_CLEAR_LSB];
          end
        end
        default: begin
          for (int i = 0; i < bouncer_regs_pkg::REG_ISN_KEY_COUNT; i++) begin
            if (wr_addr[15:0] == bouncer_regs_pkg::REG_ISN_KEY + 16'(4 * i))
              isn_key_q[32*i +: 32] <= merge(isn_key_q[32*i +: 32], wr_data, s_axil_wstrb);
          end
        end
      endcase
    end

    for (int i = 0; i < NUM_STAT_CM; i++)
      if (stat_cm[i]) st_cm_q[32*i +: 32] <= st_cm_q[32*i +: 32] + 32'd1;

    if (stat_tx_frame) begin
      st_frames_q <= st_frames_q + 32'd1;
      st_bytes_q  <= st_bytes_q + {16'd0, stat_tx_bytes};
    end
    if (stat_sq_wqe)        st_sq_wqes_q   <= st_sq_wqes_q + 32'd1;
    if (stat_sq_error)      st_sq_err_q    <= st_sq_err_q + 32'd1;
    if (stat_push_used)     st_push_used_q <= st_push_used_q + 32'd1;
    if (stat_push_dropped)  st_push_drop_q <= st_push_drop_q + 32'd1;
    if (stat_cqp_wqe)       st_cqp_wqes_q  <= st_cqp_wqes_q + 32'd1;
    if (stat_latency_valid) st_latency_q   <= stat_latency;
    if (stat_dma_rd_err)    st_dma_rd_err_q <= st_dma_rd_err_q + 32'd1;
    if (stat_dma_wr_err)    st_dma_wr_err_q <= st_dma_wr_err_q + 32'd1;
    if (stat_dma_timeout)   st_dma_to_q     <= st_dma_to_q + 32'd1;
    if (stat_rx_filtered)   st_rx_filt_q    <= st_rx_filt_q + 32'd1;
    if (stat_rx_stray)      st_rx_stray_q   <= st_rx_stray_q + 32'd1;
    if (stat_aeq_refused)   st_aeq_ref_q    <= st_aeq_ref_q + 32'd1;
    if (stat_evt_coalesced) st_evt_coal_q   <= st_evt_coal_q + 32'd1;
    if (stat_arp_replied)   st_arp_rep_q    <= st_arp_rep_q + 32'd1;
    if (stat_arp_dropped)   st_arp_drop_q   <= st_arp_drop_q + 32'd1;
    if (stat_syn_drop_queue) st_syn_dropq_q <= st_syn_dropq_q + 32'd1;

    // A reset, or CTRL.RESET carried out (soft_rst): the host-visible queue state goes back to
    // its reset values (the engines' own indices are reset with it); configuration,
    // statistics and the AXI4-Lite handshake are reset by a reset only (below). One reset
    // condition per register, so it maps onto the flop's reset input.
    if (any_rst) begin
      loopback_q   <= 1'b0;
      for (int n = 0; n < NUM_SQ; n++) begin
        sq_base_q[n]  <= '0;
        sq_size_q[n]  <= 4'(bouncer_regs_pkg::RING_LOG2_MIN);
        push_q[n]     <= '0;
        push_idx_q[n] <= '0;
        sq_qerr_q[n]  <= bouncer_regs_pkg::QERR_CAUSE_NONE;
      end
      sq_reset_q   <= '0;
      sq_db_pi_q   <= '0;
      sq_db_push_q <= 1'b0;
      cq_base_q    <= '0;
      cqp_base_q   <= '0;
      ccq_base_q   <= '0;
      cq_size_q    <= 4'(bouncer_regs_pkg::RING_LOG2_MIN);
      cqp_size_q   <= 4'(bouncer_regs_pkg::RING_LOG2_MIN);
      ccq_size_q   <= 4'(bouncer_regs_pkg::RING_LOG2_MIN);
      cqp_qerr_q   <= bouncer_regs_pkg::QERR_CAUSE_NONE;
      cq_head_q    <= '0;
      cqp_pi_q     <= '0;
      ccq_head_q   <= '0;
      aeq_base_q   <= '0;
      aeq_size_q   <= 4'(bouncer_regs_pkg::RING_LOG2_MIN);
      aeq_head_q   <= '0;
      aeq_reset_q  <= 1'b0;
      pd_base_q    <= '0;
      reset_req_q  <= 1'b0;
    end
    if (rst) begin
      bvalid_q     <= 1'b0;
      scratch_q    <= '0;
      enable_q     <= 1'b0;
      sq_db_sq_q   <= '0;
      st_db_bad_q  <= '0;
      cycle_q      <= '0;
      st_frames_q    <= '0;
      st_bytes_q     <= '0;
      st_sq_wqes_q   <= '0;
      st_sq_err_q    <= '0;
      st_push_used_q <= '0;
      st_push_drop_q <= '0;
      st_cqp_wqes_q  <= '0;
      st_latency_q   <= '0;
      isn_key_q      <= '0;
      hash_key_q     <= 32'h6A09E667;
      timer_tick_q   <= 32'd256;
      rto_init_q     <= 32'd976563;
      rto_max_q      <= 32'd11718750;
      rtx_max_q      <= 4'd8;
      mpa_timeout_q  <= 32'd63476563;
      mpa_reasm_timeout_q <= 32'd1953125;
      fin_timeout_q  <= 32'd58593750;
      time_wait_q    <= 32'd97656;
      tcp_mss_q      <= 16'd1460;
      tcp_wscale_q   <= 4'd0;
      tcp_wnd_q      <= 16'(bouncer_regs_pkg::MPA_REQ_MAX);
      cm_promisc_q   <= 1'b1;
      st_cm_q        <= '0;
      probe_en_q     <= 1'b0;
      probe_clr_q    <= 1'b0;
      dma_timeout_q   <= 32'd250000;
      st_dma_rd_err_q <= '0;
      st_dma_wr_err_q <= '0;
      st_dma_to_q     <= '0;
      port_mac_q      <= '0;
      port_ip_q       <= '0;
      st_rx_filt_q    <= '0;
      st_rx_stray_q   <= '0;
      st_aeq_ref_q    <= '0;
      st_evt_coal_q   <= '0;
      st_arp_rep_q    <= '0;
      st_arp_drop_q   <= '0;
      cap_freeze_q    <= 1'b0;
      cap_clr_q       <= 1'b0;
      cap_index_q     <= '0;
      st_syn_dropq_q  <= '0;
    end
  end

  assign wr_merged_tick = merge(timer_tick_q, wr_data, s_axil_wstrb);

  // ------------------------------------------------------------------ read channel
  // Two steps, so that no path runs from ARADDR through the address compare into the wide
  // read mux (that was 6.5 LUT levels):
  // 1. decode: while ARVALID is up (and no response is held), the address is pre-decoded into
  //    a registered one-hot rd_grp_q of its 64-byte group (16 words; all 0 for addresses past
  //    the last group that holds a register) and the registered word index rd_word_q
  //    inside the group; rd_dec_q says they are valid. ARREADY is rd_dec_q, so AR is taken
  //    the cycle after ARVALID rises (the master holds ARADDR until then). Registering the
  //    group and the word rather than a one-hot of all 512 words keeps the decode state (and
  //    the formal models) small; the two read side effects get their own decoded flops.
  // 2. AR handshake: per group a 16:1 mux tree on rd_word_q (no compare), ANDed with the
  //    group's select bit and ORed over the groups, picks the value into rdata_q, and read side
  //    effects (CYCLE_HI latch, probe_pop) happen, exactly once per read. RVALID follows one
  //    cycle later and is held until RREADY.
  // A new decode may start in the cycle the R handshake ends a read, so back-to-back reads
  // take 2 cycles each, as with a plain registered mux.
  // 64-byte groups 0 .. RD_GRPS - 1 hold every readable register (the SQ blocks are last)
  localparam int RD_GRPS = (32'(SQBLK_OFF) + 32 * NUM_SQ + 63) / 64;
  logic                rvalid_q;
  logic [31:0]         rdata_q;
  logic [31:0]         rd_mux;
  logic                rd_dec_q;
  logic                ar_fire;
  logic [RD_GRPS-1:0]  rd_grp_d, rd_grp_q;
  logic [3:0]          rd_word_q;
  logic                rd_cyc_lo_q, rd_probe_lo_q;   // the word is CYCLE_LO / PROBE_DATA_LO
  // The probe FIFO's head and count, registered: a PROBE_DATA or PROBE_STATUS read returns
  // them as of the cycle before its handshake, the decode cycle. The head then is the one the
  // read pops (a pop moves it only at a PROBE_DATA_LO handshake, and a record counted by an
  // earlier PROBE_STATUS read is already there); a record pushed in that very cycle is counted
  // by the next read. Taken straight from the FIFO (LUT-RAM read, pointer subtraction) into
  // the read mux, these paths are over the ap_clk depth budget.
  logic [63:0]         probe_head_q;
  logic [7:0]          probe_count_q;
  // the read table: word w (address 4 w) at bits 32 w +: 32; words not set read 0
  logic [RD_GRPS*16*32-1:0] rd_tab;

  assign ar_fire        = s_axil_arvalid && rd_dec_q;
  assign s_axil_arready = rd_dec_q;
  assign s_axil_rvalid  = rvalid_q;
  assign s_axil_rdata   = rdata_q;
  assign s_axil_rresp   = 2'b00;

  always_comb begin
    for (int g = 0; g < RD_GRPS; g++) rd_grp_d[g] = s_axil_araddr[15:6] == 10'(g);
  end

  // Bit offset in rd_tab of the register at byte offset off (a constant, a multiple of 4).
  function automatic int rd_at(input logic [15:0] off);
    rd_at = 8 * 32'(off);
  endfunction
  // The word w of one group's 16 (t: 16 words, word w at bits 32 w +: 32): a binary mux tree
  // on the registered word index (constant-0 words fold away).
  function automatic logic [31:0] rd_word_mux(input logic [511:0] t, input logic [3:0] w);
    logic [255:0] l1;
    logic [127:0] l2;
    logic [63:0]  l3;
    for (int i = 0; i < 8; i++) l1[32*i +: 32] = w[0] ? t[64*i + 32 +: 32] : t[64*i +: 32];
    for (int i = 0; i < 4; i++) l2[32*i +: 32] = w[1] ? l1[64*i + 32 +: 32] : l1[64*i +: 32];
    for (int i = 0; i < 2; i++) l3[32*i +: 32] = w[2] ? l2[64*i + 32 +: 32] : l2[64*i +: 32];
    rd_word_mux = w[3] ? l3[63:32] : l3[31:0];
  endfunction

  localparam logic [31:0] CAPS_VALUE =
      (32'(DATA_BYTES) << bouncer_regs_pkg::REG_CAPS_DATA_BYTES_LSB)
    | (32'(CTX_DEPTH_LOG2) << bouncer_regs_pkg::REG_CAPS_CTX_LOG2_LSB)
    | (32'(NUM_SQ) << bouncer_regs_pkg::REG_CAPS_NUM_SQ_LSB)
    | (32'd1 << bouncer_regs_pkg::REG_CAPS_PUSH_LSB)
    | (32'd1 << bouncer_regs_pkg::REG_CAPS_INLINE_LSB)
    | (32'(PROBES != 0) << bouncer_regs_pkg::REG_CAPS_PROBES_LSB);

  // QERR: SQn at bits 4n+3:4n (0 for SQs >= NUM_SQ), CQP at 19:16
  logic [31:0] qerr_value;
  always_comb begin
    qerr_value = 32'd0;
    for (int n = 0; n < NUM_SQ; n++) qerr_value[4*n +: 4] = sq_qerr_q[n];
    qerr_value[bouncer_regs_pkg::REG_QERR_CQP_LSB +: 4] = cqp_qerr_q;
  end

  // The read table: every readable register at its word (rd_tab bits 32 w +: 32 for the
  // register at 4 w). Words not set (ISN_KEY is write-only, gaps, blocks of SQs >= NUM_SQ)
  // read 0; so does every address past the last group (no group selected), the push pages
  // included.
  always_comb begin
    for (int g = 0; g < RD_GRPS; g++) rd_tab[512*g +: 512] = '0;
    rd_tab[rd_at(bouncer_regs_pkg::REG_ID) +: 32]      = bouncer_regs_pkg::ID_VALUE;
    rd_tab[rd_at(bouncer_regs_pkg::REG_VERSION) +: 32] = bouncer_regs_pkg::VERSION_VALUE;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAPS) +: 32]    = CAPS_VALUE;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CTRL) +: 32] =
        (32'(enable_q) << bouncer_regs_pkg::REG_CTRL_ENABLE_LSB)
      | (32'(loopback_q) << bouncer_regs_pkg::REG_CTRL_LOOPBACK_LSB)
      | (32'(reset_req_q) << bouncer_regs_pkg::REG_CTRL_RESET_LSB);
    rd_tab[rd_at(bouncer_regs_pkg::REG_STATUS) +: 32]      = {23'd0, status};
    rd_tab[rd_at(bouncer_regs_pkg::REG_SCRATCH) +: 32]     = scratch_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CYCLE_LO) +: 32]    = cycle_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CYCLE_HI) +: 32]    = cycle_hi_latch_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_QERR) +: 32]        = qerr_value;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQ_BASE_LO) +: 32]  = cq_base_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQ_BASE_HI) +: 32]  = cq_base_q[63:32];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQ_SIZE) +: 32]     = {28'd0, cq_size_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQ_HEAD) +: 32]     = {17'd0, cq_head_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQ_TAIL) +: 32]     = {17'd0, cq_tail};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQP_BASE_LO) +: 32] = cqp_base_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQP_BASE_HI) +: 32] = cqp_base_q[63:32];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQP_SIZE) +: 32]    = {28'd0, cqp_size_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CQP_CI) +: 32]      = {17'd0, cqp_ci};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CCQ_BASE_LO) +: 32] = ccq_base_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CCQ_BASE_HI) +: 32] = ccq_base_q[63:32];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CCQ_SIZE) +: 32]    = {28'd0, ccq_size_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CCQ_HEAD) +: 32]    = {17'd0, ccq_head_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CCQ_TAIL) +: 32]    = {17'd0, ccq_tail};
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_TX_FRAMES) +: 32]    = st_frames_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_TX_BYTES) +: 32]     = st_bytes_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_SQ_WQES) +: 32]      = st_sq_wqes_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_SQ_ERRORS) +: 32]    = st_sq_err_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_PUSH_USED) +: 32]    = st_push_used_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_PUSH_DROPPED) +: 32] = st_push_drop_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_CQP_WQES) +: 32]     = st_cqp_wqes_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_LAST_LATENCY) +: 32] = st_latency_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_SQ_DB_BAD) +: 32]    = st_db_bad_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_AEQ_BASE_LO) +: 32] = aeq_base_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_AEQ_BASE_HI) +: 32] = aeq_base_q[63:32];
    rd_tab[rd_at(bouncer_regs_pkg::REG_AEQ_SIZE) +: 32]    = {28'd0, aeq_size_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_AEQ_HEAD) +: 32]    = {17'd0, aeq_head_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_AEQ_TAIL) +: 32]    = {17'd0, aeq_tail};
    rd_tab[rd_at(bouncer_regs_pkg::REG_PD_BASE_LO) +: 32]  = pd_base_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_PD_BASE_HI) +: 32]  = pd_base_q[63:32];
    rd_tab[rd_at(bouncer_regs_pkg::REG_TIMER_TICK) +: 32]  = timer_tick_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_RTO_INIT) +: 32]    = rto_init_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_RTO_MAX) +: 32]     = rto_max_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_RTX_MAX) +: 32]     = {28'd0, rtx_max_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_MPA_TIMEOUT) +: 32] = mpa_timeout_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_MPA_REASM_TIMEOUT) +: 32] = mpa_reasm_timeout_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_FIN_TIMEOUT) +: 32] = fin_timeout_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_TIME_WAIT) +: 32]   = time_wait_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_TCP_CFG) +: 32] =
        (32'(tcp_mss_q) << bouncer_regs_pkg::REG_TCP_CFG_MSS_LSB)
      | (32'(tcp_wscale_q) << bouncer_regs_pkg::REG_TCP_CFG_WSCALE_LSB);
    rd_tab[rd_at(bouncer_regs_pkg::REG_TCP_WND) +: 32]     = {16'd0, tcp_wnd_q};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CM_CONNS) +: 32]    = {15'd0, cm_conns};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CM_ROUTE) +: 32] =
        32'(cm_promisc_q) << bouncer_regs_pkg::REG_CM_ROUTE_PROMISC_LSB;
    rd_tab[rd_at(bouncer_regs_pkg::REG_DMA_TIMEOUT) +: 32]      = dma_timeout_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_DMA_RD_ERR) +: 32]  = st_dma_rd_err_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_DMA_WR_ERR) +: 32]  = st_dma_wr_err_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_DMA_TIMEOUT) +: 32] = st_dma_to_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_PORT_MAC_LO) +: 32]      = port_mac_q[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_PORT_MAC_HI) +: 32]      = {16'd0, port_mac_q[47:32]};
    rd_tab[rd_at(bouncer_regs_pkg::REG_PORT_IP) +: 32]          = port_ip_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_RX_FILTERED) +: 32] = st_rx_filt_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_RX_STRAY) +: 32]    = st_rx_stray_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_AEQ_REFUSED) +: 32] = st_aeq_ref_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_EVT_COALESCED) +: 32] = st_evt_coal_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_ARP_REPLIED) +: 32] = st_arp_rep_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_ARP_DROPPED) +: 32] = st_arp_drop_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_CTRL) +: 32] =
        32'(cap_freeze_q) << bouncer_regs_pkg::REG_CAP_CTRL_FREEZE_LSB;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_STATUS) +: 32]   = cap_status;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_INDEX) +: 32]    = cap_index_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_LEN) +: 32]      = {16'd0, cap_len};
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_STAMP_LO) +: 32] = cap_stamp[31:0];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_STAMP_HI) +: 32] = cap_stamp[63:32];
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_END_LO) +: 32]   = cap_end;
    rd_tab[rd_at(bouncer_regs_pkg::REG_CAP_DATA) +: 32]     = cap_data;
    rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_SYN_DROP_QUEUE) +: 32] = st_syn_dropq_q;
    rd_tab[rd_at(bouncer_regs_pkg::REG_PROBE_CTRL) +: 32] =
        32'(probe_en_q) << bouncer_regs_pkg::REG_PROBE_CTRL_ENABLE_LSB;
    if (PROBES != 0) begin
      rd_tab[rd_at(bouncer_regs_pkg::REG_PROBE_STATUS) +: 32] =
          (32'(probe_count_q) << bouncer_regs_pkg::REG_PROBE_STATUS_COUNT_LSB)
        | (32'(probe_overflow) << bouncer_regs_pkg::REG_PROBE_STATUS_OVERFLOW_LSB)
        | (32'd6 << bouncer_regs_pkg::REG_PROBE_STATUS_DEPTH_LOG2_LSB);
      rd_tab[rd_at(bouncer_regs_pkg::REG_PROBE_LOST) +: 32]    = probe_lost;
      rd_tab[rd_at(bouncer_regs_pkg::REG_PROBE_DATA_LO) +: 32] = probe_head_q[31:0];
    end
    rd_tab[rd_at(bouncer_regs_pkg::REG_PROBE_DATA_HI) +: 32] = probe_hi_q;
    // the CM statistics: STAT_RX_FRAMES + 4 i
    for (int i = 0; i < NUM_STAT_CM; i++)
      rd_tab[rd_at(bouncer_regs_pkg::REG_STAT_RX_FRAMES + 16'(4 * i)) +: 32] = st_cm_q[32*i +: 32];
    // the per-SQ register blocks (SQ_BASE_LO + n * 0x20)
    for (int n = 0; n < NUM_SQ; n++) begin
      rd_tab[rd_at({SQBLK_OFF[15:7], 2'(n), SQR_BASE_LO, 2'b00}) +: 32] = sq_base_q[n][31:0];
      rd_tab[rd_at({SQBLK_OFF[15:7], 2'(n), SQR_BASE_HI, 2'b00}) +: 32] = sq_base_q[n][63:32];
      rd_tab[rd_at({SQBLK_OFF[15:7], 2'(n), SQR_SIZE, 2'b00}) +: 32]    = {28'd0, sq_size_q[n]};
      rd_tab[rd_at({SQBLK_OFF[15:7], 2'(n), SQR_CI, 2'b00}) +: 32]      = {17'd0, sq_ci[15*n+:15]};
      rd_tab[rd_at({SQBLK_OFF[15:7], 2'(n), SQR_PI, 2'b00}) +: 32]      = {17'd0, sq_pi_q[n]};
    end
  end

  // The read mux: in every group the word picked by rd_word_q, ANDed with the group's select
  // bit, ORed over the groups (at most one select is set): a shallow mux from flops.
  always_comb begin
    rd_mux = 32'd0;
    for (int g = 0; g < RD_GRPS; g++)
      rd_mux |= {32{rd_grp_q[g]}} & rd_word_mux(rd_tab[512*g +: 512], rd_word_q);
  end

  always_ff @(posedge clk) begin
    // decode: a new address is taken when no response is held after this cycle
    rd_dec_q <= !rd_dec_q && s_axil_arvalid && (!rvalid_q || s_axil_rready);
    if (!rd_dec_q) begin
      rd_grp_q      <= rd_grp_d;
      rd_word_q     <= s_axil_araddr[5:2];
      rd_cyc_lo_q   <= s_axil_araddr[15:2] == bouncer_regs_pkg::REG_CYCLE_LO[15:2];
      rd_probe_lo_q <= s_axil_araddr[15:2] == bouncer_regs_pkg::REG_PROBE_DATA_LO[15:2];
    end
    probe_head_q  <= probe_head;
    probe_count_q <= probe_count;
    if (s_axil_rready) rvalid_q <= 1'b0;
    if (ar_fire) begin
      rvalid_q <= 1'b1;
      rdata_q  <= rd_mux;
      if (rd_cyc_lo_q) cycle_hi_latch_q <= cycle_q[63:32];
      if (rd_probe_lo_q) probe_hi_q <= (PROBES != 0) ? probe_head_q[63:32] : 32'd0;
    end
    if (rst) begin
      rd_dec_q         <= 1'b0;
      rvalid_q         <= 1'b0;
      rdata_q          <= '0;
      cycle_hi_latch_q <= '0;
      probe_hi_q       <= '0;
    end
  end

  // ------------------------------------------------------------------ outputs
  assign ctrl_enable   = enable_q;
  assign ctrl_loopback = loopback_q;
  assign ctrl_reset_req = reset_req_q;
  for (genvar n = 0; n < NUM_SQ; n++) begin : g_sq_out
    assign sq_base[64*n +: 64]    = sq_base_q[n];
    assign sq_size_log2[4*n +: 4] = sq_size_q[n];
    assign sq_pi[15*n +: 15]      = sq_pi_q[n];
    assign push_wqe[512*n +: 512] = push_q[n];
    assign push_idx[15*n +: 15]   = push_idx_q[n];
  end
  assign sq_reset      = sq_reset_q;
  assign sq_db         = sq_db_q;
  assign sq_db_sq      = sq_db_sq_q;
  assign sq_db_push    = sq_db_push_q;
  assign sq_db_pi      = sq_db_pi_q;
  assign push_armed    = push_armed_q;
  assign cq_base       = cq_base_q;
  assign cq_size_log2  = cq_size_q;
  assign cq_reset      = cq_reset_q;
  assign cq_head       = cq_head_q;
  assign cqp_base      = cqp_base_q;
  assign cqp_size_log2 = cqp_size_q;
  assign cqp_reset     = cqp_reset_q;
  assign cqp_pi        = cqp_pi_q;
  assign ccq_base      = ccq_base_q;
  assign ccq_size_log2 = ccq_size_q;
  assign ccq_reset     = ccq_reset_q;
  assign ccq_head      = ccq_head_q;
  assign cycle_count   = cycle_q;
  assign aeq_base      = aeq_base_q;
  assign aeq_size_log2 = aeq_size_q;
  assign aeq_reset     = aeq_reset_q;
  assign aeq_head      = aeq_head_q;
  assign pd_base       = pd_base_q;
  assign isn_key       = isn_key_q;
  assign hash_key      = hash_key_q;
  assign timer_tick    = timer_tick_q;
  assign rto_init      = rto_init_q;
  assign rto_max       = rto_max_q;
  assign rtx_max       = rtx_max_q;
  assign mpa_timeout   = mpa_timeout_q;
  assign mpa_reasm_timeout = mpa_reasm_timeout_q;
  assign fin_timeout   = fin_timeout_q;
  assign time_wait     = time_wait_q;
  assign tcp_mss       = tcp_mss_q;
  assign tcp_wscale    = tcp_wscale_q;
  assign tcp_wnd       = tcp_wnd_q;
  assign cm_promisc    = cm_promisc_q;
  assign port_mac      = port_mac_q;
  assign port_ip       = port_ip_q;
  assign dma_timeout   = dma_timeout_q;
  assign probe_enable  = probe_en_q;
  assign probe_clear   = probe_clr_q;
  assign probe_pop     = (PROBES != 0) && ar_fire && rd_probe_lo_q;
  assign cap_freeze    = cap_freeze_q;
  assign cap_clear     = cap_clr_q;
  assign cap_index     = cap_index_q;

endmodule
`default_nettype wire
