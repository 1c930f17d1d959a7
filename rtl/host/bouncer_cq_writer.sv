// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_cq_writer: producer side of one completion ring (CQ or CCQ).
//
// Takes a 32-byte completion (without its VALID bit), stamps VALID with the ring polarity
// (1 on the first lap, flipping at each wrap, as irdma's CQ), and writes it at the tail
// with one 4-beat DMA write. It never overwrites a slot the host has not consumed: with
// head = the host's consumer index, the ring is full when tail + 1 == head, and the
// writer then waits (full = 1) instead of dropping the completion.
// Latency: AW + 4 W beats per completion, and one idle cycle after each before the next is
// offered (full is registered: see settle_q); the write is posted, and a bad write response
// shows up in STATUS.DMA_WR_ERR (see bouncer_dma_wr).
`default_nettype none
module bouncer_cq_writer #(
  parameter int ADDR_W = 64
) (
  input  wire               clk,
  input  wire               rst,

  input  wire [ADDR_W-1:0]  base,
  input  wire [3:0]         size_log2,
  input  wire               ring_reset,
  input  wire [14:0]        head,
  output logic [14:0]       tail,
  output logic              full,

  input  wire               s_cqe_valid,
  output logic              s_cqe_ready,   // high for one cycle when the CQE is in host memory
  input  wire [255:0]       s_cqe,

  output logic              dma_valid,
  input  wire               dma_ready,
  output logic [ADDR_W-1:0] dma_addr,
  output logic [3:0]        dma_beats,
  output logic [511:0]      dma_data,
  input  wire               dma_done      // the CQE write is posted (ordered before later writes)
);

  logic [14:0] tail_q;
  logic        pol_q;
  logic        busy_q;
  logic [14:0] mask_q, tail_next;
  logic        full_q;
  logic [1:0]  settle_q;   // cycles until full_q describes the current tail and mask

  // The index mask is registered: size_log2 is a configuration register that changes only
  // together with ring_reset, and a one-cycle-old mask right after that reset cannot report
  // a false "not full" (tail = head = 0). Keeps the shifter off the full -> dma_valid path.
  always_ff @(posedge clk) mask_q <= 15'((32'd1 << size_log2) - 32'd1);
  assign tail_next = (tail_q + 15'd1) & mask_q;
  // full is a flop too (off the dma_valid -> DMA arbiter -> client path). It lags the tail
  // and the mask by one cycle, so a write is not offered in the cycle after the tail moved
  // (settle_q), nor in the two after a ring reset (mask_q, then full_q). A lagging head only
  // makes full conservative: the host's head moves forward only.
  assign full      = full_q;

  logic [255:0] cqe_stamped;
  always_comb begin
    cqe_stamped = s_cqe;
    cqe_stamped[bouncer_regs_pkg::CQE_VALID_LSB] = pol_q;
  end

  assign dma_valid = s_cqe_valid && !busy_q && !full_q && (settle_q == 2'd0);
  assign dma_addr  = base + {{(ADDR_W-20){1'b0}}, tail_q, 5'b00000};
  assign dma_beats = 4'd4;
  assign dma_data  = {256'd0, cqe_stamped};

  always_ff @(posedge clk) begin
    settle_q <= settle_q >> 1;
    full_q   <= (tail_next == (head & mask_q));
    if (dma_valid && dma_ready) busy_q <= 1'b1;
    if (busy_q && dma_done) begin
      busy_q      <= 1'b0;
      settle_q    <= 2'd1;
      tail_q      <= tail_next;
      if (tail_next == 15'd0) pol_q <= ~pol_q;
    end
    if (rst || ring_reset) begin
      tail_q      <= '0;
      pol_q       <= 1'b1;
      busy_q      <= 1'b0;
      settle_q    <= 2'd3;
      full_q      <= 1'b0;
    end
  end

  assign s_cqe_ready = busy_q && dma_done;
  assign tail        = tail_q;

endmodule
`default_nettype wire
