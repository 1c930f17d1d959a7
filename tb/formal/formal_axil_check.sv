// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_axil_check: AXI4-Lite slave protocol checker for the formal harnesses (not
// synthesizable). Assumes a well-behaved master on AW, W and AR (valid held until ready,
// payload stable: formal_axis_check, MASTER 0) and asserts the slave side: B and R obey
// formal_axis_check; AW and W are taken together; at most one write and one read are open;
// BVALID / RVALID exactly while one is open; every response is OKAY.
// init: high in the first cycle of the check (the assertions start after it).
`default_nettype none
module formal_axil_check #(
  parameter int ADDR_W = 16
) (
  input wire              clk,
  input wire              rst,
  input wire              init,
  input wire [ADDR_W-1:0] awaddr,
  input wire              awvalid,
  input wire              awready,
  input wire [31:0]       wdata,
  input wire [3:0]        wstrb,
  input wire              wvalid,
  input wire              wready,
  input wire [1:0]        bresp,
  input wire              bvalid,
  input wire              bready,
  input wire [ADDR_W-1:0] araddr,
  input wire              arvalid,
  input wire              arready,
  input wire [31:0]       rdata,
  input wire [1:0]        rresp,
  input wire              rvalid,
  input wire              rready
);

  formal_axis_check #(.W(ADDR_W), .MASTER(0)) env_aw (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(awvalid), .ready(awready), .payload(awaddr));
  formal_axis_check #(.W(36), .MASTER(0)) env_w (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(wvalid), .ready(wready), .payload({wstrb, wdata}));
  formal_axis_check #(.W(ADDR_W), .MASTER(0)) env_ar (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(arvalid), .ready(arready), .payload(araddr));
  formal_axis_check #(.W(2), .MASTER(1)) chk_b (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(bvalid), .ready(bready), .payload(bresp));
  formal_axis_check #(.W(34), .MASTER(1)) chk_r (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(rvalid), .ready(rready), .payload({rresp, rdata}));

  // request / response accounting
  wire aw_fire = awvalid && awready;
  wire w_fire  = wvalid && wready;
  wire b_fire  = bvalid && bready;
  wire ar_fire = arvalid && arready;
  wire r_fire  = rvalid && rready;
  reg [2:0] wr_open_q, rd_open_q;   // requests taken and not yet answered
  always @(posedge clk) begin
    wr_open_q <= wr_open_q + {2'd0, aw_fire} - {2'd0, b_fire};
    rd_open_q <= rd_open_q + {2'd0, ar_fire} - {2'd0, r_fire};
    if (rst) begin
      wr_open_q <= 3'd0;
      rd_open_q <= 3'd0;
    end
  end

  always @(posedge clk) begin
    if (!init && !rst) begin
      assert (aw_fire == w_fire);
      assert (wr_open_q <= 3'd1 && rd_open_q <= 3'd1);
      assert (bvalid == (wr_open_q == 3'd1));
      assert (rvalid == (rd_open_q == 3'd1));
      assert (bresp == 2'b00 && rresp == 2'b00);
    end
  end

endmodule
`default_nettype wire
