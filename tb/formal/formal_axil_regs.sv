// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_axil_regs: bounded model check harness for the AXI4-Lite slave
// rtl/host/bouncer_axil_regs (ADDR_W 16, NUM_SQ 4, every status and statistics input free).
// Environment (assumed): the master obeys AXI4-Lite: awvalid, wvalid and arvalid are held
// until their ready with stable address / data / strobes; bready and rready are free.
// Asserts: bvalid held until bready with stable bresp; rvalid held until rready with stable
// rdata and rresp; bvalid and rvalid low after reset; AW and W are taken in the same cycle;
// one response per request: exactly one B per write and one R per read, in order, never a
// response without a request (bvalid = a write taken and not yet answered, same for reads);
// a second copy from another initial state agrees on every ready and valid output.
`default_nettype none
module formal_axil_regs (
  input wire         clk,
  input wire         rst,
  input wire [15:0]  awaddr,
  input wire         awvalid,
  input wire [31:0]  wdata,
  input wire [3:0]   wstrb,
  input wire         wvalid,
  input wire         bready,
  input wire [15:0]  araddr,
  input wire         arvalid,
  input wire         rready,
  input wire [3:0]   push_take,
  input wire [59:0]  sq_ci,
  input wire [14:0]  cq_tail,
  input wire [14:0]  cqp_ci,
  input wire [14:0]  ccq_tail,
  input wire [6:0]   status,
  input wire         stat_tx_frame,
  input wire [15:0]  stat_tx_bytes,
  input wire         stat_sq_wqe,
  input wire         stat_sq_error,
  input wire         stat_push_used,
  input wire         stat_push_dropped,
  input wire         stat_cqp_wqe,
  input wire         stat_latency_valid,
  input wire [31:0]  stat_latency,
  input wire [14:0]  aeq_tail,
  input wire [16:0]  cm_conns,
  input wire [23:0]  stat_cm
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  wire        a_awready, a_wready, a_bvalid, a_arready, a_rvalid;
  wire        b_awready, b_wready, b_bvalid, b_arready, b_rvalid;
  wire [1:0]  a_bresp, a_rresp, b_bresp, b_rresp;
  wire [31:0] a_rdata, b_rdata;

  // the configuration outputs are not observed here (the unit tests cover their values)
  bouncer_axil_regs #(.ADDR_W(16)) dut_a (
    .clk(clk), .rst(rst),
    .s_axil_awaddr(awaddr), .s_axil_awvalid(awvalid), .s_axil_awready(a_awready),
    .s_axil_wdata(wdata), .s_axil_wstrb(wstrb), .s_axil_wvalid(wvalid), .s_axil_wready(a_wready),
    .s_axil_bresp(a_bresp), .s_axil_bvalid(a_bvalid), .s_axil_bready(bready),
    .s_axil_araddr(araddr), .s_axil_arvalid(arvalid), .s_axil_arready(a_arready),
    .s_axil_rdata(a_rdata), .s_axil_rresp(a_rresp), .s_axil_rvalid(a_rvalid), .s_axil_rready(rready),
    .push_take(push_take), .sq_ci(sq_ci), .cq_tail(cq_tail), .cqp_ci(cqp_ci), .ccq_tail(ccq_tail),
    .status(status), .stat_tx_frame(stat_tx_frame), .stat_tx_bytes(stat_tx_bytes),
    .stat_sq_wqe(stat_sq_wqe), .stat_sq_error(stat_sq_error), .stat_push_used(stat_push_used),
    .stat_push_dropped(stat_push_dropped), .stat_cqp_wqe(stat_cqp_wqe),
    .stat_latency_valid(stat_latency_valid), .stat_latency(stat_latency),
    .aeq_tail(aeq_tail), .cm_conns(cm_conns), .stat_cm(stat_cm)
  );
  bouncer_axil_regs #(.ADDR_W(16)) dut_b (
    .clk(clk), .rst(rst),
    .s_axil_awaddr(awaddr), .s_axil_awvalid(awvalid), .s_axil_awready(b_awready),
    .s_axil_wdata(wdata), .s_axil_wstrb(wstrb), .s_axil_wvalid(wvalid), .s_axil_wready(b_wready),
    .s_axil_bresp(b_bresp), .s_axil_bvalid(b_bvalid), .s_axil_bready(bready),
    .s_axil_araddr(araddr), .s_axil_arvalid(arvalid), .s_axil_arready(b_arready),
    .s_axil_rdata(b_rdata), .s_axil_rresp(b_rresp), .s_axil_rvalid(b_rvalid), .s_axil_rready(rready),
    .push_take(push_take), .sq_ci(sq_ci), .cq_tail(cq_tail), .cqp_ci(cqp_ci), .ccq_tail(ccq_tail),
    .status(status), .stat_tx_frame(stat_tx_frame), .stat_tx_bytes(stat_tx_bytes),
    .stat_sq_wqe(stat_sq_wqe), .stat_sq_error(stat_sq_error), .stat_push_used(stat_push_used),
    .stat_push_dropped(stat_push_dropped), .stat_cqp_wqe(stat_cqp_wqe),
    .stat_latency_valid(stat_latency_valid), .stat_latency(stat_latency),
    .aeq_tail(aeq_tail), .cm_conns(cm_conns), .stat_cm(stat_cm)
  );

  formal_axis_check #(.W(16), .MASTER(0)) env_aw (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(awvalid), .ready(a_awready), .payload(awaddr));
  formal_axis_check #(.W(36), .MASTER(0)) env_w (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(wvalid), .ready(a_wready), .payload({wstrb, wdata}));
  formal_axis_check #(.W(16), .MASTER(0)) env_ar (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(arvalid), .ready(a_arready), .payload(araddr));
  formal_axis_check #(.W(2), .MASTER(1)) chk_b (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_bvalid), .ready(bready), .payload(a_bresp));
  formal_axis_check #(.W(34), .MASTER(1)) chk_r (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_rvalid), .ready(rready), .payload({a_rresp, a_rdata}));

  // request / response accounting, kept by the harness
  wire aw_fire = awvalid && a_awready;
  wire w_fire  = wvalid && a_wready;
  wire b_fire  = a_bvalid && bready;
  wire ar_fire = arvalid && a_arready;
  wire r_fire  = a_rvalid && rready;
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
    if (!init_q) begin
      assert (a_awready == b_awready && a_wready == b_wready && a_bvalid == b_bvalid);
      assert (a_arready == b_arready && a_rvalid == b_rvalid);
      if (!rst) begin
        assert (aw_fire == w_fire);
        assert (wr_open_q <= 3'd1 && rd_open_q <= 3'd1);
        assert (a_bvalid == (wr_open_q == 3'd1));
        assert (a_rvalid == (rd_open_q == 3'd1));
        assert (a_bresp == 2'b00 && a_rresp == 2'b00);
      end
    end
  end

endmodule
`default_nettype wire
