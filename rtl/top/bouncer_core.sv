// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_core: the Bouncer offload, one clock domain.
//
//  s_axis_rx -> frame FIFO -> bouncer_rx_parser --records--> bouncer_cm_engine --> ctrl builder --+
//                                  |                          ^   |  |  |  |                       |
//                                  +--payload--> mpa_req_asm -+   |  |  |  +--> reject builder ----+-> tx_arb -> m_axis_tx
//                                                                 |  |  +--> AEQ writer (events)
//      conn_table (4-tuple -> cm_id), id_alloc, cm_timer, listener_table, isn_hash <-+  +--> cm_ctx_table
//
//  RX FIFO output --(watched)--> bouncer_arp_responder ------------------------------------------> tx_arb
//
//  s_axil -> bouncer_axil_regs --doorbells/push--> bouncer_sq_engine --reject(cm_id)--> bouncer_cm_engine
//                    |                                  +--> CQ writer (CQEs)
//                    +--> bouncer_cqp_engine --> cm_ctx_table (host contexts), listener_table; CCQ writer
//  m_axi <-- bouncer_dma_rd (CQP, SQ, CM) / bouncer_dma_wr (CCQ, CQ, CQP, AEQ, CM request PD)
//
// Parameters: DATA_W is the RX/TX stream width (64 or 512); CTX_DEPTH_LOG2 sizes the
// connection table (cm_id < 2**CTX_DEPTH_LOG2); PROBES = 0 compiles the latency probes
// (bouncer_probe, PROBE_* registers, CAPS.PROBES) out; NUM_SQ (1..4, CAPS.NUM_SQ) is the
// number of reject SQs, served round-robin by the one SQ engine; CAPTURE_LOG2 (0..6) sizes the
// on-card capture ring (bouncer_capture, CAP_* registers: the last 2**CAPTURE_LOG2 frames of
// each port direction), 0 removes it. The DMA master is 64 bits wide.
//
// Loopback (CTRL.LOOPBACK, for the card self-test): tx_arb's output goes into the core's own
// RX frame FIFO instead of m_axis_tx (m_axis_tx_tvalid stays 0), and frames arriving on
// s_axis_rx are discarded whole (s_axis_rx_tready stays 1) and counted in STAT_RX_OVERFLOW
// only. STAT_RX_FRAMES counts the frames that enter the RX FIFO, so in loopback it counts the
// looped frames, like STAT_TX_FRAMES (a looped frame the full FIFO drops counts in both
// STAT_RX_FRAMES and STAT_RX_OVERFLOW, as in normal mode). Each port switches only between
// two of its own frames, in an order that never lets two sources share the FIFO input:
// switching on, the RX port first, then the TX port; off, the TX port first, then the RX
// port. A frame waiting on m_axis_tx (tvalid high, tready low) is never withdrawn: the
// switch to loopback waits until it is taken. Looped frames take the normal RX path (FIFO,
// parser, CM engine), adding no latency of their own; the CQE latency still counts from the
// reject's first beat leaving tx_arb.
// See docs/architecture.md and docs/operations.md for the walk-through of one reject.
`default_nettype none
module bouncer_core #(
  parameter int DATA_W         = 64,  // TX AXI-Stream width: 64 or 512
  parameter int CTX_DEPTH_LOG2 = 10,  // connection-table depth
  parameter int AXIL_ADDR_W    = 16,
  parameter int AXI_ADDR_W     = 64,
  parameter int AXI_ID_W       = 4,
  parameter int PROBES         = 1,     // latency probes (bouncer_probe): 1 on, 0 compiled out
  parameter int NUM_SQ         = 4,     // reject send queues (1..4)
  parameter int CAPTURE_LOG2   = 4      // capture ring: 2**N frames per direction; 0 removes it
) (
  input  wire                    clk,
  input  wire                    rst,          // synchronous, active high

  // AXI4-Lite slave: registers, doorbells, push page (32-bit)
  input  wire [AXIL_ADDR_W-1:0]  s_axil_awaddr,
  input  wire [2:0]              s_axil_awprot,
  input  wire                    s_axil_awvalid,
  output logic                   s_axil_awready,
  input  wire [31:0]             s_axil_wdata,
  input  wire [3:0]              s_axil_wstrb,
  input  wire                    s_axil_wvalid,
  output logic                   s_axil_wready,
  output logic [1:0]             s_axil_bresp,
  output logic                   s_axil_bvalid,
  input  wire                    s_axil_bready,
  input  wire [AXIL_ADDR_W-1:0]  s_axil_araddr,
  input  wire [2:0]              s_axil_arprot,
  input  wire                    s_axil_arvalid,
  output logic                   s_axil_arready,
  output logic [31:0]            s_axil_rdata,
  output logic [1:0]             s_axil_rresp,
  output logic                   s_axil_rvalid,
  input  wire                    s_axil_rready,

  // AXI4 master: descriptor, private-data and context DMA, completion writes (64-bit)
  output logic [AXI_ID_W-1:0]    m_axi_awid,
  output logic [AXI_ADDR_W-1:0]  m_axi_awaddr,
  output logic [7:0]             m_axi_awlen,
  output logic [2:0]             m_axi_awsize,
  output logic [1:0]             m_axi_awburst,
  output logic [3:0]             m_axi_awcache,
  output logic [2:0]             m_axi_awprot,
  output logic                   m_axi_awvalid,
  input  wire                    m_axi_awready,
  output logic [63:0]            m_axi_wdata,
  output logic [7:0]             m_axi_wstrb,
  output logic                   m_axi_wlast,
  output logic                   m_axi_wvalid,
  input  wire                    m_axi_wready,
  input  wire [AXI_ID_W-1:0]     m_axi_bid,
  input  wire [1:0]              m_axi_bresp,
  input  wire                    m_axi_bvalid,
  output logic                   m_axi_bready,
  output logic [AXI_ID_W-1:0]    m_axi_arid,
  output logic [AXI_ADDR_W-1:0]  m_axi_araddr,
  output logic [7:0]             m_axi_arlen,
  output logic [2:0]             m_axi_arsize,
  output logic [1:0]             m_axi_arburst,
  output logic [3:0]             m_axi_arcache,
  output logic [2:0]             m_axi_arprot,
  output logic                   m_axi_arvalid,
  input  wire                    m_axi_arready,
  input  wire [AXI_ID_W-1:0]     m_axi_rid,
  input  wire [63:0]             m_axi_rdata,
  input  wire [1:0]              m_axi_rresp,
  input  wire                    m_axi_rlast,
  input  wire                    m_axi_rvalid,
  output logic                   m_axi_rready,

  // AXI-Stream TX: Ethernet frames without FCS, byte 0 in tdata[7:0]
  output logic [DATA_W-1:0]      m_axis_tx_tdata,
  output logic [DATA_W/8-1:0]    m_axis_tx_tkeep,
  output logic                   m_axis_tx_tlast,
  output logic                   m_axis_tx_tvalid,
  input  wire                    m_axis_tx_tready,

  // AXI-Stream RX: Ethernet frames without FCS, byte 0 in tdata[7:0]. tready is held high:
  // a MAC cannot be back-pressured, so frames the CM engine cannot take are dropped whole
  // and counted (STAT_RX_OVERFLOW).
  input  wire [DATA_W-1:0]       s_axis_rx_tdata,
  input  wire [DATA_W/8-1:0]     s_axis_rx_tkeep,
  input  wire                    s_axis_rx_tlast,
  input  wire                    s_axis_rx_tvalid,
  output logic                   s_axis_rx_tready,

  output logic                   irq          // reserved (0): completions are polled
);
  localparam int CLW = 3;   // dma_wr client index width (5 clients)

  // ------------------------------------------------------------------ parameter checks
  // Elaboration-time: Verilator (USERERROR, an error in every build here) and Yosys both stop
  // on a configuration outside what the register map and the sub-blocks support. Tested
  // configurations: DATA_W 64 and 512, CTX_DEPTH_LOG2 6 and 10, NUM_SQ 1, 2 and 4.
  if (!(DATA_W == 64 || DATA_W == 512)) begin : g_bad_data_w
    $error("bouncer_core: DATA_W must be 64 or 512");
  end
  if (CTX_DEPTH_LOG2 < 6 || CTX_DEPTH_LOG2 > 14) begin : g_bad_ctx_depth
    $error("bouncer_core: CTX_DEPTH_LOG2 must be 6..14");
  end
  if (NUM_SQ < 1 || NUM_SQ > 4) begin : g_bad_num_sq
    $error("bouncer_core: NUM_SQ must be 1..4 (CAPS.NUM_SQ, four SQ register blocks)");
  end
  if (CAPTURE_LOG2 < 0 || CAPTURE_LOG2 > 6) begin : g_bad_capture
    $error("bouncer_core: CAPTURE_LOG2 must be 0..6 (CAP_INDEX.FRAME is 6 bits)");
  end
  if (PROBES != 0 && PROBES != 1) begin : g_bad_probes
    $error("bouncer_core: PROBES must be 0 or 1");
  end
  if (AXIL_ADDR_W != 16) begin : g_bad_axil_addr_w
    $error("bouncer_core: AXIL_ADDR_W must be 16 (the register map's offsets)");
  end
  if (AXI_ADDR_W != 64 || AXI_ID_W < 1) begin : g_bad_axi
    $error("bouncer_core: AXI_ADDR_W must be 64 and AXI_ID_W at least 1");
  end

  // ------------------------------------------------------------------ registers
  logic               enable;
  // state reset (CTRL.RESET, see "state reset" below): everything but the register file and
  // the DMA masters is reset by rst_e
  logic               rst_e, reset_req, soft_rst_q, quiet, dma_rd_idle, dma_wr_idle;
  logic [7:0]         quiet_q;
  logic [63:0]        cq_base, cqp_base, ccq_base;
  logic [3:0]         cq_size_log2, cqp_size_log2, ccq_size_log2;
  logic               cq_reset, cqp_reset, ccq_reset;
  logic [14:0]        cq_head, cq_tail, cqp_pi, cqp_ci, ccq_head, ccq_tail;
  // the reject SQs, SQ n in bits [n*W +: W]
  logic [NUM_SQ*64-1:0]  sq_base;
  logic [NUM_SQ*4-1:0]   sq_size_log2;
  logic [NUM_SQ-1:0]     sq_reset, push_armed, push_take;
  logic [NUM_SQ*15-1:0]  sq_pi, sq_ci, push_idx;
  logic [NUM_SQ*512-1:0] push_wqe;
  logic                  sq_db, sq_db_push;
  logic [1:0]            sq_db_sq, sq_cur;
  logic [14:0]           sq_cur_ci, sq_db_pi;
  logic [63:0]        cycle_count;
  logic               sq_busy, sq_eng_busy, cqp_busy, cq_full, ccq_full, dma_wr_posted_err;
  logic               st_tx_frame, st_sq_wqe, st_sq_err, st_push_used, st_push_drop, st_cqp_wqe;
  logic               st_lat_valid;
  logic [31:0]        st_lat;
  logic [15:0]        tx_frame_len;

  // Record fields and status outputs this core does not use are left open on purpose.
  /* verilator lint_off PINCONNECTEMPTY */
  localparam int ID_W      = CTX_DEPTH_LOG2;
  localparam int NBUF_LOG2 = 3;
  localparam int NL_LOG2   = 4;

  logic unused_ok;
  assign unused_ok = ^{s_axil_awprot, s_axil_arprot, m_axi_bid};

  // passive-CM configuration and status
  logic [63:0]  aeq_base, pd_base;
  logic [3:0]   aeq_size_log2, rtx_max, tcp_wscale;
  logic         aeq_reset, cm_promisc, aeq_full;
  logic [14:0]  aeq_head, aeq_tail;
  logic [127:0] isn_key;
  logic [31:0]  hash_key;
  logic [31:0]  timer_tick, rto_init, rto_max, mpa_timeout, fin_timeout, time_wait;
  logic [31:0]  mpa_reasm_timeout;
  logic [15:0]  tcp_mss, tcp_wnd;
  logic [ID_W:0] cm_in_use;
  logic [23:0]  st_cm;
  logic [27:0]  st_cm_engine;           // bits 24-27: STAT_RX_FILTERED, STAT_RX_STRAY,
                                        // STAT_AEQ_REFUSED, STAT_EVT_COALESCED
  logic [47:0]  port_mac;
  logic [31:0]  port_ip;
  logic         cm_ready, cm_busy, rx_good, rx_drop, rx_syn_drop;
  logic         tx_frame_done;
  logic [15:0]  tx_frame_bytes;
  logic         ctrl_lb, rx_ovf;
  logic         st_arp_replied, st_arp_dropped;
  logic         cap_freeze, cap_clear;
  logic [31:0]  cap_index, cap_status, cap_end, cap_data;
  logic [15:0]  cap_len;
  logic [63:0]  cap_stamp;

  logic        probe_en, probe_clr, probe_pop, probe_ovf;
  logic [63:0] probe_head;
  logic [7:0]  probe_count;
  logic [31:0] probe_lost;

  logic [31:0] dma_timeout;   // DMA_TIMEOUT (read watchdog)
  logic        st_dma_rd_err, st_dma_wr_err, st_dma_timeout;

  bouncer_axil_regs #(
    .ADDR_W(AXIL_ADDR_W), .DATA_BYTES(DATA_W / 8), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2),
    .PROBES(PROBES), .NUM_SQ(NUM_SQ)
  ) u_regs (
    .clk, .rst, .soft_rst(soft_rst_q), .ctrl_reset_req(reset_req),
    .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wstrb,
    .s_axil_wvalid, .s_axil_wready, .s_axil_bresp, .s_axil_bvalid, .s_axil_bready,
    .s_axil_araddr, .s_axil_arvalid, .s_axil_arready, .s_axil_rdata, .s_axil_rresp,
    .s_axil_rvalid, .s_axil_rready,
    .ctrl_enable(enable), .ctrl_loopback(ctrl_lb),
    .sq_base, .sq_size_log2, .sq_reset, .sq_pi, .sq_db, .sq_db_sq, .sq_db_push, .sq_db_pi, .push_wqe,
    .push_armed, .push_idx, .push_take,
    .cq_base, .cq_size_log2, .cq_reset, .cq_head,
    .cqp_base, .cqp_size_log2, .cqp_reset, .cqp_pi,
    .ccq_base, .ccq_size_log2, .ccq_reset, .ccq_head,
    .cycle_count,
    .sq_ci, .cq_tail, .cqp_ci, .ccq_tail,
    .status({!(dma_rd_idle && dma_wr_idle), cm_busy, cm_ready, aeq_full && cm_busy,
             dma_wr_posted_err, ccq_full && cqp_busy, cq_full && sq_busy, cqp_busy, sq_busy}),
    .stat_tx_frame(st_tx_frame), .stat_tx_bytes(tx_frame_bytes),
    .stat_sq_wqe(st_sq_wqe), .stat_sq_error(st_sq_err),
    .stat_push_used(st_push_used), .stat_push_dropped(st_push_drop),
    .stat_cqp_wqe(st_cqp_wqe),
    .stat_latency_valid(st_lat_valid), .stat_latency(st_lat),
    .aeq_base, .aeq_size_log2, .aeq_reset, .aeq_head, .aeq_tail,
    .pd_base, .isn_key, .hash_key,
    .timer_tick, .rto_init, .rto_max, .rtx_max, .mpa_timeout, .mpa_reasm_timeout, .fin_timeout,
    .time_wait,
    .tcp_mss, .tcp_wscale, .tcp_wnd, .cm_promisc, .port_mac, .port_ip,
    .cm_conns(17'(cm_in_use)),
    .stat_cm(st_cm),
    .probe_enable(probe_en), .probe_clear(probe_clr), .probe_pop, .probe_head, .probe_count,
    .probe_overflow(probe_ovf), .probe_lost,
    .dma_timeout, .stat_dma_rd_err(st_dma_rd_err), .stat_dma_wr_err(st_dma_wr_err),
    .stat_dma_timeout(st_dma_timeout),
    .stat_rx_filtered(st_cm_engine[24]), .stat_rx_stray(st_cm_engine[25]),
    .stat_aeq_refused(st_cm_engine[26]), .stat_evt_coalesced(st_cm_engine[27]),
    .stat_arp_replied(st_arp_replied), .stat_arp_dropped(st_arp_dropped),
    .cap_freeze, .cap_clear, .cap_index, .cap_status, .cap_len, .cap_stamp, .cap_end, .cap_data,
    .stat_syn_drop_queue(rx_syn_drop)
  );
  // RX_FRAMES (bit 0) and RX_OVERFLOW (bit 3) are counted at the RX queues (SYN_DROP_QUEUE
  // too); RX_OVERFLOW also counts the frames the loopback discards on s_axis_rx (rx_ovf, see
  // the loopback section)
  assign st_cm = st_cm_engine[23:0] | {20'd0, rx_ovf, 2'b00, rx_good || rx_drop || rx_syn_drop};

  // ------------------------------------------------------------------ DMA
  // read clients: 0 = control queue, 1 = SQ (WQEs), 2 = CM engine (reject PD)
  logic [2:0]          rd_cmd_valid, rd_cmd_ready;
  logic [3*64-1:0]     rd_cmd_addr;
  logic [3*8-1:0]      rd_cmd_beats;
  logic                rd_valid, rd_last, rd_err;
  logic [1:0]          rd_client;
  logic [63:0]         rd_data;

  bouncer_dma_rd #(.N(3), .ADDR_W(AXI_ADDR_W), .ID_W(AXI_ID_W)) u_dma_rd (
    .clk, .rst, .idle(dma_rd_idle),
    .cmd_valid(rd_cmd_valid), .cmd_ready(rd_cmd_ready), .cmd_addr(rd_cmd_addr),
    .cmd_beats(rd_cmd_beats), .timeout(dma_timeout),
    .rd_valid, .rd_client, .rd_data, .rd_last, .rd_err,
    .stat_rd_err(st_dma_rd_err), .stat_timeout(st_dma_timeout),
    .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst, .m_axi_arcache,
    .m_axi_arprot, .m_axi_arvalid, .m_axi_arready, .m_axi_rid, .m_axi_rdata, .m_axi_rresp,
    .m_axi_rlast,
    .m_axi_rvalid, .m_axi_rready
  );

  // write clients: 0 = CCQ writer, 1 = CQ writer, 2 = control queue (context read-back),
  // 3 = AEQ writer, 4 = CM engine (request PD into the host's PD slot)
  logic [4:0]          wr_cmd_valid, wr_cmd_ready, wr_done;
  logic [5*64-1:0]     wr_cmd_addr;
  logic [5*4-1:0]      wr_cmd_beats;
  logic [5*512-1:0]    wr_cmd_data;
  logic                wr_err;

  // completions, events and request PD are posted writes (one AXI ID: a request's PD lands
  // before its event); the context read-back waits for its write response
  bouncer_dma_wr #(
    .N(5), .ADDR_W(AXI_ADDR_W), .ID_W(AXI_ID_W), .CLIENT_W(CLW), .POSTED_MASK(5'b11011)
  ) u_dma_wr (
    .clk, .rst, .idle(dma_wr_idle),
    .cmd_valid(wr_cmd_valid), .cmd_ready(wr_cmd_ready), .cmd_addr(wr_cmd_addr),
    .cmd_beats(wr_cmd_beats), .cmd_data(wr_cmd_data), .done(wr_done), .err(wr_err),
    .posted_err(dma_wr_posted_err), .stat_err(st_dma_wr_err),
    .m_axi_awid, .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize, .m_axi_awburst, .m_axi_awcache,
    .m_axi_awprot, .m_axi_awvalid, .m_axi_awready, .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast,
    .m_axi_wvalid, .m_axi_wready, .m_axi_bresp, .m_axi_bvalid, .m_axi_bready
  );

  // ------------------------------------------------------------------ connection table
  logic [1:0]                  ctx_req_valid, ctx_req_ready, ctx_req_we, ctx_rsp_valid;
  logic [2*CTX_DEPTH_LOG2-1:0] ctx_req_addr;
  logic [2*512-1:0]            ctx_req_wdata;
  logic [511:0]                ctx_rsp_rdata;
  logic                        ctx_init_done;

  bouncer_cm_ctx_table #(.DEPTH_LOG2(CTX_DEPTH_LOG2)) u_ctx (
    .clk, .rst(rst_e), .init_done(ctx_init_done),
    .req_valid(ctx_req_valid), .req_ready(ctx_req_ready), .req_we(ctx_req_we),
    .req_addr(ctx_req_addr), .req_wdata(ctx_req_wdata),
    .rsp_valid(ctx_rsp_valid), .rsp_rdata(ctx_rsp_rdata)
  );

  // ------------------------------------------------------------------ control queue
  logic         ccqe_valid, ccqe_ready;
  logic [255:0] ccqe;

  bouncer_cqp_engine #(.ADDR_W(AXI_ADDR_W), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2)) u_cqp (
    .clk, .rst(rst_e),
    .enable(enable && ctx_init_done), .cqp_base, .cqp_size_log2, .cqp_reset, .cqp_pi,
    .cqp_ci, .busy(cqp_busy),
    .rd_cmd_valid(rd_cmd_valid[0]), .rd_cmd_ready(rd_cmd_ready[0]),
    .rd_cmd_addr(rd_cmd_addr[0 +: 64]), .rd_cmd_beats(rd_cmd_beats[0 +: 8]),
    .rd_valid(rd_valid && rd_client == 2'd0), .rd_data, .rd_last(rd_last && rd_client == 2'd0),
    .rd_err,
    .wr_cmd_valid(wr_cmd_valid[2]), .wr_cmd_ready(wr_cmd_ready[2]),
    .wr_cmd_addr(wr_cmd_addr[2*64 +: 64]), .wr_cmd_beats(wr_cmd_beats[2*4 +: 4]),
    .wr_cmd_data(wr_cmd_data[2*512 +: 512]), .wr_done(wr_done[2]), .wr_err,
    .ctx_req_valid(ctx_req_valid[0]), .ctx_req_ready(ctx_req_ready[0]),
    .ctx_req_we(ctx_req_we[0]), .ctx_req_addr(ctx_req_addr[0 +: CTX_DEPTH_LOG2]),
    .ctx_req_wdata(ctx_req_wdata[0 +: 512]),
    .ctx_rsp_valid(ctx_rsp_valid[0]), .ctx_rsp_rdata,
    .cqe_valid(ccqe_valid), .cqe_ready(ccqe_ready), .cqe(ccqe),
    .lst_cfg_valid, .lst_cfg_create, .lst_cfg_wqe, .lst_cfg_ok, .lst_cfg_tmpl_bank,
    .tmpl_wr_en, .tmpl_wr_slot, .tmpl_wr_word, .tmpl_wr_data, .tmpl_use_valid, .tmpl_use_slot,
    .stat_wqe(st_cqp_wqe)
  );

  bouncer_cq_writer #(.ADDR_W(AXI_ADDR_W)) u_ccq (
    .clk, .rst(rst_e),
    .base(ccq_base), .size_log2(ccq_size_log2), .ring_reset(ccq_reset), .head(ccq_head),
    .tail(ccq_tail), .full(ccq_full),
    .s_cqe_valid(ccqe_valid), .s_cqe_ready(ccqe_ready), .s_cqe(ccqe),
    .dma_valid(wr_cmd_valid[0]), .dma_ready(wr_cmd_ready[0]), .dma_addr(wr_cmd_addr[0 +: 64]),
    .dma_beats(wr_cmd_beats[0 +: 4]), .dma_data(wr_cmd_data[0 +: 512]),
    .dma_done(wr_done[0])
  );

  // ------------------------------------------------------------------ reject SQ
  logic                 hrej_valid, hrej_ready, hrej_pd_inline, hrej_iov;
  logic [ID_W-1:0]      hrej_cm_id;
  logic [AXI_ADDR_W-1:0] hrej_pd_addr;
  logic [9:0]           hrej_pd_len;
  logic [255:0]         hrej_inline_pd;
  logic [1:0]           hrej_fin_policy;
  logic [31:0]          hrej_io;
  logic                 hrsp_valid;
  logic [15:0]          hrsp_major, hrsp_minor, hrsp_frame_len;
  logic [31:0]          hrsp_seq;
  logic [63:0]          hrsp_first_cycle;
  logic                 sqcqe_valid, sqcqe_ready, cqq_valid, cqq_ready, cqq_busy;
  logic [255:0]         sqcqe, cqq;
  logic [1:0]           cqq_sq;
  logic [14:0]          cqq_idx;

  bouncer_sq_engine #(
    .ADDR_W(AXI_ADDR_W), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2), .NUM_SQ(NUM_SQ)
  ) u_sq (
    .clk, .rst(rst_e),
    .enable(enable && cm_ready), .sq_base, .sq_size_log2, .sq_reset, .sq_pi, .sq_db,
    .sq_db_sq, .push_wqe, .push_armed, .push_idx, .push_take, .sq_ci(),
    .cur_sq(sq_cur), .cur_ci(sq_cur_ci), .busy(sq_eng_busy), .cycle_count,
    .dma_valid(rd_cmd_valid[1]), .dma_ready(rd_cmd_ready[1]), .dma_addr(rd_cmd_addr[64 +: 64]),
    .dma_beats(rd_cmd_beats[8 +: 8]),
    .rd_valid(rd_valid && rd_client == 2'd1), .rd_data, .rd_last(rd_last && rd_client == 2'd1),
    .rd_err,
    .rej_valid(hrej_valid), .rej_ready(hrej_ready), .rej_cm_id(hrej_cm_id),
    .rej_pd_inline(hrej_pd_inline), .rej_pd_addr(hrej_pd_addr), .rej_pd_len(hrej_pd_len),
    .rej_inline_pd(hrej_inline_pd), .rej_fin_policy(hrej_fin_policy),
    .rej_ird_ord_valid(hrej_iov), .rej_ird_ord(hrej_io),
    .rsp_valid(hrsp_valid), .rsp_major(hrsp_major), .rsp_minor(hrsp_minor),
    .rsp_frame_len(hrsp_frame_len), .rsp_seq(hrsp_seq), .rsp_first_cycle(hrsp_first_cycle),
    .cqe_valid(sqcqe_valid), .cqe_ready(sqcqe_ready), .cqe(sqcqe),
    .stat_wqe(st_sq_wqe), .stat_error(st_sq_err), .stat_push_used(st_push_used),
    .stat_push_dropped(st_push_drop), .stat_latency_valid(st_lat_valid), .stat_latency(st_lat)
  );

  // The engine's CQEs, posted: it goes on with the next WQE while the CQ writer writes. SQ_CI
  // (to the register file) is published by the queue, past the last CQE written.
  bouncer_sq_cqe_queue #(.NUM_SQ(NUM_SQ), .DEPTH_LOG2(2)) u_sq_cqq (
    .clk, .rst(rst_e), .sq_size_log2, .sq_reset, .sq_ci,
    .s_cqe_valid(sqcqe_valid), .s_cqe_ready(sqcqe_ready), .s_cqe(sqcqe),
    .m_cqe_valid(cqq_valid), .m_cqe_ready(cqq_ready), .m_cqe(cqq),
    .head_sq(cqq_sq), .head_idx(cqq_idx), .busy(cqq_busy)
  );
  assign sq_busy = sq_eng_busy || cqq_busy;

  // ------------------------------------------------------------------ RX path
  logic [DATA_W-1:0]   rxf_tdata, pl_tdata;
  logic [DATA_W/8-1:0] rxf_tkeep, pl_tkeep;
  logic                rxf_tlast, rxf_tvalid, rxf_tready;
  logic                pl_tlast, pl_tvalid, pl_tready;
  // RX FIFO input: s_axis_rx, or tx_arb's output in loopback (see the loopback section)
  logic [DATA_W-1:0]   rxi_tdata;
  logic [DATA_W/8-1:0] rxi_tkeep;
  logic                rxi_tlast, rxi_tvalid;

  // 16 KiB main queue and a 2 KiB SYN queue: a MAC cannot be stalled, so whole frames are
  // dropped when the CM falls behind, new SYNs first (bouncer_rx_prio_fifo). Its
  // s_axis_tready is constant 1 (so is s_axis_rx_tready).
  bouncer_rx_prio_fifo #(
    .DATA_W(DATA_W), .DEPTH_LOG2((DATA_W == 64) ? 11 : 8),
    .SYN_DEPTH_LOG2((DATA_W == 64) ? 8 : 5)
  ) u_rx_fifo (
    .clk, .rst(rst_e),
    .s_axis_tdata(rxi_tdata), .s_axis_tkeep(rxi_tkeep),
    .s_axis_tlast(rxi_tlast), .s_axis_tvalid(rxi_tvalid),
    .s_axis_tready(),
    .m_axis_tdata(rxf_tdata), .m_axis_tkeep(rxf_tkeep), .m_axis_tlast(rxf_tlast),
    .m_axis_tvalid(rxf_tvalid), .m_axis_tready(rxf_tready),
    .drop_frame(rx_drop), .syn_drop(rx_syn_drop), .good_frame(rx_good)
  );

  logic        rec_valid, rec_ready, rec_vlan, rec_tcp, rec_bad, rec_mss_present, rec_ws_present;
  logic [15:0] rec_mss;
  logic [47:0] rec_eth_dst, rec_eth_src;
  logic [15:0] rec_vlan_tci, rec_sport, rec_dport, rec_len;
  logic [7:0]  rec_tos, rec_flags;
  logic [31:0] rec_ip_src, rec_ip_dst, rec_seq, rec_ack;

  bouncer_rx_parser #(.DATA_W(DATA_W)) u_rx (
    .clk, .rst(rst_e),
    .s_axis_tdata(rxf_tdata), .s_axis_tkeep(rxf_tkeep), .s_axis_tlast(rxf_tlast),
    .s_axis_tvalid(rxf_tvalid), .s_axis_tready(rxf_tready),
    .m_axis_payload_tdata(pl_tdata), .m_axis_payload_tkeep(pl_tkeep),
    .m_axis_payload_tlast(pl_tlast), .m_axis_payload_tvalid(pl_tvalid),
    .m_axis_payload_tready(pl_tready),
    .m_meta_valid(rec_valid), .m_meta_ready(rec_ready),
    .m_meta_eth_dst(rec_eth_dst), .m_meta_eth_src(rec_eth_src),
    .m_meta_vlan_present(rec_vlan), .m_meta_vlan_tci(rec_vlan_tci),
    .m_meta_ethertype(), .m_meta_ipv4(), .m_meta_ip_ihl(), .m_meta_ip_tos(rec_tos),
    .m_meta_ip_total_len(), .m_meta_ip_id(), .m_meta_ip_df(), .m_meta_ip_mf(),
    .m_meta_ip_frag_off(), .m_meta_ip_ttl(), .m_meta_ip_proto(),
    .m_meta_ip_src(rec_ip_src), .m_meta_ip_dst(rec_ip_dst), .m_meta_ip_csum_ok(),
    .m_meta_tcp(rec_tcp), .m_meta_tcp_src_port(rec_sport), .m_meta_tcp_dst_port(rec_dport),
    .m_meta_tcp_seq(rec_seq), .m_meta_tcp_ack(rec_ack), .m_meta_tcp_doff(),
    .m_meta_tcp_flags(rec_flags), .m_meta_tcp_window(), .m_meta_tcp_csum_ok(),
    .m_meta_tcp_mss_present(rec_mss_present), .m_meta_tcp_mss(rec_mss),
    .m_meta_tcp_ws_present(rec_ws_present), .m_meta_tcp_ws(),
    .m_meta_tcp_opt_err(), .m_meta_payload_len(rec_len), .m_meta_frame_len(),
    .m_meta_runt(), .m_meta_len_err(), .m_meta_hdr_err(), .m_meta_bad(rec_bad)
  );

  logic                 acmd_valid, acmd_ready, acmd_append, acmd_new;
  logic [NBUF_LOG2-1:0] acmd_buf, arsp_buf, ard_buf, afree_buf;
  logic [9:0]           acmd_offset, ard_start, ard_len;
  logic [15:0]          acmd_len, arsp_total, arsp_pd_len;
  logic                 arsp_valid, arsp_ready, arsp_ok, arsp_hdr_valid, arsp_key_ok;
  logic                 arsp_iov, ard_valid, ard_ready, ard_free, afree_valid;
  logic [7:0]           arsp_flags, arsp_rev;
  logic [31:0]          arsp_io;
  logic                 chunk_valid, chunk_ready, chunk_last;
  logic [511:0]         chunk_data;
  logic [3:0]           chunk_beats;

  bouncer_mpa_req_asm #(.DATA_W(DATA_W), .NBUF_LOG2(NBUF_LOG2)) u_asm (
    .clk, .rst(rst_e),
    .s_axis_payload_tdata(pl_tdata), .s_axis_payload_tkeep(pl_tkeep),
    .s_axis_payload_tlast(pl_tlast), .s_axis_payload_tvalid(pl_tvalid),
    .s_axis_payload_tready(pl_tready),
    .s_cmd_valid(acmd_valid), .s_cmd_ready(acmd_ready), .s_cmd_append(acmd_append),
    .s_cmd_new(acmd_new), .s_cmd_buf(acmd_buf), .s_cmd_offset(acmd_offset),
    .s_cmd_len(acmd_len),
    .m_rsp_valid(arsp_valid), .m_rsp_ready(arsp_ready), .m_rsp_ok(arsp_ok),
    .m_rsp_buf(arsp_buf), .m_rsp_total(arsp_total), .m_rsp_hdr_valid(arsp_hdr_valid),
    .m_rsp_key_ok(arsp_key_ok), .m_rsp_flags(arsp_flags), .m_rsp_rev(arsp_rev),
    .m_rsp_pd_len(arsp_pd_len), .m_rsp_ird_ord_valid(arsp_iov), .m_rsp_ird_ord(arsp_io),
    .s_rd_valid(ard_valid), .s_rd_ready(ard_ready), .s_rd_buf(ard_buf),
    .s_rd_start(ard_start), .s_rd_len(ard_len), .s_rd_free(ard_free),
    .m_chunk_valid(chunk_valid), .m_chunk_ready(chunk_ready), .m_chunk_data(chunk_data),
    .m_chunk_beats(chunk_beats), .m_chunk_last(chunk_last),
    .s_free_valid(afree_valid), .s_free_buf(afree_buf), .bufs_free()
  );

  // ------------------------------------------------------------------ CM state
  logic                ct_cmd_valid, ct_cmd_ready, ct_res_valid, ct_res_ready, ct_res_hit;
  logic [1:0]          ct_cmd_op, ct_res_status;
  logic [31:0]         ct_rem_ip, ct_loc_ip;
  logic [15:0]         ct_rem_port, ct_loc_port;
  logic [ID_W-1:0]     ct_cmd_cm_id, ct_res_cm_id;
  logic                ct_init_done;

  // The bucket hash is keyed with the host's HASH_KEY, taken at every reset of the core's
  // state (power-on and CTRL.RESET), while the table sweeps itself empty: no entry is ever
  // placed under one key and looked up under another.
  bouncer_conn_table #(.DEPTH_LOG2(CTX_DEPTH_LOG2), .WAYS(4), .CM_ID_W(ID_W)) u_conn (
    .clk, .rst(rst_e), .hash_key, .init_done(ct_init_done),
    .cmd_valid(ct_cmd_valid), .cmd_ready(ct_cmd_ready), .cmd_op(ct_cmd_op),
    .cmd_rem_ip(ct_rem_ip), .cmd_loc_ip(ct_loc_ip), .cmd_rem_port(ct_rem_port),
    .cmd_loc_port(ct_loc_port), .cmd_cm_id(ct_cmd_cm_id),
    .res_valid(ct_res_valid), .res_ready(ct_res_ready), .res_hit(ct_res_hit),
    .res_cm_id(ct_res_cm_id), .res_status(ct_res_status),
    .occupancy(), .insert_fail_full()
  );

  logic            alloc_valid, alloc_ready, free_valid, alloc_init_done;
  logic [ID_W-1:0] alloc_id, free_id;
  bouncer_id_alloc #(.ID_W(ID_W)) u_ids (
    .clk, .rst(rst_e), .init_done(alloc_init_done),
    .m_alloc_valid(alloc_valid), .m_alloc_ready(alloc_ready), .m_alloc_id(alloc_id),
    .s_free_valid(free_valid), .s_free_id(free_id), .in_use(cm_in_use)
  );

  logic            tmr_set_valid, tmr_set_on, exp_valid, exp_ready, tmr_init_done;
  logic [ID_W-1:0] tmr_set_id, exp_id;
  logic [31:0]     tmr_set_deadline, now_tick;
  logic            now_tick_inc;
  bouncer_cm_timer #(.ID_W(ID_W)) u_timer (
    .clk, .rst(rst_e), .tick_cycles(timer_tick), .now(now_tick), .now_inc(now_tick_inc),
    .init_done(tmr_init_done),
    .set_valid(tmr_set_valid), .set_id(tmr_set_id), .set_on(tmr_set_on),
    .set_deadline(tmr_set_deadline),
    .m_exp_valid(exp_valid), .m_exp_ready(exp_ready), .m_exp_id(exp_id)
  );

  logic               lk_valid, lk_res_valid, lk_hit, lk_full, pend_inc, pend_dec;
  logic [31:0]        lk_ip;
  logic [15:0]        lk_port;
  logic [NL_LOG2-1:0] lk_idx, lst_rd_idx, pend_inc_idx, pend_dec_idx;
  logic [1:0]         lst_fin_policy, lst_auto_reject, lk_auto_reject;
  logic               lst_aeq_full_rst;
  logic               lst_tmpl_bank, lst_cfg_tmpl_bank;
  logic               tmpl_wr_en, tmpl_rd_en, tmpl_use_valid;
  logic [NL_LOG2:0]   tmpl_wr_slot, tmpl_rd_slot, tmpl_use_slot;
  logic [5:0]         tmpl_wr_word, tmpl_rd_word;
  logic [63:0]        tmpl_wr_data, tmpl_rd_data;
  logic [9:0]         lst_tmpl_len;
  logic               lst_tmpl_iov;
  logic [31:0]        lst_tmpl_io;
  logic [47:0]        lst_loc_mac;
  logic [7:0]         lst_ttl, lst_tos;
  logic [13:0]        lst_max_ird, lst_max_ord;
  logic               lst_cfg_valid, lst_cfg_create, lst_cfg_ok;
  logic [511:0]       lst_cfg_wqe;

  bouncer_listener_table #(.N(1 << NL_LOG2)) u_lst (
    .clk, .rst(rst_e),
    .cfg_valid(lst_cfg_valid), .cfg_create(lst_cfg_create), .cfg_wqe(lst_cfg_wqe),
    .cfg_ok(lst_cfg_ok), .cfg_tmpl_bank(lst_cfg_tmpl_bank),
    .lk_valid, .lk_ip, .lk_port, .lk_res_valid, .lk_hit, .lk_idx, .lk_full, .lk_auto_reject,
    .rd_idx(lst_rd_idx), .rd_valid_entry(), .rd_loc_ip(), .rd_loc_port(), .rd_backlog(),
    .rd_fin_policy(lst_fin_policy), .rd_auto_reject(lst_auto_reject),
    .rd_aeq_full_rst(lst_aeq_full_rst),
    .rd_tmpl_bank(lst_tmpl_bank), .rd_tmpl_len(lst_tmpl_len),
    .rd_tmpl_ird_ord_valid(lst_tmpl_iov), .rd_tmpl_ird_ord(lst_tmpl_io),
    .rd_loc_mac(lst_loc_mac), .rd_ttl(lst_ttl), .rd_tos(lst_tos),
    .rd_max_ird(lst_max_ird), .rd_max_ord(lst_max_ord), .rd_pending(),
    .pend_inc, .pend_inc_idx, .pend_dec, .pend_dec_idx
  );

  // the listeners' PD templates: written by the control queue, read by auto-rejects
  bouncer_tmpl_ram #(.NL_LOG2(NL_LOG2)) u_tmpl (
    .clk,
    .wr_en(tmpl_wr_en), .wr_slot(tmpl_wr_slot), .wr_word(tmpl_wr_word), .wr_data(tmpl_wr_data),
    .rd_en(tmpl_rd_en), .rd_slot(tmpl_rd_slot), .rd_word(tmpl_rd_word), .rd_data(tmpl_rd_data)
  );

  logic        isn_valid, isn_ready, isn_res_valid, isn_res_ready;
  logic [31:0] isn_loc_ip, isn_rem_ip, isn_res;
  logic [15:0] isn_loc_port, isn_rem_port;
  bouncer_isn_hash u_isn (
    .clk, .rst(rst_e),
    .s_valid(isn_valid), .s_ready(isn_ready), .s_loc_ip(isn_loc_ip), .s_rem_ip(isn_rem_ip),
    .s_loc_port(isn_loc_port), .s_rem_port(isn_rem_port), .key(isn_key),
    .time_cnt(cycle_count),
    .m_valid(isn_res_valid), .m_ready(isn_res_ready), .m_isn(isn_res)
  );

  assign cm_ready = ctx_init_done && ct_init_done && alloc_init_done && tmr_init_done;

  // ------------------------------------------------------------------ CM engine
  // AEQ room for the engine's admission (bouncer_cm_engine, "AEQ admission"): entries the ring
  // can still take (it holds 2^AEQ_SIZE - 1: full when tail + 1 == head) and half of that,
  // registered from the host's AEQ_HEAD and the writer's tail
  logic [14:0] aeq_mask, aeq_free_q, aeq_half_q;
  assign aeq_mask = 15'((32'd1 << aeq_size_log2) - 32'd1);
  always_ff @(posedge clk) begin
    aeq_free_q <= (aeq_head - aeq_tail - 15'd1) & aeq_mask;
    aeq_half_q <= aeq_mask >> 1;
  end

  logic         pd_clear, pd_wr_en;
  logic [9:0]   pd_len;
  logic [6:0]   pd_wr_idx;
  logic [63:0]  pd_wr_data;
  logic         rej_start_valid, rej_start_ready, rej_start_fin, rej_start_iov;
  logic [511:0] rej_start_ctx;
  logic [31:0]  rej_start_io;
  logic [15:0]  rej_seq_advance, rej_start_mss;
  logic [3:0]   rej_seg_count;
  logic         rej_first_beat, rej_done;
  logic         ctl_valid, ctl_ready, ctl_vlan_en;
  logic [1:0]   ctl_kind;
  logic [47:0]  ctl_rem_mac, ctl_loc_mac;
  logic [15:0]  ctl_vlan_tci, ctl_ip_id, ctl_loc_port, ctl_rem_port, ctl_window, ctl_mss;
  logic [31:0]  ctl_loc_ip, ctl_rem_ip, ctl_seq, ctl_ack;
  logic [7:0]   ctl_tos, ctl_ttl, ctl_wscale;
  logic         ctl_ws_en;
  logic         evt_valid, evt_ready;
  logic [255:0] evt;

  bouncer_cm_engine #(
    .ADDR_W(AXI_ADDR_W), .ID_W(ID_W), .NBUF_LOG2(NBUF_LOG2), .NL_LOG2(NL_LOG2)
  ) u_cm (
    .clk, .rst(rst_e), .enable(enable && cm_ready),
    .cycle_count, .now(now_tick), .now_inc(now_tick_inc), .pd_base(pd_base[AXI_ADDR_W-1:0]),
    .rto_init, .rto_max, .rtx_max, .mpa_timeout, .mpa_reasm_timeout, .fin_timeout, .time_wait,
    .tcp_mss, .tcp_wscale, .tcp_wnd, .promisc(cm_promisc), .port_mac, .port_ip,
    .s_rec_valid(rec_valid), .s_rec_ready(rec_ready), .s_rec_eth_dst(rec_eth_dst),
    .s_rec_eth_src(rec_eth_src), .s_rec_vlan_present(rec_vlan), .s_rec_vlan_tci(rec_vlan_tci),
    .s_rec_tcp(rec_tcp), .s_rec_ip_tos(rec_tos), .s_rec_ip_src(rec_ip_src),
    .s_rec_ip_dst(rec_ip_dst), .s_rec_src_port(rec_sport), .s_rec_dst_port(rec_dport),
    .s_rec_seq(rec_seq), .s_rec_ack(rec_ack), .s_rec_flags(rec_flags),
    .s_rec_payload_len(rec_len), .s_rec_bad(rec_bad), .s_rec_mss_present(rec_mss_present),
    .s_rec_mss(rec_mss), .s_rec_ws_present(rec_ws_present),
    .s_hrej_valid(hrej_valid), .s_hrej_ready(hrej_ready), .s_hrej_cm_id(hrej_cm_id),
    .s_hrej_pd_inline(hrej_pd_inline), .s_hrej_pd_addr(hrej_pd_addr),
    .s_hrej_pd_len(hrej_pd_len), .s_hrej_inline_pd(hrej_inline_pd),
    .s_hrej_fin_policy(hrej_fin_policy), .s_hrej_ird_ord_valid(hrej_iov),
    .s_hrej_ird_ord(hrej_io),
    .m_hrsp_valid(hrsp_valid), .m_hrsp_major(hrsp_major), .m_hrsp_minor(hrsp_minor),
    .m_hrsp_frame_len(hrsp_frame_len), .m_hrsp_seq(hrsp_seq),
    .m_hrsp_first_cycle(hrsp_first_cycle),
    .s_exp_valid(exp_valid), .s_exp_ready(exp_ready), .s_exp_id(exp_id),
    .tmr_set_valid, .tmr_set_id, .tmr_set_on, .tmr_set_deadline,
    .ct_cmd_valid, .ct_cmd_ready, .ct_cmd_op, .ct_cmd_rem_ip(ct_rem_ip),
    .ct_cmd_loc_ip(ct_loc_ip), .ct_cmd_rem_port(ct_rem_port), .ct_cmd_loc_port(ct_loc_port),
    .ct_cmd_cm_id, .ct_res_valid, .ct_res_ready, .ct_res_hit, .ct_res_cm_id, .ct_res_status,
    .alloc_valid, .alloc_ready, .alloc_id, .free_valid, .free_id,
    .lk_valid, .lk_ip, .lk_port, .lk_res_valid, .lk_hit, .lk_idx, .lk_full, .lk_auto_reject,
    .lst_rd_idx, .lst_fin_policy, .lst_auto_reject, .lst_aeq_full_rst, .lst_tmpl_bank, .lst_tmpl_len,
    .lst_tmpl_ird_ord_valid(lst_tmpl_iov), .lst_tmpl_ird_ord(lst_tmpl_io), .lst_loc_mac,
    .lst_ttl, .lst_tos, .lst_max_ird, .lst_max_ord,
    .pend_inc, .pend_inc_idx, .pend_dec, .pend_dec_idx,
    .tmpl_rd_en, .tmpl_rd_slot, .tmpl_rd_word, .tmpl_rd_data, .tmpl_use_valid, .tmpl_use_slot,
    .isn_valid, .isn_ready, .isn_loc_ip, .isn_rem_ip, .isn_loc_port, .isn_rem_port,
    .isn_res_valid, .isn_res_ready, .isn_res,
    .ctx_req_valid(ctx_req_valid[1]), .ctx_req_ready(ctx_req_ready[1]),
    .ctx_req_we(ctx_req_we[1]), .ctx_req_addr(ctx_req_addr[CTX_DEPTH_LOG2 +: CTX_DEPTH_LOG2]),
    .ctx_req_wdata(ctx_req_wdata[512 +: 512]),
    .ctx_rsp_valid(ctx_rsp_valid[1]), .ctx_rsp_rdata,
    .asm_cmd_valid(acmd_valid), .asm_cmd_ready(acmd_ready), .asm_cmd_append(acmd_append),
    .asm_cmd_new(acmd_new), .asm_cmd_buf(acmd_buf), .asm_cmd_offset(acmd_offset),
    .asm_cmd_len(acmd_len),
    .asm_rsp_valid(arsp_valid), .asm_rsp_ready(arsp_ready), .asm_rsp_ok(arsp_ok),
    .asm_rsp_buf(arsp_buf), .asm_rsp_total(arsp_total), .asm_rsp_hdr_valid(arsp_hdr_valid),
    .asm_rsp_key_ok(arsp_key_ok), .asm_rsp_flags(arsp_flags), .asm_rsp_rev(arsp_rev),
    .asm_rsp_pd_len(arsp_pd_len), .asm_rsp_ird_ord_valid(arsp_iov), .asm_rsp_ird_ord(arsp_io),
    .asm_rd_valid(ard_valid), .asm_rd_ready(ard_ready), .asm_rd_buf(ard_buf),
    .asm_rd_start(ard_start), .asm_rd_len(ard_len), .asm_rd_free(ard_free),
    .asm_chunk_valid(chunk_valid), .asm_chunk_ready(chunk_ready),
    .asm_chunk_data(chunk_data), .asm_chunk_beats(chunk_beats), .asm_chunk_last(chunk_last),
    .asm_free_valid(afree_valid), .asm_free_buf(afree_buf),
    .ctl_valid, .ctl_ready, .ctl_kind, .ctl_rem_mac, .ctl_loc_mac, .ctl_vlan_en, .ctl_vlan_tci,
    .ctl_loc_ip, .ctl_rem_ip, .ctl_tos, .ctl_ttl, .ctl_ip_id, .ctl_loc_port, .ctl_rem_port,
    .ctl_seq, .ctl_ack, .ctl_window, .ctl_mss, .ctl_wscale, .ctl_ws_en,
    .pd_clear, .pd_len, .pd_wr_en, .pd_wr_idx, .pd_wr_data,
    .rej_start_valid, .rej_start_ready, .rej_start_ctx, .rej_start_fin,
    .rej_start_ird_ord_valid(rej_start_iov), .rej_start_ird_ord(rej_start_io),
    .rej_start_mss, .rej_frame_len(tx_frame_len), .rej_seq_advance, .rej_seg_count,
    .rej_first_beat, .rej_done, .tx_rej_sof,
    .dma_rd_valid(rd_cmd_valid[2]), .dma_rd_ready(rd_cmd_ready[2]),
    .dma_rd_addr(rd_cmd_addr[2*64 +: 64]), .dma_rd_beats(rd_cmd_beats[2*8 +: 8]),
    .rd_valid(rd_valid && rd_client == 2'd2), .rd_data, .rd_last(rd_last && rd_client == 2'd2),
    .rd_err,
    .dma_wr_valid(wr_cmd_valid[4]), .dma_wr_ready(wr_cmd_ready[4]),
    .dma_wr_addr(wr_cmd_addr[4*64 +: 64]), .dma_wr_beats(wr_cmd_beats[4*4 +: 4]),
    .dma_wr_data(wr_cmd_data[4*512 +: 512]), .dma_wr_done(wr_done[4]),
    .aeq_free(aeq_free_q), .aeq_half(aeq_half_q), .evt_valid, .evt_ready, .evt,
    .busy(cm_busy), .stat(st_cm_engine)
  );

  // ------------------------------------------------------------------ TX
  // tx_arb inputs: 0 reject builder, 1 TCP control builder, 2 ARP responder
  logic [3*DATA_W-1:0]   txa_tdata;
  logic [3*DATA_W/8-1:0] txa_tkeep;
  logic [2:0]            txa_tlast, txa_tvalid, txa_tready;

  bouncer_mpa_reject_builder #(.DATA_W(DATA_W)) u_tx (
    .clk, .rst(rst_e),
    .pd_clear, .pd_len, .pd_wr_en, .pd_wr_idx, .pd_wr_data,
    .start_valid(rej_start_valid), .start_ready(rej_start_ready), .start_ctx(rej_start_ctx),
    .start_fin(rej_start_fin), .start_ird_ord_valid(rej_start_iov),
    .start_ird_ord(rej_start_io), .start_mss(rej_start_mss),
    .frame_len(tx_frame_len), .seq_advance(rej_seq_advance), .seg_count(rej_seg_count),
    .first_beat(rej_first_beat),
    .done(rej_done),
    .m_axis_tdata(txa_tdata[0 +: DATA_W]), .m_axis_tkeep(txa_tkeep[0 +: DATA_W/8]),
    .m_axis_tlast(txa_tlast[0]), .m_axis_tvalid(txa_tvalid[0]),
    .m_axis_tready(txa_tready[0])
  );

  bouncer_tcp_ctrl_builder #(.DATA_W(DATA_W)) u_ctl (
    .clk, .rst(rst_e),
    .s_req_valid(ctl_valid), .s_req_ready(ctl_ready), .s_req_kind(ctl_kind),
    .s_req_rem_mac(ctl_rem_mac), .s_req_loc_mac(ctl_loc_mac), .s_req_vlan_en(ctl_vlan_en),
    .s_req_vlan_tci(ctl_vlan_tci), .s_req_loc_ip(ctl_loc_ip), .s_req_rem_ip(ctl_rem_ip),
    .s_req_tos(ctl_tos), .s_req_ttl(ctl_ttl), .s_req_ip_id(ctl_ip_id),
    .s_req_loc_port(ctl_loc_port), .s_req_rem_port(ctl_rem_port), .s_req_seq(ctl_seq),
    .s_req_ack(ctl_ack), .s_req_window(ctl_window), .s_req_mss(ctl_mss),
    .s_req_wscale(ctl_wscale), .s_req_ws_en(ctl_ws_en),
    .m_axis_tdata(txa_tdata[DATA_W +: DATA_W]), .m_axis_tkeep(txa_tkeep[DATA_W/8 +: DATA_W/8]),
    .m_axis_tlast(txa_tlast[1]), .m_axis_tvalid(txa_tvalid[1]),
    .m_axis_tready(txa_tready[1])
  );

  // ARP requests for PORT_IP, answered from PORT_MAC: it watches the beats the RX parser
  // takes (frames the RX FIFO accepted, looped ones included)
  bouncer_arp_responder #(.DATA_W(DATA_W)) u_arp (
    .clk, .rst(rst_e),
    .enable, .port_mac, .port_ip,
    .s_snoop_tdata(rxf_tdata), .s_snoop_tkeep(rxf_tkeep), .s_snoop_tlast(rxf_tlast),
    .s_snoop_valid(rxf_tvalid && rxf_tready),
    .m_axis_tdata(txa_tdata[2*DATA_W +: DATA_W]),
    .m_axis_tkeep(txa_tkeep[2*DATA_W/8 +: DATA_W/8]),
    .m_axis_tlast(txa_tlast[2]), .m_axis_tvalid(txa_tvalid[2]),
    .m_axis_tready(txa_tready[2]),
    .stat_replied(st_arp_replied), .stat_dropped(st_arp_dropped)
  );

  logic [DATA_W-1:0]   arb_tdata;
  logic [DATA_W/8-1:0] arb_tkeep;
  logic                arb_tlast, arb_tvalid, arb_tready, arb_fire;

  bouncer_tx_arb #(.DATA_W(DATA_W), .N(3)) u_txarb (
    .clk, .rst(rst_e),
    .s_axis_tdata(txa_tdata), .s_axis_tkeep(txa_tkeep), .s_axis_tlast(txa_tlast),
    .s_axis_tvalid(txa_tvalid), .s_axis_tready(txa_tready),
    .m_axis_tdata(arb_tdata), .m_axis_tkeep(arb_tkeep),
    .m_axis_tlast(arb_tlast), .m_axis_tvalid(arb_tvalid),
    .m_axis_tready(arb_tready),
    .frame_done(tx_frame_done), .frame_bytes(tx_frame_bytes)
  );
  assign st_tx_frame = tx_frame_done;   // transmitted frames, looped ones included

  // ------------------------------------------------------------------ loopback
  // lb_rx_q: frames arriving on s_axis_rx are discarded; lb_tx_q: tx_arb's frames go into
  // the RX FIFO. Each changes only at a boundary of its own port (*_bound: after this
  // cycle's beat, if any, no frame of that port is in progress, and on TX no beat is left
  // waiting for m_axis_tx_tready). lb_tx_q turns on only once lb_rx_q is on, and lb_rx_q
  // turns off only once lb_tx_q is off, so lb_tx_q implies lb_rx_q: the RX FIFO input takes
  // either s_axis_rx or tx_arb, never beats of both within one frame.
  logic       lb_rx_q, lb_tx_q, rx_in_frame_q, rx_bound, tx_bound, lb_discard;
  logic [4:0] ovf_sum;
  logic [3:0] ovf_pend_q;

  assign arb_tready       = lb_tx_q || m_axis_tx_tready;
  assign arb_fire         = arb_tvalid && arb_tready;
  assign m_axis_tx_tdata  = arb_tdata;
  assign m_axis_tx_tkeep  = arb_tkeep;
  assign m_axis_tx_tlast  = arb_tlast;
  assign m_axis_tx_tvalid = arb_tvalid && !lb_tx_q;
  assign s_axis_rx_tready = 1'b1;

  assign rxi_tdata  = lb_tx_q ? arb_tdata : s_axis_rx_tdata;
  assign rxi_tkeep  = lb_tx_q ? arb_tkeep : s_axis_rx_tkeep;
  assign rxi_tlast  = lb_tx_q ? arb_tlast : s_axis_rx_tlast;
  assign rxi_tvalid = lb_tx_q ? arb_tvalid : (s_axis_rx_tvalid && !lb_rx_q);

  assign rx_bound   = s_axis_rx_tvalid ? s_axis_rx_tlast : !rx_in_frame_q;
  assign tx_bound   = arb_tvalid ? (arb_tready && arb_tlast) : !tx_out_in_frame_q;
  // one pulse per discarded frame, at its tlast beat
  assign lb_discard = lb_rx_q && s_axis_rx_tvalid && s_axis_rx_tlast;

  // RX_OVERFLOW increments by at most one per cycle: a discard in the same cycle as an RX
  // FIFO drop waits (up to 15 pending; they cannot pile up at frame rates a port allows).
  assign ovf_sum = 5'(ovf_pend_q) + 5'(rx_drop) + 5'(lb_discard);
  assign rx_ovf  = ovf_sum != 5'd0;

  always_ff @(posedge clk) begin
    if (s_axis_rx_tvalid) rx_in_frame_q <= !s_axis_rx_tlast;
    if (rx_bound) begin
      if (ctrl_lb) lb_rx_q <= 1'b1;
      else if (!lb_tx_q) lb_rx_q <= 1'b0;
    end
    if (tx_bound) begin
      if (!ctrl_lb) lb_tx_q <= 1'b0;
      else if (lb_rx_q) lb_tx_q <= 1'b1;
    end
    if (rx_ovf) ovf_pend_q <= (ovf_sum > 5'd16) ? 4'd15 : 4'(ovf_sum - 5'd1);
    if (rst) begin
      rx_in_frame_q <= 1'b0;
      lb_rx_q       <= 1'b0;
      lb_tx_q       <= 1'b0;
      ovf_pend_q    <= '0;
    end
  end

  // Whether each frame leaving tx_arb came from the reject builder (to m_axis_tx or, in loopback, into the
  // RX FIFO): the arbiter is frame-atomic and keeps order, so the frame starts it accepts
  // leave in the same order. A 4-deep FIFO of source ids (the arbiter holds at most two
  // frames' first beats) tells the CM engine when the reject's first beat leaves.
  logic [2:0] txa_in_frame_q, txa_sof;
  logic [3:0] src_fifo_q;
  logic [2:0] src_wr_q, src_rd_q;
  logic       tx_out_in_frame_q, tx_out_sof, tx_rej_sof;
  assign txa_sof    = txa_tvalid & txa_tready & ~txa_in_frame_q;
  assign tx_out_sof = arb_fire && !tx_out_in_frame_q;
  assign tx_rej_sof = tx_out_sof && (src_fifo_q[src_rd_q[1:0]] == 1'b0);
  always_ff @(posedge clk) begin
    for (int i = 0; i < 3; i++)
      if (txa_tvalid[i] && txa_tready[i]) txa_in_frame_q[i] <= !txa_tlast[i];
    if (arb_fire) tx_out_in_frame_q <= !arb_tlast;
    if (txa_sof != 3'b000) begin
      // 0: the reject builder's frame, 1: another source's (one start per cycle at most)
      for (int i = 0; i < 4; i++) if (src_wr_q[1:0] == 2'(i)) src_fifo_q[i] <= !txa_sof[0];
      src_wr_q <= src_wr_q + 3'd1;
    end
    if (tx_out_sof) src_rd_q <= src_rd_q + 3'd1;
    if (rst) begin
      txa_in_frame_q    <= '0;
      tx_out_in_frame_q <= 1'b0;
      src_wr_q          <= '0;
      src_rd_q          <= '0;
    end
  end

  bouncer_cq_writer #(.ADDR_W(AXI_ADDR_W)) u_cq (
    .clk, .rst(rst_e),
    .base(cq_base), .size_log2(cq_size_log2), .ring_reset(cq_reset), .head(cq_head),
    .tail(cq_tail), .full(cq_full),
    .s_cqe_valid(cqq_valid), .s_cqe_ready(cqq_ready), .s_cqe(cqq),
    .dma_valid(wr_cmd_valid[1]), .dma_ready(wr_cmd_ready[1]), .dma_addr(wr_cmd_addr[64 +: 64]),
    .dma_beats(wr_cmd_beats[4 +: 4]), .dma_data(wr_cmd_data[512 +: 512]),
    .dma_done(wr_done[1])
  );

  bouncer_cq_writer #(.ADDR_W(AXI_ADDR_W)) u_aeq (
    .clk, .rst(rst_e),
    .base(aeq_base), .size_log2(aeq_size_log2), .ring_reset(aeq_reset), .head(aeq_head),
    .tail(aeq_tail), .full(aeq_full),
    .s_cqe_valid(evt_valid), .s_cqe_ready(evt_ready), .s_cqe(evt),
    .dma_valid(wr_cmd_valid[3]), .dma_ready(wr_cmd_ready[3]), .dma_addr(wr_cmd_addr[3*64 +: 64]),
    .dma_beats(wr_cmd_beats[3*4 +: 4]), .dma_data(wr_cmd_data[3*512 +: 512]),
    .dma_done(wr_done[3])
  );

  // ------------------------------------------------------------------ state reset
  // CTRL.RESET: the request waits until the core is quiet (ENABLE 0, no engine busy, no DMA
  // outstanding, nothing on the TX path) for 128 cycles in a row, long enough for a frame a
  // builder has accepted to leave it. A TX port that never takes a frame keeps it pending. Then rst_e resets every block but the register file
  // (which clears its queue state itself, soft_rst) and the DMA masters: they are idle by
  // then, and their read IDs keep counting, so an answer to a read the watchdog gave up on
  // is still recognised as stale. A DMA that is never answered keeps the request pending.
  // An engine that only waits for room in a completion or event ring the host no longer
  // empties (CQ, CCQ, AEQ full) counts as quiet: its entry is lost with everything else.
  assign quiet = !enable && (!sq_busy || cq_full) && (!cqp_busy || ccq_full) &&
                 (!cm_busy || aeq_full) && dma_rd_idle && dma_wr_idle &&
                 !(|txa_tvalid) && !arb_tvalid && !tx_out_in_frame_q;
  always_ff @(posedge clk) begin
    quiet_q    <= !quiet ? 8'd0 : quiet_q[7] ? quiet_q : quiet_q + 8'd1;
    soft_rst_q <= reset_req && quiet_q[7] && !soft_rst_q;
    if (rst) begin
      quiet_q    <= '0;
      soft_rst_q <= 1'b0;
    end
  end
  assign rst_e = rst || soft_rst_q;

  // ------------------------------------------------------------------ latency probes
  generate
    if (PROBES != 0) begin : g_probe
      bouncer_probe #(.DATA_W(DATA_W), .ID_W(ID_W)) u_probe (
        .clk, .rst(rst_e), .cycle_count,
        .enable(probe_en), .clear(probe_clr), .pop(probe_pop), .head(probe_head),
        .count(probe_count), .overflow(probe_ovf), .lost(probe_lost),
        .sq_db, .sq_db_sq, .sq_db_push, .sq_db_pi, .push_take(|push_take),
        .wqe_rd_last(rd_valid && rd_last && rd_client == 2'd1), .sq_cur, .sq_cur_ci,
        .hrej_fire(hrej_valid && hrej_ready), .hrsp_valid,
        .cqe_fire(cqq_valid && cqq_ready), .cqe_sq(cqq_sq), .cqe_ci(cqq_idx),
        .rej_start_fire(rej_start_valid && rej_start_ready),
        .rej_start_port(rej_start_ctx[bouncer_regs_pkg::CM_CTX_REM_PORT_LSB +: 16]),
        .tx_fire(arb_fire), .tx_sof(tx_out_sof), .tx_rej_sof, .tx_tlast(arb_tlast),
        .tx_tdata(arb_tdata),
        .rx_in_last(rxi_tvalid && rxi_tlast), .rx_good,
        .rec_fire(rec_valid && rec_ready), .rec_tcp, .rec_bad, .rec_flags, .rec_sport,
        .rec_len,
        .acmd_fire(acmd_valid && acmd_ready), .acmd_offset,
        .arsp_fire(arsp_valid && arsp_ready), .arsp_ok, .arsp_hdr_valid, .arsp_total,
        .arsp_pd_len,
        .evt_fire(evt_valid && evt_ready),
        .evt_code(evt[bouncer_regs_pkg::AEQE_EVENT_CODE_LSB +: 8]),
        .evt_cm_id(evt[bouncer_regs_pkg::AEQE_CM_ID_LSB +: ID_W])
      );
    end else begin : g_no_probe
      assign probe_head  = '0;
      assign probe_count = '0;
      assign probe_ovf   = 1'b0;
      assign probe_lost  = '0;
      logic unused_probe;
      assign unused_probe = ^{probe_en, probe_clr, probe_pop, sq_db_push, sq_db_pi, sq_cur,
                              sq_cur_ci, cqq_sq, cqq_idx};
    end
  endgenerate

  // ------------------------------------------------------------------ capture ring
  // The port's two directions as they cross it: RX beats at s_axis_rx (looped-back frames do
  // not cross it), TX beats at m_axis_tx. Reset by rst only: CTRL.RESET (which Device::open
  // issues) keeps what the ring holds.
  generate
    if (CAPTURE_LOG2 != 0) begin : g_capture
      logic [7:0] cap_rx_count, cap_tx_count;
      bouncer_capture #(.DATA_W(DATA_W), .LOG2(CAPTURE_LOG2)) u_capture (
        .clk, .rst, .cycle_count,
        .s_tdata({m_axis_tx_tdata, s_axis_rx_tdata}), .s_tkeep({m_axis_tx_tkeep, s_axis_rx_tkeep}),
        .s_tlast({m_axis_tx_tlast, s_axis_rx_tlast}),
        .s_valid({m_axis_tx_tvalid && m_axis_tx_tready, s_axis_rx_tvalid && s_axis_rx_tready}),
        .freeze(cap_freeze), .clear(cap_clear),
        .sel_dir(cap_index[bouncer_regs_pkg::REG_CAP_INDEX_DIR_LSB]),
        .sel_frame(cap_index[bouncer_regs_pkg::REG_CAP_INDEX_FRAME_LSB +: CAPTURE_LOG2]),
        .sel_word(cap_index[bouncer_regs_pkg::REG_CAP_INDEX_WORD_LSB +: 5]),
        .rx_count(cap_rx_count), .tx_count(cap_tx_count),
        .rd_data(cap_data), .rd_len(cap_len), .rd_stamp(cap_stamp), .rd_end(cap_end)
      );
      assign cap_status =
          (32'(cap_rx_count) << bouncer_regs_pkg::REG_CAP_STATUS_RX_COUNT_LSB)
        | (32'(cap_tx_count) << bouncer_regs_pkg::REG_CAP_STATUS_TX_COUNT_LSB)
        | (32'(CAPTURE_LOG2) << bouncer_regs_pkg::REG_CAP_STATUS_LOG2_LSB)
        | (32'd7 << bouncer_regs_pkg::REG_CAP_STATUS_SNAP_LOG2_LSB)
        | (32'd1 << bouncer_regs_pkg::REG_CAP_STATUS_PRESENT_LSB);
      logic unused_cap;
      assign unused_cap = ^cap_index;
    end else begin : g_no_capture
      assign cap_status = '0;
      assign cap_len    = '0;
      assign cap_stamp  = '0;
      assign cap_end    = '0;
      assign cap_data   = '0;
      logic unused_cap;
      assign unused_cap = ^{cap_freeze, cap_clear, cap_index};
    end
  endgenerate

  assign irq = 1'b0;
  /* verilator lint_on PINCONNECTEMPTY */

endmodule
`default_nettype wire
