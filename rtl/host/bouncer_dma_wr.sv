// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_dma_wr: AXI4 write master shared by N clients (round robin).
//
// A client hands over a whole small write at once: an address aligned to its size
// (32 or 64 bytes, so one burst never crosses 4 KiB), 1..8 beats, and the payload
// (beat i in cmd_data[64*i +: 64]). The master sends one INCR burst, waits for B and
// pulses done[client] with err = (BRESP != OKAY). One write is in flight at a time:
// AW + beats + memory latency.
`default_nettype none
module bouncer_dma_wr #(
  parameter int N        = 3,
  parameter int ADDR_W   = 64,
  parameter int ID_W     = 4,
  parameter int CLIENT_W = (N > 1) ? $clog2(N) : 1
) (
  input  wire                  clk,
  input  wire                  rst,

  input  wire [N-1:0]          cmd_valid,
  output logic [N-1:0]         cmd_ready,
  input  wire [N*ADDR_W-1:0]   cmd_addr,
  input  wire [N*4-1:0]        cmd_beats,    // 1..8
  input  wire [N*512-1:0]      cmd_data,
  output logic [N-1:0]         done,
  output logic                 err,

  output logic [ID_W-1:0]      m_axi_awid,
  output logic [ADDR_W-1:0]    m_axi_awaddr,
  output logic [7:0]           m_axi_awlen,
  output logic [2:0]           m_axi_awsize,
  output logic [1:0]           m_axi_awburst,
  output logic [3:0]           m_axi_awcache,
  output logic [2:0]           m_axi_awprot,
  output logic                 m_axi_awvalid,
  input  wire                  m_axi_awready,
  output logic [63:0]          m_axi_wdata,
  output logic [7:0]           m_axi_wstrb,
  output logic                 m_axi_wlast,
  output logic                 m_axi_wvalid,
  input  wire                  m_axi_wready,
  input  wire [1:0]            m_axi_bresp,
  input  wire                  m_axi_bvalid,
  output logic                 m_axi_bready
);

  logic                busy_q, awvalid_q, wvalid_q;
  logic [CLIENT_W-1:0] owner_q;
  logic [ADDR_W-1:0]   addr_q;
  logic [3:0]          beats_q, sent_q;
  logic [511:0]        data_q;

  logic                pick_valid;
  logic [CLIENT_W-1:0] pick;
  bouncer_rr_arbiter #(.N(N), .W(CLIENT_W)) u_arb (
    .clk, .rst, .req(cmd_valid), .accept(!busy_q), .grant_valid(pick_valid), .grant(pick)
  );

  always_comb begin
    cmd_ready = '0;
    if (!busy_q && pick_valid) cmd_ready[pick] = 1'b1;
  end

  logic wlast;
  assign wlast = (sent_q + 4'd1 == beats_q);

  always_ff @(posedge clk) begin
    done <= '0;
    if (!busy_q) begin
      if (pick_valid) begin
        busy_q    <= 1'b1;
        awvalid_q <= 1'b1;
        wvalid_q  <= 1'b1;
        owner_q   <= pick;
        addr_q    <= cmd_addr[pick*ADDR_W +: ADDR_W];
        beats_q   <= cmd_beats[pick*4 +: 4];
        data_q    <= cmd_data[pick*512 +: 512];
        sent_q    <= '0;
      end
    end else begin
      if (awvalid_q && m_axi_awready) awvalid_q <= 1'b0;
      if (wvalid_q && m_axi_wready) begin
        data_q <= {64'd0, data_q[511:64]};
        sent_q <= sent_q + 4'd1;
        if (wlast) wvalid_q <= 1'b0;
      end
      if (m_axi_bvalid && m_axi_bready) begin
        busy_q         <= 1'b0;
        done[owner_q]  <= 1'b1;
        err            <= (m_axi_bresp != 2'b00);
      end
    end
    if (rst) begin
      busy_q    <= 1'b0;
      awvalid_q <= 1'b0;
      wvalid_q  <= 1'b0;
      owner_q   <= '0;
      addr_q    <= '0;
      beats_q   <= '0;
      sent_q    <= '0;
      data_q    <= '0;
      done      <= '0;
      err       <= 1'b0;
    end
  end

  assign m_axi_awid    = '0;
  assign m_axi_awaddr  = addr_q;
  assign m_axi_awlen   = {4'd0, beats_q - 4'd1};
  assign m_axi_awsize  = 3'd3;
  assign m_axi_awburst = 2'b01;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_awprot  = 3'b000;
  assign m_axi_awvalid = awvalid_q;
  assign m_axi_wdata   = data_q[63:0];
  assign m_axi_wstrb   = 8'hFF;
  assign m_axi_wlast   = wlast;
  assign m_axi_wvalid  = wvalid_q;
  // B is only accepted once every W beat of the burst went out.
  assign m_axi_bready  = busy_q && !wvalid_q;

endmodule
`default_nettype wire
