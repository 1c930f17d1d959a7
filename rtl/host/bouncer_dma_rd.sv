// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_dma_rd: AXI4 read master shared by N clients (round robin), with a read watchdog.
//
// A client asks for `beats` 64-bit words from an 8-byte aligned address. The command is
// split into INCR bursts that never cross a 4 KiB boundary. Data comes back in order on
// the shared rd_* outputs with rd_client naming the owner; clients cannot stall it
// (rready is always 1), so each client must accept one beat per cycle. rd_last marks the
// final beat of the command and rd_err is then set if any beat had a non-OKAY response.
// One command is in flight at a time; latency = AR handshake + memory latency + beats, plus
// one cycle from cmd_valid to cmd_ready when the master is idle (the round-robin choice is
// registered; it is made while the previous command is in flight, so back-to-back commands
// lose no cycle). The first burst's AR is presented in the cycle after cmd_ready, so
// cmd_valid -> ARVALID is 2 cycles from an idle master.
//
// Watchdog: while a command is in flight, `timeout` (cycles, 0 = off) reloads on every AR
// handshake and every R beat (a discarded late beat too: an in-order slave returns it before
// ours). When it runs out (timeout + 1 cycles with neither), the command ends at once with a single rd_valid/rd_last/rd_err beat (data
// undefined), as if the memory had answered SLVERR, and stat_timeout pulses. Bursts not yet
// requested are dropped. An AR already presented stays valid until it is accepted (AXI
// forbids withdrawing it); no new command starts before that. A change of `timeout` to or
// from 0 (off) is seen one cycle later (its zero test is a flop).
// Late data: every command's bursts carry ARID id_q, and id_q advances after each timeout;
// beats whose RID differs from id_q are discarded (rready stays 1). This relies on the AXI
// rules (the slave returns a burst with its AR's ID; bursts of one ID in order), and on a
// late burst arriving before its ID comes round again, 2^ID_W - 1 timeouts later.
// stat_rd_err pulses once per command that ended with a non-OKAY response (a registered
// pulse, one cycle after rd_last); stat_timeout one cycle after the watchdog's beat.
`default_nettype none
module bouncer_dma_rd #(
  parameter int N        = 2,
  parameter int ADDR_W   = 64,
  parameter int ID_W     = 4,
  parameter int CLIENT_W = (N > 1) ? $clog2(N) : 1
) (
  input  wire                  clk,
  input  wire                  rst,

  input  wire [N-1:0]          cmd_valid,
  output logic [N-1:0]         cmd_ready,
  input  wire [N*ADDR_W-1:0]   cmd_addr,
  input  wire [N*8-1:0]        cmd_beats,    // 1..128
  input  wire [31:0]           timeout,      // watchdog, cycles without progress; 0 = off

  output logic                 rd_valid,
  output logic [CLIENT_W-1:0]  rd_client,
  output logic [63:0]          rd_data,
  output logic                 rd_last,
  output logic                 rd_err,
  output logic                 stat_rd_err,  // pulse: a command ended with SLVERR/DECERR
  output logic                 stat_timeout, // pulse: the watchdog ended a command
  output logic                 idle,         // no command in flight or chosen, no AR pending

  output logic [ID_W-1:0]      m_axi_arid,
  output logic [ADDR_W-1:0]    m_axi_araddr,
  output logic [7:0]           m_axi_arlen,
  output logic [2:0]           m_axi_arsize,
  output logic [1:0]           m_axi_arburst,
  output logic [3:0]           m_axi_arcache,
  output logic [2:0]           m_axi_arprot,
  output logic                 m_axi_arvalid,
  input  wire                  m_axi_arready,
  input  wire [ID_W-1:0]       m_axi_rid,
  input  wire [63:0]           m_axi_rdata,
  input  wire [1:0]            m_axi_rresp,
  input  wire                  m_axi_rlast,
  input  wire                  m_axi_rvalid,
  output logic                 m_axi_rready
);

  logic                busy_q;
  logic [CLIENT_W-1:0] owner_q;
  logic [ADDR_W-1:0]   addr_q;        // next burst address
  logic [8:0]          ar_left_q;     // beats not yet requested
  logic [8:0]          r_left_q;      // beats not yet received
  logic                err_q;
  logic                arvalid_q;
  logic [7:0]          arlen_q;
  logic [ID_W-1:0]     id_q;          // ID of the current command; +1 after a timeout
  logic [ID_W-1:0]     arid_q;        // ARID of the AR being presented (stable while valid)
  logic [31:0]         wd_left_q;     // watchdog: cycles left without progress
  logic                stat_rd_err_q, stat_timeout_q;

  // Round-robin pick among requesting clients, starting after the last owner. The choice is
  // registered (sel_q) before the chosen client is answered, so cmd_ready comes from flops and
  // no client's valid reaches another client's ready (the clients' state machines were one
  // combinational path through the arbiter). A client that drops valid before it is answered
  // (a ring reset) loses the choice.
  logic                pick_valid, sel_v_q, sel_take, can_start, load;
  logic [CLIENT_W-1:0] pick, sel_q;
  assign can_start = !busy_q && !arvalid_q;
  assign sel_take  = !sel_v_q && pick_valid;
  bouncer_rr_arbiter #(.N(N), .W(CLIENT_W)) u_arb (
    .clk, .rst, .req(cmd_valid), .accept(sel_take), .grant_valid(pick_valid), .grant(pick)
  );

  always_comb begin
    cmd_ready = '0;
    for (int i = 0; i < N; i++)
      if (sel_v_q && can_start && sel_ok_q && sel_q == CLIENT_W'(i)) cmd_ready[i] = 1'b1;
  end
  // The chosen client's command is copied into registers (sel_addr_q, sel_beats_q) when it is
  // chosen and again in every cycle it waits, so the first burst's length is computed from
  // registers and not through the client's logic and the address multiplexer. A client holds
  // its command while cmd_valid is high, so the copy is its command when sel_ok_q says the
  // client was valid in the cycle before as well; a client that withdrew in between is not
  // loaded in that cycle and loses the choice.
  logic [ADDR_W-1:0] sel_addr_q;
  logic [7:0]        sel_beats_q;
  logic              sel_ok_q;
  assign load = sel_v_q && can_start && cmd_valid[sel_q] && sel_ok_q;

  // beats that fit before the next 4 KiB boundary: for the next burst of the command, and for
  // the first burst of the chosen client's command (presented as the command is loaded)
  logic [9:0]        to_boundary, first_to_boundary;
  logic [8:0]        burst_beats, first_beats, sel_beats;
  logic [ADDR_W-1:0] sel_addr;
  assign to_boundary = 10'd512 - {1'b0, addr_q[11:3]};
  assign burst_beats = ({1'b0, ar_left_q} < to_boundary) ? ar_left_q : to_boundary[8:0];
  assign sel_addr    = sel_addr_q;
  assign sel_beats   = {1'b0, sel_beats_q};
  assign first_to_boundary = 10'd512 - {1'b0, sel_addr[11:3]};
  assign first_beats = ({1'b0, sel_beats} < first_to_boundary) ? sel_beats
                                                                : first_to_boundary[8:0];

  // a beat of the current command (stale IDs are discarded), an AR handshake, the watchdog
  logic ar_fire, beat_ok, wd_fire;
  assign ar_fire = arvalid_q && m_axi_arready;
  assign beat_ok = busy_q && m_axi_rvalid && (m_axi_rid == id_q);
  // wd_zero_q is (wd_left_q == 0) and tz_q is (timeout == 0) as of the previous cycle, both
  // registered, so neither 32-bit compare is in front of the client's rd_* (the CM engine's
  // next state). A TIMEOUT write is seen one cycle later.
  logic wd_zero_q, tz_q;
  assign wd_fire = busy_q && !tz_q && wd_zero_q && !ar_fire
                && !m_axi_rvalid;

  always_ff @(posedge clk) begin
    stat_rd_err_q  <= 1'b0;
    stat_timeout_q <= 1'b0;
    tz_q           <= (timeout == 32'd0);
    if (ar_fire) begin
      arvalid_q <= 1'b0;
      addr_q    <= addr_q + {{(ADDR_W-12){1'b0}}, ({1'b0, arlen_q, 3'b000} + 12'd8)};
    end
    if (sel_take) begin
      sel_v_q <= 1'b1;
      sel_q   <= pick;
    end else if (sel_v_q && can_start) begin
      sel_v_q <= 1'b0;   // answered (load), or the client withdrew
    end
    // the command of the client being chosen (sel_take: pick) or waiting (sel_q)
    sel_ok_q <= 1'b0;
    for (int i = 0; i < N; i++) begin
      if (sel_take ? (pick == CLIENT_W'(i)) : (sel_q == CLIENT_W'(i))) begin
        sel_addr_q  <= cmd_addr[i*ADDR_W +: ADDR_W];
        sel_beats_q <= cmd_beats[i*8 +: 8];
        sel_ok_q    <= cmd_valid[i];
      end
    end
    if (!busy_q) begin
      if (load) begin
        busy_q    <= 1'b1;
        owner_q   <= sel_q;
        addr_q    <= sel_addr;
        arvalid_q <= 1'b1;             // the first burst at once
        arid_q    <= id_q;
        arlen_q   <= 8'(first_beats - 9'd1);
        ar_left_q <= sel_beats - first_beats;
        r_left_q  <= sel_beats;
        err_q     <= 1'b0;
        wd_left_q <= timeout;
        wd_zero_q <= (timeout == 32'd0);
      end
    end else if (wd_fire) begin
      // give up: the client gets its error beat now (rd_* below); late data has the old ID
      busy_q         <= 1'b0;
      ar_left_q      <= '0;
      id_q           <= id_q + 1'b1;
      stat_timeout_q <= 1'b1;
    end else begin
      // issue bursts
      if (!arvalid_q && ar_left_q != 9'd0) begin
        arvalid_q <= 1'b1;
        arid_q    <= id_q;
        arlen_q   <= 8'(burst_beats - 9'd1);
        ar_left_q <= ar_left_q - burst_beats;
      end
      // collect data
      if (beat_ok) begin
        r_left_q <= r_left_q - 9'd1;
        if (m_axi_rresp != 2'b00) err_q <= 1'b1;
        if (r_left_q == 9'd1) begin
          busy_q        <= 1'b0;
          stat_rd_err_q <= err_q || (m_axi_rresp != 2'b00);
        end
      end
      if (ar_fire || m_axi_rvalid) begin
        wd_left_q <= timeout;
        wd_zero_q <= (timeout == 32'd0);
      end else if (wd_left_q != '0) begin
        wd_left_q <= wd_left_q - 32'd1;
        wd_zero_q <= (wd_left_q == 32'd1);
      end
    end
    if (rst) begin
      busy_q         <= 1'b0;
      sel_v_q        <= 1'b0;
      sel_q          <= '0;
      sel_ok_q       <= 1'b0;
      owner_q        <= '0;
      arvalid_q      <= 1'b0;
      arlen_q        <= '0;
      addr_q         <= '0;
      ar_left_q      <= '0;
      r_left_q       <= '0;
      err_q          <= 1'b0;
      id_q           <= '0;
      arid_q         <= '0;
      wd_left_q      <= '0;
      wd_zero_q      <= 1'b1;
      stat_rd_err_q  <= 1'b0;
      stat_timeout_q <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) if (!rst) assert (wd_zero_q == (wd_left_q == 32'd0));
`endif

  assign m_axi_arid    = arid_q;
  assign m_axi_araddr  = addr_q;
  assign m_axi_arlen   = arlen_q;
  assign m_axi_arsize  = 3'd3;     // 8 bytes
  assign m_axi_arburst = 2'b01;    // INCR
  assign m_axi_arcache = 4'b0011;  // normal, non-cacheable, bufferable
  assign m_axi_arprot  = 3'b000;
  assign m_axi_arvalid = arvalid_q;
  assign m_axi_rready  = 1'b1;

  assign rd_valid  = beat_ok || wd_fire;
  assign rd_client = owner_q;
  assign rd_data   = m_axi_rdata;
  assign rd_last   = (beat_ok && (r_left_q == 9'd1)) || wd_fire;
  assign rd_err    = wd_fire || err_q || (m_axi_rresp != 2'b00);

  // a burst the watchdog gave up on may still be answered later: its ID stays stale
  assign idle = !busy_q && !arvalid_q && !sel_v_q;
  assign stat_rd_err  = stat_rd_err_q;
  assign stat_timeout = stat_timeout_q;

  logic unused;
  assign unused = ^{m_axi_rlast};

endmodule
`default_nettype wire
