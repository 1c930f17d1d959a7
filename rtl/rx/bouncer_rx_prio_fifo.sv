// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_rx_prio_fifo: the RX port's store-and-forward frame buffer, in two queues so that
// segments of connections in progress overtake new SYNs when the CM engine falls behind.
//
// Every frame is classified at the port (bouncer_rx_syn_class): pure SYNs (TCP over IPv4,
// with or without one 802.1Q tag; SYN set, ACK/RST/FIN clear) wait in a small SYN queue
// (2**SYN_DEPTH_LOG2 beats), every other frame in the main queue (2**DEPTH_LOG2 beats). The
// output takes a whole frame from the main queue whenever one is waiting there at a frame
// boundary, and from the SYN queue only when the main queue has none, so the SYN queue fills
// first when the reader is slower than the port, and new SYNs are then dropped at the port
// while handshake ACKs, MPA requests and closes keep the main queue's room. SYNs of different
// connections may leave out of arrival order, and so may a SYN and a later frame of another
// connection; frames of the main queue keep their order, and so do SYNs.
//
// Write side: s_axis_tready is constant 1 (a MAC cannot be stalled). Each beat is written
// speculatively into both queues; one cycle after the frame's tlast beat, its class says which
// queue keeps it, the other gives the beats back (bouncer_rx_frame_ring). A frame that does
// not fit its queue is dropped whole: a SYN pulses syn_drop, any other frame drop_frame; a
// kept frame pulses good_frame. Every frame gives exactly one of the three pulses, two cycles
// after its tlast beat (registered).
//
// Read side: m_axis_* are registered (nothing is combinational from m_axis_tready to an
// output). Latency: when the tlast beat is on s_axis in cycle c, the frame's first beat is on
// m_axis in cycle c+3 (class and RAM read, RAM register, output register) if the output is
// idle, whichever queue it waits in. Throughput: one beat per cycle in and out.
`default_nettype none
module bouncer_rx_prio_fifo #(
  parameter int DATA_W         = 64,
  parameter int DEPTH_LOG2     = 9,   // main queue, beats
  parameter int SYN_DEPTH_LOG2 = 5    // SYN queue, beats
) (
  input  wire                 clk,
  input  wire                 rst,

  input  wire  [DATA_W-1:0]   s_axis_tdata,
  input  wire  [DATA_W/8-1:0] s_axis_tkeep,
  input  wire                 s_axis_tlast,
  input  wire                 s_axis_tvalid,
  output logic                s_axis_tready,

  output logic [DATA_W-1:0]   m_axis_tdata,
  output logic [DATA_W/8-1:0] m_axis_tkeep,
  output logic                m_axis_tlast,
  output logic                m_axis_tvalid,
  input  wire                 m_axis_tready,

  output logic                drop_frame,   // a frame other than a pure SYN did not fit
  output logic                syn_drop,     // a pure SYN did not fit the SYN queue
  output logic                good_frame    // a frame was queued
);

  // ------------------------------------------------------------------ parameter checks
  if (SYN_DEPTH_LOG2 > DEPTH_LOG2) begin : g_bad_syn_depth
    $error("bouncer_rx_prio_fifo: the SYN queue must not be larger than the main queue");
  end

  localparam int KW = DATA_W / 8;
  localparam int EW = DATA_W + KW + 1;

  assign s_axis_tready = 1'b1;

  // ------------------------------------------------------------------ classification
  logic cls_valid, cls_syn;

  bouncer_rx_syn_class #(.DATA_W(DATA_W)) u_class (
    .clk, .rst,
    .s_tdata(s_axis_tdata), .s_tkeep(s_axis_tkeep), .s_tlast(s_axis_tlast),
    .s_tvalid(s_axis_tvalid),
    .cls_valid, .cls_syn
  );

  // ------------------------------------------------------------------ the two queues
  // index 0: main queue, 1: SYN queue
  logic [1:0]    pend, lost, kept, take, rd_valid, rd_take;
  logic [EW-1:0] rd_beat [2];

  assign take = {cls_syn, !cls_syn};

  bouncer_rx_frame_ring #(.DATA_W(DATA_W), .DEPTH_LOG2(DEPTH_LOG2)) u_main (
    .clk, .rst,
    .s_tdata(s_axis_tdata), .s_tkeep(s_axis_tkeep), .s_tlast(s_axis_tlast),
    .s_tvalid(s_axis_tvalid),
    .pend(pend[0]), .pend_lost(lost[0]), .take(take[0]), .kept(kept[0]),
    .rd_valid(rd_valid[0]), .rd_beat(rd_beat[0]), .rd_take(rd_take[0])
  );

  bouncer_rx_frame_ring #(.DATA_W(DATA_W), .DEPTH_LOG2(SYN_DEPTH_LOG2)) u_syn (
    .clk, .rst,
    .s_tdata(s_axis_tdata), .s_tkeep(s_axis_tkeep), .s_tlast(s_axis_tlast),
    .s_tvalid(s_axis_tvalid),
    .pend(pend[1]), .pend_lost(lost[1]), .take(take[1]), .kept(kept[1]),
    .rd_valid(rd_valid[1]), .rd_beat(rd_beat[1]), .rd_take(rd_take[1])
  );

  // frame accounting, registered
  logic drop_q, syn_drop_q, good_q;

  always_ff @(posedge clk) begin
    drop_q     <= pend[0] && !cls_syn && lost[0];
    syn_drop_q <= pend[1] && cls_syn && lost[1];
    good_q     <= |kept;
    if (rst) begin
      drop_q     <= 1'b0;
      syn_drop_q <= 1'b0;
      good_q     <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ output
  // At a frame boundary the main queue's beat goes first; within a frame the source stays.
  logic          out_v_q, out_last_q, mid_q, src_q, src, out_load, move;
  logic [DATA_W-1:0] out_data_q;
  logic [KW-1:0] out_keep_q;
  logic [EW-1:0] beat;

  assign out_load = !out_v_q || m_axis_tready;
  assign src      = mid_q ? src_q : !rd_valid[0];
  assign beat     = rd_beat[src];
  assign move     = rd_valid[src] && out_load;
  assign rd_take  = {move && src, move && !src};

  always_ff @(posedge clk) begin
    if (out_load) begin
      out_v_q    <= rd_valid[src];
      out_data_q <= beat[DATA_W-1:0];
      out_keep_q <= beat[DATA_W +: KW];
      out_last_q <= beat[EW-1];
    end
    if (move) begin
      mid_q <= !beat[EW-1];
      src_q <= src;
    end
    if (rst) begin
      out_v_q <= 1'b0;
      mid_q   <= 1'b0;
      src_q   <= 1'b0;
    end
  end

  assign m_axis_tvalid = out_v_q;
  assign m_axis_tdata  = out_data_q;
  assign m_axis_tkeep  = out_keep_q;
  assign m_axis_tlast  = out_last_q;
  assign drop_frame    = drop_q;
  assign syn_drop      = syn_drop_q;
  assign good_frame    = good_q;

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      // both queues see every frame end, together with its class
      assert (pend[0] == pend[1]);
      assert (pend[0] == cls_valid);
      // a frame is kept by at most one queue
      assert (!(kept[0] && kept[1]));
      // exactly one accounting pulse per frame
      assert (32'(drop_q) + 32'(syn_drop_q) + 32'(good_q) <= 1);
    end
  end
`endif

endmodule
`default_nettype wire
