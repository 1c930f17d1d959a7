// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_tx_arb: frame-atomic round-robin merge of N AXI-Stream frame sources onto one TX
// stream.
//
// Arbitration: between frames, the next input is chosen round-robin among the inputs with
// tvalid (bouncer_rr_arbiter, searching from the input after the last winner; the pointer
// moves when a frame's first beat is taken). That input then owns the output until its
// tlast beat has been taken, so beats of two frames never interleave. Under saturation the
// inputs alternate frame by frame: no input waits for more than one frame of each other
// input.
//
// Datapath: the selected input's beat goes into a skid register and the m_axis output
// register. m_axis_* are registered, and s_axis_tready is registered too (it is low only
// while the skid register is occupied, and then only the owning / selected input sees it
// high), so nothing is combinational from m_axis_tready to s_axis_tready. Between frames
// s_axis_tready of the winner depends combinationally on the s_axis_tvalid inputs (the
// round-robin choice), which AXI-Stream allows.
// Latency: a beat taken in cycle c is on m_axis in cycle c+1 (if the output was free).
// Throughput: one beat per cycle, back to back across frames and inputs: the first beat of
// the next frame is taken in the cycle after the previous frame's tlast beat, no bubble.
//
// frame_done pulses 2 cycles after the handshake of each output tlast beat
// (m_axis_tvalid && m_axis_tready && m_axis_tlast); frame_bytes is then the number of bytes
// of that frame (sum of the tkeep bits of its beats, modulo 2^16). Both are flops. The bytes
// are counted on the output side: the tkeep counts of the 16-byte groups of each beat that
// leaves are registered, then added to the running count, so neither the input selection nor
// m_axis_tready sits in front of the adder, and no full-width count sits behind tkeep.
`default_nettype none
module bouncer_tx_arb #(
  parameter int DATA_W = 64,
  parameter int N      = 2
) (
  input  wire                   clk,
  input  wire                   rst,

  input  wire  [N*DATA_W-1:0]   s_axis_tdata,
  input  wire  [N*DATA_W/8-1:0] s_axis_tkeep,
  input  wire  [N-1:0]          s_axis_tlast,
  input  wire  [N-1:0]          s_axis_tvalid,
  output logic [N-1:0]          s_axis_tready,

  output logic [DATA_W-1:0]     m_axis_tdata,
  output logic [DATA_W/8-1:0]   m_axis_tkeep,
  output logic                  m_axis_tlast,
  output logic                  m_axis_tvalid,
  input  wire                   m_axis_tready,

  output logic                  frame_done,
  output logic [15:0]           frame_bytes
);

  localparam int KW = DATA_W / 8;
  localparam int SW = (N > 1) ? $clog2(N) : 1;

  // ---------------------------------------------------------------- arbitration
  logic          busy_q, busy_d;  // a frame is in progress on input cur_q
  logic [SW-1:0] cur_q, cur_d;
  logic          gnt_v;
  logic [SW-1:0] gnt;
  logic [SW-1:0] sel;
  logic          sel_v, in_ready, fire, start;

  bouncer_rr_arbiter #(.N(N), .W(SW)) u_rr (
    .clk        (clk),
    .rst        (rst),
    .req        (s_axis_tvalid),
    .accept     (start),
    .grant_valid(gnt_v),
    .grant      (gnt)
  );

  logic              skid_v_q;
  logic [DATA_W-1:0] in_data;
  logic [KW-1:0]     in_keep;
  logic              in_last;

  assign in_ready = !skid_v_q;
  assign sel      = busy_q ? cur_q : gnt;
  always_comb begin
    sel_v = gnt_v;
    if (busy_q) begin
      sel_v = 1'b0;
      for (int i = 0; i < N; i++)
        if (cur_q == SW'(i)) sel_v = s_axis_tvalid[i];
    end
  end
  assign fire     = sel_v && in_ready;
  assign start    = fire && !busy_q;

  // The input selection is an AND-OR over a one-hot decode of sel: no index arithmetic
  // (a variable part-select becomes a shifter, with an adder for the offset).
  always_comb begin
    s_axis_tready = '0;
    in_data = '0;
    in_keep = '0;
    in_last = 1'b0;
    for (int i = 0; i < N; i++) begin
      if (sel == SW'(i)) begin
        s_axis_tready[i] = in_ready && (busy_q || gnt_v);
        in_data = in_data | s_axis_tdata[i * DATA_W +: DATA_W];
        in_keep = in_keep | s_axis_tkeep[i * KW +: KW];
        in_last = in_last | s_axis_tlast[i];
      end
    end

    busy_d = busy_q;
    cur_d  = cur_q;
    if (fire) begin
      busy_d = !in_last;
      cur_d  = sel;
    end
  end

  // ---------------------------------------------------------------- skid + output register
  logic              out_v_q;
  logic [DATA_W-1:0] out_data_q, skid_data_q;
  logic [KW-1:0]     out_keep_q, skid_keep_q;
  logic              out_last_q, skid_last_q;
  logic              out_free;

  assign out_free = !out_v_q || m_axis_tready;

  always_ff @(posedge clk) begin
    if (out_free) begin
      if (skid_v_q) begin
        out_v_q     <= 1'b1;
        out_data_q  <= skid_data_q;
        out_keep_q  <= skid_keep_q;
        out_last_q  <= skid_last_q;
        skid_v_q    <= 1'b0;
      end else begin
        out_v_q     <= fire;
        out_data_q  <= in_data;
        out_keep_q  <= in_keep;
        out_last_q  <= in_last;
      end
    end else if (fire) begin
      skid_v_q     <= 1'b1;
      skid_data_q  <= in_data;
      skid_keep_q  <= in_keep;
      skid_last_q  <= in_last;
    end
    busy_q <= busy_d;
    cur_q  <= cur_d;
    if (rst) begin
      out_v_q  <= 1'b0;
      skid_v_q <= 1'b0;
      busy_q   <= 1'b0;
      cur_q    <= '0;
    end
  end

  assign m_axis_tvalid = out_v_q;
  assign m_axis_tdata  = out_data_q;
  assign m_axis_tkeep  = out_keep_q;
  assign m_axis_tlast  = out_last_q;

  // ---------------------------------------------------------------- frame byte count
  // c: a beat leaves; c+1: the tkeep counts of its 16-byte groups are in o_grp_q; c+2:
  // frame_done, frame_bytes. The groups are added together with the running count, so no
  // full-width population count sits between two registers.
  localparam int GB = (KW < 16) ? KW : 16;            // tkeep bits per group
  localparam int NG = (KW + GB - 1) / GB;
  localparam int GW = $clog2(GB + 1);
  logic              o_fire_q, o_last_q, done_q;
  logic [NG*GW-1:0]  o_grp_q, grp_cnt;
  logic [15:0]       acc_q, bytes_q, beat_bytes;   // acc_q: bytes of the leaving frame so far

  always_comb begin
    grp_cnt = '0;
    for (int g = 0; g < NG; g++)
      for (int i = g * GB; i < (g + 1) * GB && i < KW; i++)
        grp_cnt[g*GW +: GW] = grp_cnt[g*GW +: GW] + GW'(out_keep_q[i]);
    beat_bytes = '0;
    for (int g = 0; g < NG; g++) beat_bytes = beat_bytes + 16'(o_grp_q[g*GW +: GW]);
  end

  always_ff @(posedge clk) begin
    o_fire_q <= out_v_q && m_axis_tready;
    o_last_q <= out_last_q;
    o_grp_q  <= grp_cnt;
    done_q   <= o_fire_q && o_last_q;
    bytes_q  <= acc_q + beat_bytes;
    if (o_fire_q) acc_q <= o_last_q ? 16'd0 : acc_q + beat_bytes;
    if (rst) begin
      o_fire_q <= 1'b0;
      done_q   <= 1'b0;
      acc_q    <= '0;
    end
  end

  assign frame_done  = done_q;
  assign frame_bytes = bytes_q;

endmodule
`default_nettype wire
