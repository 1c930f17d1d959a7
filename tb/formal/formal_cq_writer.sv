// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_cq_writer: bounded model check harness for rtl/host/bouncer_cq_writer (ADDR_W 32),
// the producer of a completion ring (CQ, CCQ and AEQ use it).
// Environment (assumed): the ring size is a constant 4..32768 entries (symbolic), the base a
// symbolic constant; s_cqe is held with stable data until s_cqe_ready; the DMA engine raises
// dma_done only for a write it has accepted and not yet completed; the host's head index is
// 0 at reset and at a ring reset, and advances by at most the number of entries written and
// not yet consumed (it never consumes past the tail); a ring reset (SIZE write) comes only
// while no CQE write is in flight in the DMA engine.
// Asserts: dma_valid held until dma_ready and addr/beats/data stable (except across reset or
// ring reset); one CQE per descriptor: no new write while one is in flight, s_cqe_ready only
// for an issued write and only while s_cqe_valid (each accepted CQE is written exactly once);
// no overrun: a write is issued only with room for it (at most size - 1 unconsumed entries);
// ring pointer: tail = completions mod size, the write address is base + 32 tail; polarity:
// the VALID bit written is 1 on lap 0 and flips on every wrap; a second copy from another
// initial state agrees on dma_valid, s_cqe_ready, full and tail.
// Covers: a CQE waiting while the ring is full (the overrun the writer must refuse); a write
// after a wrap (polarity 0); a CQE written after the host freed room in a full ring.
`default_nettype none
module formal_cq_writer (
  input wire         clk,
  input wire         rst,
  input wire         ring_reset,
  input wire [14:0]  head,
  input wire         s_cqe_valid,
  input wire [255:0] s_cqe,
  input wire         dma_ready,
  input wire         dma_done
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  (* anyconst *) reg [3:0]  size_log2;
  (* anyconst *) reg [31:0] base;
  always @* assume (size_log2 >= 4'd2 && size_log2 <= 4'd15);
  wire [14:0] mask = 15'((32'd1 << size_log2) - 32'd1);

  wire [14:0]  a_tail, b_tail;
  wire         a_full, b_full, a_ready, b_ready, a_valid, b_valid;
  wire [31:0]  a_addr, b_addr;
  wire [3:0]   a_beats, b_beats;
  wire [511:0] a_data, b_data;

  bouncer_cq_writer #(.ADDR_W(32)) dut_a (
    .clk(clk), .rst(rst), .base(base), .size_log2(size_log2), .ring_reset(ring_reset),
    .head(head), .tail(a_tail), .full(a_full),
    .s_cqe_valid(s_cqe_valid), .s_cqe_ready(a_ready), .s_cqe(s_cqe),
    .dma_valid(a_valid), .dma_ready(dma_ready), .dma_addr(a_addr), .dma_beats(a_beats),
    .dma_data(a_data), .dma_done(dma_done)
  );
  bouncer_cq_writer #(.ADDR_W(32)) dut_b (
    .clk(clk), .rst(rst), .base(base), .size_log2(size_log2), .ring_reset(ring_reset),
    .head(head), .tail(b_tail), .full(b_full),
    .s_cqe_valid(s_cqe_valid), .s_cqe_ready(b_ready), .s_cqe(s_cqe),
    .dma_valid(b_valid), .dma_ready(dma_ready), .dma_addr(b_addr), .dma_beats(b_beats),
    .dma_data(b_data), .dma_done(dma_done)
  );

  formal_axis_check #(.W(256), .MASTER(0)) env_cqe (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(s_cqe_valid), .ready(a_ready), .payload(s_cqe)
  );
  formal_axis_check #(.W(548), .MASTER(1), .RESET_LOW(0)) chk_dma (
    .clk(clk), .rst(rst), .clr(ring_reset), .valid(a_valid), .ready(dma_ready),
    .payload({a_addr, a_beats, a_data})
  );

  // ---------------------------------------------------------------- environment
  wire       dma_fire = a_valid && dma_ready;
  reg  [1:0] env_out_q;     // writes accepted by the DMA engine and not yet done
  reg [14:0] head_q;
  reg [19:0] wr_q;          // CQEs completed since the last (ring) reset
  reg [19:0] cons_q;        // entries the host consumed since then
  reg        inflight_q;    // the writer has a write issued and not completed
  reg        was_full_q;    // the ring was full with a CQE waiting since the last (ring) reset
  wire [14:0] head_step = (head - head_q) & mask;
  wire [19:0] unconsumed = wr_q - cons_q;                // before this cycle's head step
  wire [19:0] occ = unconsumed - {5'd0, head_step};      // entries the host still owns now

  always @* begin
    if (dma_done) assume (env_out_q != 2'd0);
    if (rst || ring_reset) assume (head == 15'd0);
    else if (!init_q) assume ({5'd0, head_step} <= unconsumed);
    if (ring_reset) assume (env_out_q == 2'd0 && !dma_fire);
  end

  always @(posedge clk) begin
    env_out_q  <= env_out_q + {1'b0, dma_fire} - {1'b0, dma_done};
    head_q     <= head;
    wr_q       <= wr_q + {19'd0, a_ready};
    cons_q     <= cons_q + {5'd0, head_step};
    if (dma_fire) inflight_q <= 1'b1;
    if (a_ready) inflight_q <= 1'b0;
    if (s_cqe_valid && a_full) was_full_q <= 1'b1;
    if (rst) env_out_q <= 2'd0;
    if (rst || ring_reset) begin
      head_q     <= 15'd0;
      wr_q       <= 20'd0;
      cons_q     <= 20'd0;
      inflight_q <= 1'b0;
      was_full_q <= 1'b0;
    end
  end

  // ---------------------------------------------------------------- properties
  wire [19:0] lap = wr_q >> size_log2;
  always @(posedge clk) begin
    if (!init_q) begin
      assert (a_valid == b_valid);
      assert (a_ready == b_ready);
      assert (a_full == b_full);
      assert (a_tail == b_tail);
      if (!rst && !ring_reset) begin
        // one CQE per descriptor
        if (dma_fire) assert (!inflight_q);
        if (a_ready) assert (inflight_q && s_cqe_valid);
        // ring pointer, no overrun, polarity
        assert (occ <= {5'd0, mask});
        assert (a_tail == (wr_q[14:0] & mask));
        if (dma_fire) assert (occ < {5'd0, mask});
        if (a_valid) begin
          assert (a_addr == base + {12'd0, a_tail, 5'd0});
          assert (a_beats == 4'd4);
          assert (a_data[255] == !lap[0]);
          assert (a_data[254:0] == s_cqe[254:0] && a_data[511:256] == 256'd0);
        end
        cover (s_cqe_valid && a_full);
        cover (dma_fire && lap[0]);
        cover (dma_fire && was_full_q);
      end
    end
  end

endmodule
`default_nettype wire
