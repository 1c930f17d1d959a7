// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_core: the Bouncer offload, one clock domain.
//
//   s_axil ──> bouncer_axil_regs ──doorbells/push──> bouncer_sq_engine ──> bouncer_mpa_reject_builder ──> m_axis_tx
//                     │                                   │   │   │
//                     └────────────> bouncer_cqp_engine   │   │   └──> bouncer_cq_writer (CQ)  ─┐
//                                        │    │           │   │                                 │
//                                        │    └─────> bouncer_cm_ctx_table <─┘                  │
//                                        └──> bouncer_cq_writer (CCQ) ─┐                        │
//   m_axi <── bouncer_dma_rd (CQP, SQ) / bouncer_dma_wr (CCQ, CQ, CQP) <┴────────────────────────┘
//
// Parameters: DATA_W is the TX stream width (64 or 512); CTX_DEPTH_LOG2 sizes the
// connection table (cm_id < 2**CTX_DEPTH_LOG2). The DMA master is 64 bits wide.
// See docs/architecture.md and docs/operations.md for the walk-through of one reject.
`default_nettype none
module bouncer_core #(
  parameter int DATA_W         = 64,  // TX AXI-Stream width: 64 or 512
  parameter int CTX_DEPTH_LOG2 = 10,  // connection-table depth
  parameter int AXIL_ADDR_W    = 16,
  parameter int AXI_ADDR_W     = 64,
  parameter int AXI_ID_W       = 4
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

  output logic                   irq          // reserved (0): completions are polled
);
  localparam int CLW = 2;   // dma_wr client index width (3 clients)

  // ------------------------------------------------------------------ registers
  logic               enable;
  logic [63:0]        sq_base, cq_base, cqp_base, ccq_base;
  logic [3:0]         sq_size_log2, cq_size_log2, cqp_size_log2, ccq_size_log2;
  logic               sq_reset, cq_reset, cqp_reset, ccq_reset;
  logic [14:0]        sq_pi, sq_ci, cq_head, cq_tail, cqp_pi, cqp_ci, ccq_head, ccq_tail;
  logic               sq_db;
  logic [511:0]       push_wqe;
  logic               push_armed, push_take;
  logic [14:0]        push_idx;
  logic [63:0]        cycle_count;
  logic               sq_busy, cqp_busy, cq_full, ccq_full, dma_wr_posted_err;
  logic               st_tx_frame, st_sq_wqe, st_sq_err, st_push_used, st_push_drop, st_cqp_wqe;
  logic               st_lat_valid;
  logic [31:0]        st_lat;
  logic [15:0]        tx_frame_len;

  logic unused_ok;
  assign unused_ok = ^{s_axil_awprot, s_axil_arprot, m_axi_bid, m_axi_rid};

  bouncer_axil_regs #(
    .ADDR_W(AXIL_ADDR_W), .DATA_BYTES(DATA_W / 8), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2)
  ) u_regs (
    .clk, .rst,
    .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wstrb,
    .s_axil_wvalid, .s_axil_wready, .s_axil_bresp, .s_axil_bvalid, .s_axil_bready,
    .s_axil_araddr, .s_axil_arvalid, .s_axil_arready, .s_axil_rdata, .s_axil_rresp,
    .s_axil_rvalid, .s_axil_rready,
    .ctrl_enable(enable),
    .sq_base, .sq_size_log2, .sq_reset, .sq_pi, .sq_db, .push_wqe, .push_armed, .push_idx,
    .push_take,
    .cq_base, .cq_size_log2, .cq_reset, .cq_head,
    .cqp_base, .cqp_size_log2, .cqp_reset, .cqp_pi,
    .ccq_base, .ccq_size_log2, .ccq_reset, .ccq_head,
    .cycle_count,
    .sq_ci, .cq_tail, .cqp_ci, .ccq_tail,
    .status({dma_wr_posted_err, ccq_full && cqp_busy, cq_full && sq_busy, cqp_busy, sq_busy}),
    .stat_tx_frame(st_tx_frame), .stat_tx_bytes(tx_frame_len),
    .stat_sq_wqe(st_sq_wqe), .stat_sq_error(st_sq_err),
    .stat_push_used(st_push_used), .stat_push_dropped(st_push_drop),
    .stat_cqp_wqe(st_cqp_wqe),
    .stat_latency_valid(st_lat_valid), .stat_latency(st_lat)
  );

  // ------------------------------------------------------------------ DMA
  // read clients: 0 = control queue, 1 = SQ
  logic [1:0]          rd_cmd_valid, rd_cmd_ready;
  logic [2*64-1:0]     rd_cmd_addr;
  logic [2*8-1:0]      rd_cmd_beats;
  logic                rd_valid, rd_last, rd_err;
  logic [0:0]          rd_client;
  logic [63:0]         rd_data;

  bouncer_dma_rd #(.N(2), .ADDR_W(AXI_ADDR_W), .ID_W(AXI_ID_W)) u_dma_rd (
    .clk, .rst,
    .cmd_valid(rd_cmd_valid), .cmd_ready(rd_cmd_ready), .cmd_addr(rd_cmd_addr),
    .cmd_beats(rd_cmd_beats),
    .rd_valid, .rd_client, .rd_data, .rd_last, .rd_err,
    .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst, .m_axi_arcache,
    .m_axi_arprot, .m_axi_arvalid, .m_axi_arready, .m_axi_rdata, .m_axi_rresp, .m_axi_rlast,
    .m_axi_rvalid, .m_axi_rready
  );

  // write clients: 0 = CCQ writer, 1 = CQ writer, 2 = control queue (context read-back)
  logic [2:0]          wr_cmd_valid, wr_cmd_ready, wr_done;
  logic [3*64-1:0]     wr_cmd_addr;
  logic [3*4-1:0]      wr_cmd_beats;
  logic [3*512-1:0]    wr_cmd_data;
  logic                wr_err;

  // completions are posted writes; the context read-back waits for its write response
  bouncer_dma_wr #(
    .N(3), .ADDR_W(AXI_ADDR_W), .ID_W(AXI_ID_W), .CLIENT_W(CLW), .POSTED_MASK(3'b011)
  ) u_dma_wr (
    .clk, .rst,
    .cmd_valid(wr_cmd_valid), .cmd_ready(wr_cmd_ready), .cmd_addr(wr_cmd_addr),
    .cmd_beats(wr_cmd_beats), .cmd_data(wr_cmd_data), .done(wr_done), .err(wr_err),
    .posted_err(dma_wr_posted_err),
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
    .clk, .rst, .init_done(ctx_init_done),
    .req_valid(ctx_req_valid), .req_ready(ctx_req_ready), .req_we(ctx_req_we),
    .req_addr(ctx_req_addr), .req_wdata(ctx_req_wdata),
    .rsp_valid(ctx_rsp_valid), .rsp_rdata(ctx_rsp_rdata)
  );

  // ------------------------------------------------------------------ control queue
  logic         ccqe_valid, ccqe_ready;
  logic [255:0] ccqe;

  bouncer_cqp_engine #(.ADDR_W(AXI_ADDR_W), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2)) u_cqp (
    .clk, .rst,
    .enable(enable && ctx_init_done), .cqp_base, .cqp_size_log2, .cqp_reset, .cqp_pi,
    .cqp_ci, .busy(cqp_busy),
    .rd_cmd_valid(rd_cmd_valid[0]), .rd_cmd_ready(rd_cmd_ready[0]),
    .rd_cmd_addr(rd_cmd_addr[0 +: 64]), .rd_cmd_beats(rd_cmd_beats[0 +: 8]),
    .rd_valid(rd_valid && rd_client == 1'b0), .rd_data, .rd_last(rd_last && rd_client == 1'b0),
    .rd_err,
    .wr_cmd_valid(wr_cmd_valid[2]), .wr_cmd_ready(wr_cmd_ready[2]),
    .wr_cmd_addr(wr_cmd_addr[2*64 +: 64]), .wr_cmd_beats(wr_cmd_beats[2*4 +: 4]),
    .wr_cmd_data(wr_cmd_data[2*512 +: 512]), .wr_done(wr_done[2]), .wr_err,
    .ctx_req_valid(ctx_req_valid[0]), .ctx_req_ready(ctx_req_ready[0]),
    .ctx_req_we(ctx_req_we[0]), .ctx_req_addr(ctx_req_addr[0 +: CTX_DEPTH_LOG2]),
    .ctx_req_wdata(ctx_req_wdata[0 +: 512]),
    .ctx_rsp_valid(ctx_rsp_valid[0]), .ctx_rsp_rdata,
    .cqe_valid(ccqe_valid), .cqe_ready(ccqe_ready), .cqe(ccqe),
    .stat_wqe(st_cqp_wqe)
  );

  bouncer_cq_writer #(.ADDR_W(AXI_ADDR_W)) u_ccq (
    .clk, .rst,
    .base(ccq_base), .size_log2(ccq_size_log2), .ring_reset(ccq_reset), .head(ccq_head),
    .tail(ccq_tail), .full(ccq_full),
    .s_cqe_valid(ccqe_valid), .s_cqe_ready(ccqe_ready), .s_cqe(ccqe),
    .dma_valid(wr_cmd_valid[0]), .dma_ready(wr_cmd_ready[0]), .dma_addr(wr_cmd_addr[0 +: 64]),
    .dma_beats(wr_cmd_beats[0 +: 4]), .dma_data(wr_cmd_data[0 +: 512]),
    .dma_done(wr_done[0])
  );

  // ------------------------------------------------------------------ reject SQ
  logic         pd_clear, pd_wr_en;
  logic [9:0]   pd_len;
  logic [6:0]   pd_wr_idx;
  logic [63:0]  pd_wr_data;
  logic         tx_start_valid, tx_start_ready, tx_start_fin, tx_start_ird_ord_valid;
  logic [511:0] tx_start_ctx;
  logic [31:0]  tx_start_ird_ord;
  logic [15:0]  tx_seq_advance;
  logic         tx_first_beat, tx_done;
  logic         sqcqe_valid, sqcqe_ready;
  logic [255:0] sqcqe;

  bouncer_sq_engine #(.ADDR_W(AXI_ADDR_W), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2)) u_sq (
    .clk, .rst,
    .enable(enable && ctx_init_done), .sq_base, .sq_size_log2, .sq_reset, .sq_pi, .sq_db,
    .push_wqe, .push_armed, .push_idx, .push_take, .sq_ci, .busy(sq_busy), .cycle_count,
    .dma_valid(rd_cmd_valid[1]), .dma_ready(rd_cmd_ready[1]), .dma_addr(rd_cmd_addr[64 +: 64]),
    .dma_beats(rd_cmd_beats[8 +: 8]),
    .rd_valid(rd_valid && rd_client == 1'b1), .rd_data, .rd_last(rd_last && rd_client == 1'b1),
    .rd_err,
    .ctx_req_valid(ctx_req_valid[1]), .ctx_req_ready(ctx_req_ready[1]),
    .ctx_req_we(ctx_req_we[1]), .ctx_req_addr(ctx_req_addr[CTX_DEPTH_LOG2 +: CTX_DEPTH_LOG2]),
    .ctx_req_wdata(ctx_req_wdata[512 +: 512]),
    .ctx_rsp_valid(ctx_rsp_valid[1]), .ctx_rsp_rdata,
    .pd_clear, .pd_len, .pd_wr_en, .pd_wr_idx, .pd_wr_data,
    .tx_start_valid, .tx_start_ready, .tx_start_ctx, .tx_start_fin, .tx_start_ird_ord_valid,
    .tx_start_ird_ord, .tx_frame_len, .tx_seq_advance, .tx_first_beat, .tx_done,
    .cqe_valid(sqcqe_valid), .cqe_ready(sqcqe_ready), .cqe(sqcqe),
    .stat_wqe(st_sq_wqe), .stat_error(st_sq_err), .stat_push_used(st_push_used),
    .stat_push_dropped(st_push_drop), .stat_latency_valid(st_lat_valid), .stat_latency(st_lat)
  );

  bouncer_mpa_reject_builder #(.DATA_W(DATA_W)) u_tx (
    .clk, .rst,
    .pd_clear, .pd_len, .pd_wr_en, .pd_wr_idx, .pd_wr_data,
    .start_valid(tx_start_valid), .start_ready(tx_start_ready), .start_ctx(tx_start_ctx),
    .start_fin(tx_start_fin), .start_ird_ord_valid(tx_start_ird_ord_valid),
    .start_ird_ord(tx_start_ird_ord),
    .frame_len(tx_frame_len), .seq_advance(tx_seq_advance), .first_beat(tx_first_beat),
    .done(tx_done),
    .m_axis_tdata(m_axis_tx_tdata), .m_axis_tkeep(m_axis_tx_tkeep),
    .m_axis_tlast(m_axis_tx_tlast), .m_axis_tvalid(m_axis_tx_tvalid),
    .m_axis_tready(m_axis_tx_tready)
  );
  assign st_tx_frame = tx_done;

  bouncer_cq_writer #(.ADDR_W(AXI_ADDR_W)) u_cq (
    .clk, .rst,
    .base(cq_base), .size_log2(cq_size_log2), .ring_reset(cq_reset), .head(cq_head),
    .tail(cq_tail), .full(cq_full),
    .s_cqe_valid(sqcqe_valid), .s_cqe_ready(sqcqe_ready), .s_cqe(sqcqe),
    .dma_valid(wr_cmd_valid[1]), .dma_ready(wr_cmd_ready[1]), .dma_addr(wr_cmd_addr[64 +: 64]),
    .dma_beats(wr_cmd_beats[4 +: 4]), .dma_data(wr_cmd_data[512 +: 512]),
    .dma_done(wr_done[1])
  );

  assign irq = 1'b0;

endmodule
`default_nettype wire
