// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_kernel: Vitis RTL kernel top (user-managed control) around bouncer_core. The
// interface is fixed by the lead (notes: kernel_iface; the port names are what
// package_kernel.tcl and the link .cfg files use):
//   ap_clk / ap_rst_n         kernel clock; s_axi_control (AXI4-Lite, 64 KiB, the register
//                             map of docs/register-map.md) and m_axi_host (AXI4, 64-bit
//                             address and data, ID 4, -> HOST[0]) run on it.
//   ap_clk_2 / ap_rst_n_2     stream clock (CMAC user clock, 322.265625 MHz): s_axis_rx (from
//                             the CMAC) and m_axis_tx (to the CMAC) run on it when
//                             ASYNC_STREAMS = 1.
// Parameters: DATA_W (64 | 512) is the stream width, CTX_DEPTH_LOG2 the connection-table
// depth, ASYNC_STREAMS = 1 puts the streams on ap_clk_2 behind two bouncer_axis_async_fifo
// (RX: FRAME_DROP = 1, a MAC cannot be stalled, frames the FIFO cannot hold are dropped
// whole; TX: store and forward without loss, so the CMAC never sees a frame run dry);
// ASYNC_STREAMS = 0 leaves ap_clk_2 / ap_rst_n_2 unused and the streams on ap_clk. NUM_SQ
// (1..4) is the core's number of reject SQs (CAPS.NUM_SQ).
// Resets: ap_rst_n (and, with ASYNC_STREAMS = 1, ap_rst_n_2) are combined into one
// asynchronous reset, released into each domain by a bouncer_reset_sync (3 flops), so both
// domains, and both sides of each async FIFO, are in reset together. The kernel leaves reset
// 3 ap_clk cycles after ap_rst_n (and ap_rst_n_2) are high; the core then sweeps its tables
// (STATUS.CM_READY).
// Latency: the core's own (docs/architecture.md), plus per async FIFO (store and forward: a
// frame leaves once it is complete) 3 to 4 destination-clock periods from the source-clock
// edge that takes the frame's tlast beat to its first beat on the far side. With
// ASYNC_STREAMS = 0 the kernel adds no register.
// The core's irq output is reserved (0) and not a kernel port; completions are polled.
`default_nettype none
module bouncer_kernel #(
  parameter int DATA_W         = 512,
  parameter int CTX_DEPTH_LOG2 = 10,
  parameter int ASYNC_STREAMS  = 1,
  parameter int NUM_SQ         = 4
) (
  input  wire                 ap_clk,
  input  wire                 ap_rst_n,
  input  wire                 ap_clk_2,
  input  wire                 ap_rst_n_2,

  // AXI4-Lite control slave (ap_clk)
  input  wire  [15:0]         s_axi_control_awaddr,
  input  wire                 s_axi_control_awvalid,
  output logic                s_axi_control_awready,
  input  wire  [31:0]         s_axi_control_wdata,
  input  wire  [3:0]          s_axi_control_wstrb,
  input  wire                 s_axi_control_wvalid,
  output logic                s_axi_control_wready,
  output logic [1:0]          s_axi_control_bresp,
  output logic                s_axi_control_bvalid,
  input  wire                 s_axi_control_bready,
  input  wire  [15:0]         s_axi_control_araddr,
  input  wire                 s_axi_control_arvalid,
  output logic                s_axi_control_arready,
  output logic [31:0]         s_axi_control_rdata,
  output logic [1:0]          s_axi_control_rresp,
  output logic                s_axi_control_rvalid,
  input  wire                 s_axi_control_rready,

  // AXI4 master to host memory (ap_clk)
  output logic [3:0]          m_axi_host_awid,
  output logic [63:0]         m_axi_host_awaddr,
  output logic [7:0]          m_axi_host_awlen,
  output logic [2:0]          m_axi_host_awsize,
  output logic [1:0]          m_axi_host_awburst,
  output logic [3:0]          m_axi_host_awcache,
  output logic [2:0]          m_axi_host_awprot,
  output logic                m_axi_host_awvalid,
  input  wire                 m_axi_host_awready,
  output logic [63:0]         m_axi_host_wdata,
  output logic [7:0]          m_axi_host_wstrb,
  output logic                m_axi_host_wlast,
  output logic                m_axi_host_wvalid,
  input  wire                 m_axi_host_wready,
  input  wire  [3:0]          m_axi_host_bid,
  input  wire  [1:0]          m_axi_host_bresp,
  input  wire                 m_axi_host_bvalid,
  output logic                m_axi_host_bready,
  output logic [3:0]          m_axi_host_arid,
  output logic [63:0]         m_axi_host_araddr,
  output logic [7:0]          m_axi_host_arlen,
  output logic [2:0]          m_axi_host_arsize,
  output logic [1:0]          m_axi_host_arburst,
  output logic [3:0]          m_axi_host_arcache,
  output logic [2:0]          m_axi_host_arprot,
  output logic                m_axi_host_arvalid,
  input  wire                 m_axi_host_arready,
  input  wire  [3:0]          m_axi_host_rid,
  input  wire  [63:0]         m_axi_host_rdata,
  input  wire  [1:0]          m_axi_host_rresp,
  input  wire                 m_axi_host_rlast,
  input  wire                 m_axi_host_rvalid,
  output logic                m_axi_host_rready,

  // AXI-Stream from the CMAC (ap_clk_2 if ASYNC_STREAMS, else ap_clk)
  input  wire  [DATA_W-1:0]   s_axis_rx_tdata,
  input  wire  [DATA_W/8-1:0] s_axis_rx_tkeep,
  input  wire                 s_axis_rx_tlast,
  input  wire                 s_axis_rx_tvalid,
  output logic                s_axis_rx_tready,

  // AXI-Stream to the CMAC (ap_clk_2 if ASYNC_STREAMS, else ap_clk)
  output logic [DATA_W-1:0]   m_axis_tx_tdata,
  output logic [DATA_W/8-1:0] m_axis_tx_tkeep,
  output logic                m_axis_tx_tlast,
  output logic                m_axis_tx_tvalid,
  input  wire                 m_axis_tx_tready
);

  localparam int KW = DATA_W / 8;
  // CDC FIFO depths (beats): RX holds 32 KiB at 512 bits (8 RAMB36, the same as any depth up
  // to 512) and 16 KiB at 64 bits; TX frames are at most ~700 bytes (a reject with 512 bytes
  // of private data), far below either depth.
  localparam int RX_FIFO_LOG2 = (DATA_W == 64) ? 11 : 9;
  localparam int TX_FIFO_LOG2 = 9;

  // ------------------------------------------------------------------ resets
  logic arst_n, rst, rst_2;

  bouncer_reset_sync u_rst (.clk(ap_clk), .arst_n(arst_n), .rst(rst));

  // ------------------------------------------------------------------ core
  logic [DATA_W-1:0] rx_tdata, tx_tdata;
  logic [KW-1:0]     rx_tkeep, tx_tkeep;
  logic              rx_tlast, rx_tvalid, rx_tready;
  logic              tx_tlast, tx_tvalid, tx_tready;
  logic              core_irq;

  bouncer_core #(
    .DATA_W(DATA_W), .CTX_DEPTH_LOG2(CTX_DEPTH_LOG2), .AXIL_ADDR_W(16), .AXI_ADDR_W(64),
    .AXI_ID_W(4), .NUM_SQ(NUM_SQ)
  ) u_core (
    .clk(ap_clk), .rst(rst),
    .s_axil_awaddr(s_axi_control_awaddr), .s_axil_awprot(3'b000),
    .s_axil_awvalid(s_axi_control_awvalid), .s_axil_awready(s_axi_control_awready),
    .s_axil_wdata(s_axi_control_wdata), .s_axil_wstrb(s_axi_control_wstrb),
    .s_axil_wvalid(s_axi_control_wvalid), .s_axil_wready(s_axi_control_wready),
    .s_axil_bresp(s_axi_control_bresp), .s_axil_bvalid(s_axi_control_bvalid),
    .s_axil_bready(s_axi_control_bready),
    .s_axil_araddr(s_axi_control_araddr), .s_axil_arprot(3'b000),
    .s_axil_arvalid(s_axi_control_arvalid), .s_axil_arready(s_axi_control_arready),
    .s_axil_rdata(s_axi_control_rdata), .s_axil_rresp(s_axi_control_rresp),
    .s_axil_rvalid(s_axi_control_rvalid), .s_axil_rready(s_axi_control_rready),
    .m_axi_awid(m_axi_host_awid), .m_axi_awaddr(m_axi_host_awaddr),
    .m_axi_awlen(m_axi_host_awlen), .m_axi_awsize(m_axi_host_awsize),
    .m_axi_awburst(m_axi_host_awburst), .m_axi_awcache(m_axi_host_awcache),
    .m_axi_awprot(m_axi_host_awprot), .m_axi_awvalid(m_axi_host_awvalid),
    .m_axi_awready(m_axi_host_awready),
    .m_axi_wdata(m_axi_host_wdata), .m_axi_wstrb(m_axi_host_wstrb),
    .m_axi_wlast(m_axi_host_wlast), .m_axi_wvalid(m_axi_host_wvalid),
    .m_axi_wready(m_axi_host_wready),
    .m_axi_bid(m_axi_host_bid), .m_axi_bresp(m_axi_host_bresp),
    .m_axi_bvalid(m_axi_host_bvalid), .m_axi_bready(m_axi_host_bready),
    .m_axi_arid(m_axi_host_arid), .m_axi_araddr(m_axi_host_araddr),
    .m_axi_arlen(m_axi_host_arlen), .m_axi_arsize(m_axi_host_arsize),
    .m_axi_arburst(m_axi_host_arburst), .m_axi_arcache(m_axi_host_arcache),
    .m_axi_arprot(m_axi_host_arprot), .m_axi_arvalid(m_axi_host_arvalid),
    .m_axi_arready(m_axi_host_arready),
    .m_axi_rid(m_axi_host_rid), .m_axi_rdata(m_axi_host_rdata),
    .m_axi_rresp(m_axi_host_rresp), .m_axi_rlast(m_axi_host_rlast),
    .m_axi_rvalid(m_axi_host_rvalid), .m_axi_rready(m_axi_host_rready),
    .m_axis_tx_tdata(tx_tdata), .m_axis_tx_tkeep(tx_tkeep), .m_axis_tx_tlast(tx_tlast),
    .m_axis_tx_tvalid(tx_tvalid), .m_axis_tx_tready(tx_tready),
    .s_axis_rx_tdata(rx_tdata), .s_axis_rx_tkeep(rx_tkeep), .s_axis_rx_tlast(rx_tlast),
    .s_axis_rx_tvalid(rx_tvalid), .s_axis_rx_tready(rx_tready),
    .irq(core_irq)
  );

  // ------------------------------------------------------------------ streams
  // The FIFOs' frame pulses are not used here (no counter in the kernel).
  /* verilator lint_off PINCONNECTEMPTY */
  if (ASYNC_STREAMS != 0) begin : g_async
    // One reset for both domains (see the header). Both inputs are reset outputs of the
    // platform; their AND only feeds asynchronous assertion inputs.
    assign arst_n = ap_rst_n && ap_rst_n_2;

    bouncer_reset_sync u_rst_2 (.clk(ap_clk_2), .arst_n(arst_n), .rst(rst_2));

    // RX: ap_clk_2 -> ap_clk. The core takes a beat every cycle (its s_axis_rx_tready is
    // constant 1); a frame this FIFO cannot hold is dropped whole (not counted: at 512 bits
    // ap_clk drains 128 Gb/s at 250 MHz, more than the 100G line brings).
    bouncer_axis_async_fifo #(
      .DATA_W(DATA_W), .DEPTH_LOG2(RX_FIFO_LOG2), .FRAME_DROP(1)
    ) u_rx_cdc (
      .s_clk(ap_clk_2), .s_rst(rst_2),
      .s_axis_tdata(s_axis_rx_tdata), .s_axis_tkeep(s_axis_rx_tkeep),
      .s_axis_tlast(s_axis_rx_tlast), .s_axis_tvalid(s_axis_rx_tvalid),
      .s_axis_tready(s_axis_rx_tready),
      .s_good_frame(), .s_drop_frame(),
      .m_clk(ap_clk), .m_rst(rst),
      .m_axis_tdata(rx_tdata), .m_axis_tkeep(rx_tkeep), .m_axis_tlast(rx_tlast),
      .m_axis_tvalid(rx_tvalid), .m_axis_tready(rx_tready)
    );

    // TX: ap_clk -> ap_clk_2, without loss (back-pressures the core's TX arbiter)
    bouncer_axis_async_fifo #(
      .DATA_W(DATA_W), .DEPTH_LOG2(TX_FIFO_LOG2), .FRAME_DROP(0)
    ) u_tx_cdc (
      .s_clk(ap_clk), .s_rst(rst),
      .s_axis_tdata(tx_tdata), .s_axis_tkeep(tx_tkeep), .s_axis_tlast(tx_tlast),
      .s_axis_tvalid(tx_tvalid), .s_axis_tready(tx_tready),
      .s_good_frame(), .s_drop_frame(),
      .m_clk(ap_clk_2), .m_rst(rst_2),
      .m_axis_tdata(m_axis_tx_tdata), .m_axis_tkeep(m_axis_tx_tkeep),
      .m_axis_tlast(m_axis_tx_tlast), .m_axis_tvalid(m_axis_tx_tvalid),
      .m_axis_tready(m_axis_tx_tready)
    );
  end else begin : g_sync
    assign arst_n = ap_rst_n;
    assign rst_2  = 1'b0;

    assign rx_tdata         = s_axis_rx_tdata;
    assign rx_tkeep         = s_axis_rx_tkeep;
    assign rx_tlast         = s_axis_rx_tlast;
    assign rx_tvalid        = s_axis_rx_tvalid;
    assign s_axis_rx_tready = rx_tready;

    assign m_axis_tx_tdata  = tx_tdata;
    assign m_axis_tx_tkeep  = tx_tkeep;
    assign m_axis_tx_tlast  = tx_tlast;
    assign m_axis_tx_tvalid = tx_tvalid;
    assign tx_tready        = m_axis_tx_tready;
  end
  /* verilator lint_on PINCONNECTEMPTY */

  // ap_clk_2 / ap_rst_n_2 are unused when ASYNC_STREAMS = 0; irq is reserved
  logic unused_ok;
  assign unused_ok = ^{core_irq, rst_2, ap_clk_2, ap_rst_n_2};

endmodule
`default_nettype wire
