// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_axis_frame_fifo: store-and-forward AXI-Stream frame FIFO for the RX path; drops
// whole frames instead of back-pressuring the MAC.
//
// Write side: s_axis_tready is constant 1. Every beat is written speculatively at the write
// pointer; the frame is committed (becomes visible on m_axis) when its tlast beat is
// written, and good_frame pulses. If a beat finds the FIFO full (2**DEPTH_LOG2 beats
// stored, committed or not), the write pointer rolls back to the start of the frame, the
// rest of the frame up to and including its tlast beat is discarded, and drop_frame pulses
// once. A frame of more than 2**DEPTH_LOG2 beats is therefore always dropped; a frame of
// exactly 2**DEPTH_LOG2 beats fits when the FIFO is empty. Every frame gives exactly one
// good_frame or one drop_frame pulse; both are registered (one cycle after the beat that
// decided).
//
// Read side: data in one simple dual-port RAM of 2**DEPTH_LOG2 x (DATA_W + DATA_W/8 + 1)
// (BRAM after synthesis), read into the RAM output register, then the m_axis output
// register (m_axis_* are registered; nothing is combinational from m_axis_tready to an
// output). Only committed beats are read, so no frame is ever partially emitted.
// Latency: when the tlast beat is on s_axis in cycle c, the frame's first beat is on m_axis
// in cycle c+3 (commit edge, RAM read edge, output register edge) if the output is idle.
// Throughput: one beat per cycle in and out.
`default_nettype none
module bouncer_axis_frame_fifo #(
  parameter int DATA_W     = 64,
  parameter int DEPTH_LOG2 = 9   // beats
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

  output logic                drop_frame,
  output logic                good_frame
);

  localparam int KW = DATA_W / 8;
  localparam int AW = DEPTH_LOG2;
  localparam int EW = DATA_W + KW + 1;  // {tlast, tkeep, tdata}

  assign s_axis_tready = 1'b1;

  // ---------------------------------------------------------------- write side
  logic [AW:0] wr_q, wr_d;        // speculative write pointer
  logic [AW:0] commit_q, commit_d;  // end of the last committed frame
  logic [AW:0] rd_q;              // next beat to read from the RAM
  logic        dropping_q, dropping_d;
  logic        full, wr_en;
  logic        drop_d, good_d, drop_q, good_q;

  assign full = (wr_q - rd_q) == (AW + 1)'(1 << AW);

  always_comb begin
    wr_d       = wr_q;
    commit_d   = commit_q;
    dropping_d = dropping_q;
    drop_d     = 1'b0;
    good_d     = 1'b0;
    wr_en      = 1'b0;
    if (s_axis_tvalid) begin
      if (dropping_q) begin
        if (s_axis_tlast) dropping_d = 1'b0;
      end else if (full) begin
        wr_d       = commit_q;
        drop_d     = 1'b1;
        dropping_d = !s_axis_tlast;
      end else begin
        wr_en = 1'b1;
        wr_d  = wr_q + 1'b1;
        if (s_axis_tlast) begin
          commit_d = wr_q + 1'b1;
          good_d   = 1'b1;
        end
      end
    end
  end

  // ---------------------------------------------------------------- RAM
  logic [EW-1:0] mem [1 << AW];
  logic [EW-1:0] ram_q;    // RAM read register
  logic          ram_v_q;  // ram_q holds a beat not yet moved to the output register
  logic          ram_re;
  logic          out_load, move;

  always_ff @(posedge clk) begin
    if (wr_en) mem[wr_q[AW-1:0]] <= {s_axis_tlast, s_axis_tkeep, s_axis_tdata};
    if (ram_re) ram_q <= mem[rd_q[AW-1:0]];
  end

  // ---------------------------------------------------------------- read side
  logic              out_v_q;
  logic [DATA_W-1:0] out_data_q;
  logic [KW-1:0]     out_keep_q;
  logic              out_last_q;

  assign out_load = !out_v_q || m_axis_tready;   // the output register can take a beat
  assign move     = ram_v_q && out_load;
  assign ram_re   = (rd_q != commit_q) && (!ram_v_q || move);

  always_ff @(posedge clk) begin
    if (out_load) begin
      out_v_q    <= ram_v_q;
      out_data_q <= ram_q[DATA_W-1:0];
      out_keep_q <= ram_q[DATA_W +: KW];
      out_last_q <= ram_q[EW-1];
    end
    if (ram_re) ram_v_q <= 1'b1;
    else if (move) ram_v_q <= 1'b0;
    if (ram_re) rd_q <= rd_q + 1'b1;

    wr_q       <= wr_d;
    commit_q   <= commit_d;
    dropping_q <= dropping_d;
    drop_q     <= drop_d;
    good_q     <= good_d;

    if (rst) begin
      out_v_q    <= 1'b0;
      ram_v_q    <= 1'b0;
      rd_q       <= '0;
      wr_q       <= '0;
      commit_q   <= '0;
      dropping_q <= 1'b0;
      drop_q     <= 1'b0;
      good_q     <= 1'b0;
    end
  end

  assign m_axis_tvalid = out_v_q;
  assign m_axis_tdata  = out_data_q;
  assign m_axis_tkeep  = out_keep_q;
  assign m_axis_tlast  = out_last_q;
  assign drop_frame    = drop_q;
  assign good_frame    = good_q;

endmodule
`default_nettype wire
