// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_dma_wr: AXI4 write master shared by N clients (round robin), with posted writes.
//
// A client hands over a whole small write at once: an address aligned to its size
// (32 or 64 bytes, so one burst never crosses 4 KiB), 1..8 beats, and the payload
// (beat i in cmd_data[64*i +: 64]). The master sends one INCR burst per command.
// - POSTED clients (bit set in POSTED_MASK) get done[client] as soon as their last W beat
//   is accepted: the write is ordered behind every earlier write (one AXI ID, so B and the
//   memory commit come back in order), and the host sees it before anything written later.
//   A bad BRESP for a posted write sets the sticky `posted_err`.
// - Other clients get done[client] with err = (BRESP != OKAY) when their B arrives.
// Up to MAX_OUT bursts may wait for B. Latency: one cycle from cmd_valid to cmd_ready when
// the master is idle (the round-robin choice is registered; none while a burst is issued),
// then AW + beats for posted clients, plus one memory latency for the others. stat_err
// pulses (one cycle after the B) for every burst answered with SLVERR/DECERR, posted or not.
// A B that never comes is not timed out: the burst keeps its slot, and after MAX_OUT of them
// the master accepts no more commands (AXI gives no way to retire a write without its B).
`default_nettype none
module bouncer_dma_wr #(
  parameter int          N           = 3,
  parameter int          ADDR_W      = 64,
  parameter int          ID_W        = 4,
  parameter int          CLIENT_W    = (N > 1) ? $clog2(N) : 1,
  parameter logic [N-1:0] POSTED_MASK = '0,
  parameter int          MAX_OUT     = 8            // a power of two
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
  output logic                 posted_err,
  output logic                 stat_err,     // pulse: a burst got a bad BRESP
  output logic                 idle,         // nothing chosen, being issued or awaiting B

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

  localparam int OUT_W = $clog2(MAX_OUT);

  logic                busy_q, awvalid_q, wvalid_q;
  logic [CLIENT_W-1:0] owner_q;
  logic [ADDR_W-1:0]   addr_q;
  logic [3:0]          beats_q, sent_q;
  logic [511:0]        data_q;

  // bursts waiting for B, in issue order: which client, and whether it waits for B
  logic [CLIENT_W-1:0] bq_client [MAX_OUT];
  logic [MAX_OUT-1:0]  bq_wait;
  logic [OUT_W-1:0]    bq_wr_q, bq_rd_q;
  logic [OUT_W:0]      bq_count_q;
  logic                bq_full;
  assign bq_full = (bq_count_q == (OUT_W+1)'(MAX_OUT));

  // The round-robin choice is registered (sel_q) before the chosen client is answered, so
  // cmd_ready comes from flops and no client's valid reaches another client's ready. The
  // choice is made while a burst is still being issued, so back-to-back commands lose no
  // cycle; an idle master answers one cycle after a valid rises. A client that drops valid
  // before it is answered (a ring reset) loses the choice.
  logic                pick_valid, sel_v_q, sel_take, load;
  logic [CLIENT_W-1:0] pick, sel_q;
  assign sel_take = !sel_v_q && pick_valid;
  bouncer_rr_arbiter #(.N(N), .W(CLIENT_W)) u_arb (
    .clk, .rst, .req(cmd_valid), .accept(sel_take), .grant_valid(pick_valid), .grant(pick)
  );

  always_comb begin
    cmd_ready = '0;
    for (int i = 0; i < N; i++)
      if (sel_v_q && !busy_q && !bq_full && sel_q == CLIENT_W'(i)) cmd_ready[i] = 1'b1;
  end
  assign load = sel_v_q && !busy_q && !bq_full && cmd_valid[sel_q];

  logic wlast, w_fire, b_fire, aw_done, w_done, issue_done;
  assign wlast      = (sent_q + 4'd1 == beats_q);
  assign w_fire     = wvalid_q && m_axi_wready;
  assign b_fire     = m_axi_bvalid && m_axi_bready;
  // the burst is fully handed over: AW accepted (now or before) and the last W beat too
  assign aw_done    = !awvalid_q || m_axi_awready;
  assign w_done     = !wvalid_q || (w_fire && wlast);
  assign issue_done = busy_q && aw_done && w_done;

  always_ff @(posedge clk) begin
    done     <= '0;
    stat_err <= b_fire && (m_axi_bresp != 2'b00);
    if (sel_take) begin
      sel_v_q <= 1'b1;
      sel_q   <= pick;
    end else if (sel_v_q && !busy_q && !bq_full) begin
      sel_v_q <= 1'b0;   // answered (load), or the client withdrew
    end
    if (!busy_q) begin
      if (load) begin
        busy_q    <= 1'b1;
        awvalid_q <= 1'b1;
        wvalid_q  <= 1'b1;
        owner_q   <= sel_q;
        addr_q    <= cmd_addr[sel_q*ADDR_W +: ADDR_W];
        beats_q   <= cmd_beats[sel_q*4 +: 4];
        data_q    <= cmd_data[sel_q*512 +: 512];
        sent_q    <= '0;
      end
    end else begin
      if (awvalid_q && m_axi_awready) awvalid_q <= 1'b0;
      if (w_fire) begin
        data_q <= {64'd0, data_q[511:64]};
        sent_q <= sent_q + 4'd1;
        if (wlast) wvalid_q <= 1'b0;
      end
      if (issue_done) begin
        busy_q             <= 1'b0;
        bq_client[bq_wr_q] <= owner_q;
        for (int i = 0; i < MAX_OUT; i++)
          if (bq_wr_q == OUT_W'(i)) bq_wait[i] <= !POSTED_MASK[owner_q];
        bq_wr_q            <= bq_wr_q + 1'b1;
        for (int i = 0; i < N; i++)
          if (POSTED_MASK[i] && owner_q == CLIENT_W'(i)) done[i] <= 1'b1;
      end
    end
    if (b_fire) begin
      bq_rd_q <= bq_rd_q + 1'b1;
      if (bq_wait[bq_rd_q]) begin
        for (int i = 0; i < N; i++)
          if (bq_client[bq_rd_q] == CLIENT_W'(i)) done[i] <= 1'b1;
        err                      <= (m_axi_bresp != 2'b00);
      end else if (m_axi_bresp != 2'b00) begin
        posted_err <= 1'b1;
      end
    end
    bq_count_q <= bq_count_q + (OUT_W+1)'(issue_done) - (OUT_W+1)'(b_fire);
    if (rst) begin
      busy_q     <= 1'b0;
      sel_v_q    <= 1'b0;
      sel_q      <= '0;
      awvalid_q  <= 1'b0;
      wvalid_q   <= 1'b0;
      owner_q    <= '0;
      addr_q     <= '0;
      beats_q    <= '0;
      sent_q     <= '0;
      data_q     <= '0;
      done       <= '0;
      stat_err   <= 1'b0;
      err        <= 1'b0;
      posted_err <= 1'b0;
      bq_wr_q    <= '0;
      bq_rd_q    <= '0;
      bq_count_q <= '0;
      bq_wait    <= '0;
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
  assign m_axi_bready  = (bq_count_q != '0);
  assign idle          = !busy_q && !sel_v_q && (bq_count_q == '0);

endmodule
`default_nettype wire
