// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_cm_ctx_table: the connection-context memory, one 512-bit cm_ctx per cm_id.
//
// The contexts live in one simple-dual-use block RAM (2**DEPTH_LOG2 x 512 bits; BRAM or
// URAM after synthesis, never flops). Two request ports share it with a fixed priority
// (port 0, the control queue, first): each request is a read or a full-entry write.
// Read data returns on rsp_* two cycles after the request is accepted (address register,
// RAM output register). Writes are visible to any read accepted after them.
// The whole table starts invalid: a reset sweep writes zeros to every entry
// (2**DEPTH_LOG2 cycles; `init_done` rises when it is over and no request is accepted
// before), so CTX_VALID reads 0 for a cm_id that was never written.
`default_nettype none
module bouncer_cm_ctx_table #(
  parameter int DEPTH_LOG2 = 10
) (
  input  wire                   clk,
  input  wire                   rst,
  output logic                  init_done,

  input  wire [1:0]             req_valid,
  output logic [1:0]            req_ready,
  input  wire [1:0]             req_we,
  input  wire [2*DEPTH_LOG2-1:0] req_addr,
  input  wire [2*512-1:0]       req_wdata,

  output logic [1:0]            rsp_valid,     // one-cycle pulse per accepted read
  output logic [511:0]          rsp_rdata
);


  logic                  init_q;
  logic [DEPTH_LOG2:0]   init_addr_q;

  // arbitration: port 0 wins
  logic                  sel;
  logic                  go;
  logic                  we;
  logic [DEPTH_LOG2-1:0] addr;
  logic [511:0]          wdata;

  assign sel  = !req_valid[0];
  assign go   = init_q && (req_valid != 2'b00);
  assign we   = !init_q || req_we[sel];
  assign addr = !init_q ? init_addr_q[DEPTH_LOG2-1:0] : req_addr[sel*DEPTH_LOG2 +: DEPTH_LOG2];
  assign wdata = !init_q ? 512'd0 : req_wdata[sel*512 +: 512];

  assign req_ready = {go && sel, go && !sel};

  // RAM: registered read (read-first), one write port, same address port. Eight 64-bit lanes
  // rather than one 512-bit word: the same BRAM/URAM count, and Yosys 0.23's memory mapper
  // handles 64-bit words at any depth (a single 512-bit memory fails from 2**12 entries up).
  logic [511:0] rdata_q;
  for (genvar l = 0; l < 8; l++) begin : g_lane
    (* ram_style = "block" *) logic [63:0] lane_mem [1 << DEPTH_LOG2];
    always_ff @(posedge clk) begin
      if (we && (go || !init_q)) lane_mem[addr] <= wdata[64*l +: 64];
      rdata_q[64*l +: 64] <= lane_mem[addr];
    end
  end

  logic [1:0] rd_s1_q, rd_s2_q;
  always_ff @(posedge clk) begin
    rd_s1_q <= {go && sel && !req_we[1], go && !sel && !req_we[0]};
    rd_s2_q <= rd_s1_q;
    if (!init_q) begin
      init_addr_q <= init_addr_q + 1'b1;
      if (init_addr_q == (DEPTH_LOG2+1)'((1 << DEPTH_LOG2) - 1)) init_q <= 1'b1;
    end
    if (rst) begin
      init_q      <= 1'b0;
      init_addr_q <= '0;
      rd_s1_q     <= '0;
      rd_s2_q     <= '0;
    end
  end

  // output register stage (kept outside the RAM block so it maps to the BRAM output reg)
  logic [511:0] rdata_out_q;
  always_ff @(posedge clk) rdata_out_q <= rdata_q;

  assign rsp_valid = rd_s2_q;
  assign rsp_rdata = rdata_out_q;
  assign init_done = init_q;

endmodule
`default_nettype wire
