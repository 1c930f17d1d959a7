// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_cm_timer: one deadline timer per cm_id, swept by a scanner.
//
// Time base: `now` counts ticks; it advances by one every max(tick_cycles, 1) core cycles
// and wraps at 2^32 (starts at NOW_INIT after reset, a test hook). A deadline has passed
// when signed'(now - deadline) >= 0, so deadlines up to 2^31 - 1 ticks ahead work across
// the wrap. `now_inc` says that `now` advances at the next clock edge (now + now_inc is the
// next value), so a consumer can register now + x + now_inc and have exactly now + x in
// every cycle.
//
// State: entry per id {on, deadline[31:0]} in one simple dual-port RAM of 2**ID_W x 33
// (BRAM/URAM after synthesis): the write port takes `set_*` (arm with set_deadline when
// set_on, else disarm; one per cycle, always accepted), the read port serves the scanner.
// Reset sweep: every entry is written off, one per cycle (2**ID_W cycles), then init_done
// rises. Sets before init_done are ignored.
//
// Scanner: walks ids 0, 1, .., 2**ID_W - 1, 0, .. one per cycle. Pipeline:
//   R   (cycle c)   RAM read of the scan address
//   P1  (c+1)       RAM output register
//   P2  (c+2)       compare on && signed'(now - deadline) >= 0; push the id into the FIFO
// The output FIFO (2**FIFO_LOG2 ids, flops) feeds m_exp_*; the id read at cycle c is
// offered on m_exp_* from cycle c+3 when the FIFO was empty. A scan read is only issued
// when the FIFO has room for it and for the reads already in flight (credit), so the scan
// stalls instead of skipping an id while m_exp_ready is held low.
// Hazard: a set to an id whose read is in flight (a set in cycle c, c+1 or c+2) discards
// that read's result: an id is only pushed if no set touched it after its RAM read, i.e. it
// is armed and expired as of the push. Ids already in the FIFO are not revisited (the
// consumer re-checks the context); an id that stays expired is pushed again on every sweep.
//
// Resolution: one sweep = 2**ID_W cycles (plus stall cycles while the FIFO is full), so an
// armed id is offered at most 2**ID_W + 3 cycles (+ stalls) after its deadline passed.
// Throughput: one id per cycle scanned, one expiry per cycle offered.
`default_nettype none
module bouncer_cm_timer #(
  parameter int          ID_W      = 10,
  parameter int          FIFO_LOG2 = 4,
  parameter logic [31:0] NOW_INIT  = 32'd0
) (
  input  wire             clk,
  input  wire             rst,
  input  wire [31:0]      tick_cycles,
  output logic [31:0]     now,
  output logic            now_inc,        // `now` advances by one at the next clock edge
  output logic            init_done,

  input  wire             set_valid,
  input  wire [ID_W-1:0]  set_id,
  input  wire             set_on,
  input  wire [31:0]      set_deadline,

  output logic            m_exp_valid,
  input  wire             m_exp_ready,
  output logic [ID_W-1:0] m_exp_id
);

  localparam int EW    = 33;  // {on, deadline}
  localparam int DEPTH = 1 << FIFO_LOG2;

  // ---------------------------------------------------------------- time base
  // pre_q counts the cycles since `now` last advanced. inc_q says that `now` advances at the
  // next edge; it is decided a cycle ahead (pre_q + 2 >= tick_cycles, against registered
  // copies of tick_cycles), so a consumer can register now + x + now_inc and hold exactly
  // now + x in every cycle (bouncer_cm_engine's deadlines) without the prescaler compare in
  // front of its add. A tick_cycles change takes effect two cycles later.
  logic [31:0] pre_q, pre_d;
  logic [31:0] now_q, now_d;
  logic        inc_q, inc_d;
  logic [31:0] tcm2_q;   // tick_cycles - 2 (don't care when tcle2_q)
  logic        tcle2_q;  // tick_cycles <= 2: `now` advances at least every other cycle

  always_comb begin
    if (inc_q) begin
      pre_d = '0;
      inc_d = (tick_cycles <= 32'd1);           // 0 acts as 1
    end else begin
      pre_d = pre_q + 32'd1;
      inc_d = tcle2_q || (pre_q >= tcm2_q);     // pre_d + 1 >= tick_cycles
    end
    now_d = now_q + {31'd0, inc_q};
    if (rst) begin
      pre_d = '0;
      inc_d = (tick_cycles <= 32'd1);
      now_d = NOW_INIT;
    end
  end

  always_ff @(posedge clk) begin
    pre_q   <= pre_d;
    now_q   <= now_d;
    inc_q   <= inc_d;
    tcm2_q  <= tick_cycles - 32'd2;
    tcle2_q <= (tick_cycles <= 32'd2);
  end

  assign now     = now_q;
  assign now_inc = inc_q;

  // ---------------------------------------------------------------- reset sweep
  logic          init_q;
  logic [ID_W:0] init_addr_q;

  always_ff @(posedge clk) begin
    if (!init_q) begin
      init_addr_q <= init_addr_q + 1'b1;
      if (init_addr_q == (ID_W + 1)'((1 << ID_W) - 1)) init_q <= 1'b1;
    end
    if (rst) begin
      init_q      <= 1'b0;
      init_addr_q <= '0;
    end
  end

  assign init_done = init_q;

  // ---------------------------------------------------------------- RAM
  logic [EW-1:0]   mem [1 << ID_W];
  logic            ram_we;
  logic [ID_W-1:0] ram_waddr;
  logic [EW-1:0]   ram_wdata;
  logic [ID_W-1:0] scan_q;
  logic [EW-1:0]   rd1_q, rd2_q;

  assign ram_we    = !init_q || set_valid;
  assign ram_waddr = init_q ? set_id : init_addr_q[ID_W-1:0];
  assign ram_wdata = init_q ? {set_on, set_deadline} : {EW{1'b0}};

  always_ff @(posedge clk) begin
    if (ram_we) mem[ram_waddr] <= ram_wdata;
    rd1_q <= mem[scan_q];
  end

  // output register stage (kept outside the RAM block so it maps to the BRAM output reg)
  always_ff @(posedge clk) rd2_q <= rd1_q;

  // ---------------------------------------------------------------- scanner pipeline
  logic [FIFO_LOG2:0] cnt_q, cnt_d;
  logic               v1_q, v2_q;
  logic [ID_W-1:0]    id1_q, id2_q;
  logic               k1_q, k2_q;      // a set hit the id after its read was issued
  logic               scan_go;
  /* verilator lint_off UNUSEDSIGNAL */  // only the sign of now - deadline matters
  logic [31:0]        diff;
  /* verilator lint_on UNUSEDSIGNAL */
  logic               push, pop;

  // credit: the FIFO must hold everything in flight plus this read
  assign scan_go = init_q && ({1'b0, cnt_q} + {{FIFO_LOG2{1'b0}}, v1_q} + {{FIFO_LOG2{1'b0}}, v2_q}
                              < (FIFO_LOG2 + 2)'(DEPTH));

  assign diff = now_q - rd2_q[31:0];
  assign push = v2_q && rd2_q[32] && !diff[31] && !k2_q && !(set_valid && set_id == id2_q);

  always_ff @(posedge clk) begin
    if (scan_go) scan_q <= scan_q + 1'b1;
    v1_q  <= scan_go;
    id1_q <= scan_q;
    k1_q  <= set_valid && set_id == scan_q;
    v2_q  <= v1_q;
    id2_q <= id1_q;
    k2_q  <= k1_q || (set_valid && set_id == id1_q);
    if (rst) begin
      scan_q <= '0;
      v1_q   <= 1'b0;
      v2_q   <= 1'b0;
    end
  end

  // ---------------------------------------------------------------- expiry FIFO
  logic [ID_W-1:0]      fifo [DEPTH];
  logic [FIFO_LOG2-1:0] wp_q, rp_q;

  assign pop = m_exp_valid && m_exp_ready;

  always_comb begin
    cnt_d = cnt_q;
    if (push && !pop) cnt_d = cnt_q + 1'b1;
    else if (!push && pop) cnt_d = cnt_q - 1'b1;
  end

  always_ff @(posedge clk) begin
    if (push) fifo[wp_q] <= id2_q;
    if (push) wp_q <= wp_q + 1'b1;
    if (pop) rp_q <= rp_q + 1'b1;
    cnt_q <= cnt_d;
    if (rst) begin
      wp_q  <= '0;
      rp_q  <= '0;
      cnt_q <= '0;
    end
  end

  assign m_exp_valid = cnt_q != '0;
  assign m_exp_id    = fifo[rp_q];

endmodule
`default_nettype wire
