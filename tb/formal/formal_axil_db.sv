// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_axil_db: bounded model check harness for the doorbell checks of the AXI4-Lite slave
// rtl/host/bouncer_axil_regs (ADDR_W 16, NUM_SQ 2, every status and statistics input free; one
// copy: formal_axil_regs does the two-copy check of the channel protocol with NUM_SQ 4).
// Environment (assumed): the master obeys AXI4-Lite: awvalid, wvalid and arvalid are held
// until their ready with stable address / data / strobes; bready and rready are free.
// Asserts: bvalid held until bready with stable bresp; rvalid held until rready with stable
// rdata and rresp; bvalid and rvalid low after reset; AW and W are taken in the same cycle;
// one response per request: exactly one B per write and one R per read, in order, never a
// response without a request (bvalid = a write taken and not yet answered, same for reads);
// Doorbells (ring pointers), with the SQ consumer indexes modelled as an SQ engine
// (assumed): sq_ci is 0 after a reset and in the second cycle of a SIZE write's sq_reset
// (the cycle after the pulse), and otherwise stays or steps by one mod size, and only while
// PI != CI. Shadow per SQ: PI, the queue-error cause and the pending count (WQEs posted by
// accepted doorbells minus the CI steps). Asserts per SQ: the PI the engine sees is that
// shadow PI and < ring size; (PI - CI) mod size equals the pending count, which stays below
// the ring size; a doorbell is accepted exactly when the SQ has no queue error, its index is
// < size (else DB_RANGE), the pending count plus the WQEs it posts stays < size (else
// DB_LAP), and the ring and CQ bases are aligned (else RING_ALIGN / CQ_ALIGN); an accepted
// doorbell sets PI and gives one sq_db pulse naming the SQ and index; any other doorbell
// changes no PI, gives no pulse and latches the cause (only the first one) until the SQ's
// SIZE write; a QERR read returns the shadow causes. CTRL.RESET's state reset (soft_rst, free)
// acts on the shadow as a reset does: PIs 0, no cause, nothing pending, the doorbell of that
// cycle void; the SQ engine is reset with it (CI 0 in the next cycle).
`default_nettype none
module formal_axil_db (
  input wire         clk,
  input wire         rst,
  input wire         soft_rst,
  input wire [15:0]  awaddr,
  input wire         awvalid,
  input wire [31:0]  wdata,
  input wire [3:0]   wstrb,
  input wire         wvalid,
  input wire         bready,
  input wire [15:0]  araddr,
  input wire         arvalid,
  input wire         rready,
  input wire [1:0]   push_take,
  input wire [29:0]  sq_ci,          // the SQ engine's CI (assumed to behave like it)
  input wire [14:0]  cq_tail,
  input wire [14:0]  cqp_ci,
  input wire [14:0]  ccq_tail,
  input wire [8:0]   status,
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
  wire [1:0]  a_bresp, a_rresp;
  wire [31:0] a_rdata;

  // of the configuration outputs only the SQ ring ones are observed (the unit tests cover
  // the others)
  wire [127:0] sq_base;
  wire [7:0]   sq_size_log2;
  wire [1:0]   sq_reset;
  wire [29:0]  sq_pi;
  wire         sq_db;
  wire [1:0]   sq_db_sq;
  wire [14:0]  sq_db_pi;
  wire [63:0]  cq_base;
  bouncer_axil_regs #(.ADDR_W(16), .NUM_SQ(2)) dut_a (
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
    .aeq_tail(aeq_tail), .cm_conns(cm_conns), .stat_cm(stat_cm),
    .sq_base(sq_base), .sq_size_log2(sq_size_log2), .sq_reset(sq_reset), .sq_pi(sq_pi),
    .sq_db(sq_db), .sq_db_sq(sq_db_sq), .sq_db_pi(sq_db_pi), .cq_base(cq_base)
  );
  formal_axil_check #(.ADDR_W(16)) chk_axil (
    .clk(clk), .rst(rst), .init(init_q),
    .awaddr(awaddr), .awvalid(awvalid), .awready(a_awready),
    .wdata(wdata), .wstrb(wstrb), .wvalid(wvalid), .wready(a_wready),
    .bresp(a_bresp), .bvalid(a_bvalid), .bready(bready),
    .araddr(araddr), .arvalid(arvalid), .arready(a_arready),
    .rdata(a_rdata), .rresp(a_rresp), .rvalid(a_rvalid), .rready(rready));
  wire aw_fire = awvalid && a_awready;
  wire ar_fire = arvalid && a_arready;

  // ---------------------------------------------------------------- doorbells and ring pointers
  reg        rst_q, srst_q;
  reg [1:0]  sq_reset_q;
  reg [29:0] ci_q, pi_q;
  reg [7:0]  size_q;
  reg [29:0] sh_pi;
  reg [7:0]  sh_qerr;        // cause per SQ, 4 bits each
  reg [31:0] post_q, cons_q; // per SQ, 16 bits each: WQEs posted / consumed since the reset
  reg [7:0]  exp_qerr_q;     // QERR as of the last AR
  reg        qerr_rd_q;      // the last AR read QERR
  reg        exp_db_q;       // an sq_db pulse is due this cycle ...
  reg [1:0]  exp_db_sq_q;    // ... for this SQ
  reg [14:0] exp_db_pi_q;    // ... with this index

  wire [15:0] wr_a    = {awaddr[15:2], 2'b00};
  wire        db_wr   = aw_fire && (wr_a == bouncer_regs_pkg::REG_SQ_DB
                                 || wr_a == bouncer_regs_pkg::REG_SQ_PUSH_DB);
  wire [14:0] db_idx  = wdata[14:0];
  wire        ring_ok = ~|cq_base[4:0];

  wire [1:0]  step;          // CI stepped into this cycle
  wire [31:0] pend;          // pending count per SQ (16 bits each)
  wire [1:0]  db_hit, accept, size_wr;
  wire [7:0]  cause;
  wire [29:0] nxt_pi;
  wire [31:0] nxt_post;
  wire [7:0]  nxt_qerr;
  wire [29:0] mask_v;
  for (genvar n = 0; n < 2; n++) begin : g_sq
    wire [14:0] m  = 15'((32'd1 << sq_size_log2[4*n +: 4]) - 32'd1);
    wire [14:0] mq = 15'((32'd1 << size_q[4*n +: 4]) - 32'd1);
    wire [14:0] ci = sq_ci[15*n +: 15];
    wire [14:0] cq = ci_q[15*n +: 15];
    wire [14:0] pq = pi_q[15*n +: 15];
    wire [14:0] sp = sh_pi[15*n +: 15];
    wire [3:0]  qe = sh_qerr[4*n +: 4];
    // environment: the SQ engine's consumer index
    always @* begin
      if (!init_q && !rst) begin
        if (rst_q || srst_q || sq_reset_q[n]) assume (ci == 15'd0);
        else assume (ci == cq || (ci == ((cq + 15'd1) & mq) && ((pq - cq) & mq) != 15'd0));
      end
    end
    assign mask_v[15*n +: 15] = m;
    assign step[n] = !init_q && !rst_q && !srst_q && !sq_reset[n] && !sq_reset_q[n] && ci != cq;
    wire [15:0] pd = post_q[16*n +: 16] - cons_q[16*n +: 16] - {15'd0, step[n]};
    assign pend[16*n +: 16] = pd;
    // the doorbell check, from the spec: range, then lap (pending + posted must stay < size)
    assign db_hit[n]  = db_wr && wdata[23:16] == 8'(n);
    assign size_wr[n] = aw_fire && wr_a == bouncer_regs_pkg::REG_SQ_SIZE + 16'(32 * n);
    wire [14:0] posted = (db_idx - sp) & m;
    assign cause[4*n +: 4] =
        ((db_idx & ~m) != 15'd0)                       ? bouncer_regs_pkg::QERR_CAUSE_DB_RANGE :
        ({1'b0, pd} + {2'd0, posted} > {2'd0, m})     ? bouncer_regs_pkg::QERR_CAUSE_DB_LAP :
        (sq_base[64*n +: 6] != 6'd0)                   ? bouncer_regs_pkg::QERR_CAUSE_RING_ALIGN :
        !ring_ok                                       ? bouncer_regs_pkg::QERR_CAUSE_CQ_ALIGN :
                                                         bouncer_regs_pkg::QERR_CAUSE_NONE;
    wire open_ok = qe == bouncer_regs_pkg::QERR_CAUSE_NONE;
    assign accept[n] = db_hit[n] && open_ok && cause[4*n +: 4] == bouncer_regs_pkg::QERR_CAUSE_NONE;
    assign nxt_pi[15*n +: 15]   = size_wr[n] ? 15'd0 : accept[n] ? db_idx : sp;
    assign nxt_post[16*n +: 16] = size_wr[n] ? 16'd0
                                : post_q[16*n +: 16] + (accept[n] ? {1'b0, posted} : 16'd0);
    assign nxt_qerr[4*n +: 4]   = size_wr[n] ? bouncer_regs_pkg::QERR_CAUSE_NONE
                                : (db_hit[n] && open_ok) ? cause[4*n +: 4] : qe;
  end

  always @(posedge clk) begin
    rst_q       <= rst;
    srst_q      <= soft_rst;
    sq_reset_q  <= sq_reset;
    ci_q        <= sq_ci;
    pi_q        <= sq_pi;
    size_q      <= sq_size_log2;
    sh_pi       <= nxt_pi;
    post_q      <= nxt_post;
    sh_qerr     <= nxt_qerr;
    exp_db_q    <= |accept;
    exp_db_sq_q <= wdata[17:16];
    exp_db_pi_q <= db_idx;
    for (int n = 0; n < 2; n++) begin
      cons_q[16*n +: 16] <= cons_q[16*n +: 16] + {15'd0, step[n]};
      if (size_wr[n]) cons_q[16*n +: 16] <= 16'd0;
    end
    if (ar_fire) begin
      qerr_rd_q  <= {araddr[15:2], 2'b00} == bouncer_regs_pkg::REG_QERR;
      exp_qerr_q <= sh_qerr;
    end
    if (rst || soft_rst) begin
      sh_pi     <= 30'd0;
      post_q    <= 32'd0;
      cons_q    <= 32'd0;
      sh_qerr   <= 8'd0;
      exp_db_q  <= 1'b0;
      if (rst) qerr_rd_q <= 1'b0;
    end
  end

  always @(posedge clk) begin
    if (!init_q && !rst) begin
      assert (sq_pi == sh_pi);
      assert (sq_db == exp_db_q);
      if (sq_db) assert (sq_db_sq == exp_db_sq_q && sq_db_pi == exp_db_pi_q);
      if (a_rvalid && qerr_rd_q) assert (a_rdata[7:0] == exp_qerr_q);
      for (int n = 0; n < 2; n++) begin
        if (!rst_q && !srst_q) begin
          assert ((sq_pi[15*n +: 15] & ~mask_v[15*n +: 15]) == 15'd0);
          if (!sq_reset[n]) begin
            assert (pend[16*n +: 16] <= {1'b0, mask_v[15*n +: 15]});
            assert (((sq_pi[15*n +: 15] - sq_ci[15*n +: 15]) & mask_v[15*n +: 15])
                    == pend[16*n +: 15]);
          end
        end
      end
    end
  end

endmodule
`default_nettype wire
