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
  input wire [8:0]   status,
  input wire         soft_rst,
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
    .clk(clk), .rst(rst), .soft_rst(soft_rst), .ctrl_reset_req(),
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
    .clk(clk), .rst(rst), .soft_rst(soft_rst), .ctrl_reset_req(),
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

  formal_axil_check #(.ADDR_W(16)) chk_axil (
    .clk(clk), .rst(rst), .init(init_q),
    .awaddr(awaddr), .awvalid(awvalid), .awready(a_awready),
    .wdata(wdata), .wstrb(wstrb), .wvalid(wvalid), .wready(a_wready),
    .bresp(a_bresp), .bvalid(a_bvalid), .bready(bready),
    .araddr(araddr), .arvalid(arvalid), .arready(a_arready),
    .rdata(a_rdata), .rresp(a_rresp), .rvalid(a_rvalid), .rready(rready));

  // the second copy (another initial state) agrees on every handshake output
  always @(posedge clk) begin
    if (!init_q) begin
      assert (a_awready == b_awready && a_wready == b_wready && a_bvalid == b_bvalid);
      assert (a_arready == b_arready && a_rvalid == b_rvalid);
    end
  end

endmodule
`default_nettype wire
