// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_id_alloc: free list of the 2**ID_W cm_ids.
//
// The free ids live in a circular FIFO in one simple dual-port RAM of 2**ID_W x ID_W
// (BRAM/URAM after synthesis). Reset sweep: the RAM is filled with 0 .. 2**ID_W - 1 in
// ascending order, one per cycle (2**ID_W cycles), then init_done rises, so the first
// allocations return 0, 1, 2, ... Freed ids are appended at the tail; allocations take the
// head, so ids are handed out in FIFO order.
//
// m_alloc_*: the head is prefetched into the RAM output register, so m_alloc_valid and
// m_alloc_id are registered outputs; id 0 is offered from the cycle init_done rises. Throughput one allocation per cycle (the next id is
// read in the cycle the current one is taken). s_free_*: always accepted, one per cycle, in
// the same cycle as an allocation if need be; a freed id is offered again at the earliest 2
// cycles after it was freed (when the list was empty). Frees before init_done are ignored.
// in_use = ids handed out and not yet freed (registered, counts the allocation and free
// handshakes of the previous cycles).
// The caller must free only ids it holds (each at most once); the list then never
// overflows and never offers an id twice.
`default_nettype none
module bouncer_id_alloc #(
  parameter int ID_W = 10
) (
  input  wire             clk,
  input  wire             rst,
  output logic            init_done,

  output logic            m_alloc_valid,
  input  wire             m_alloc_ready,
  output logic [ID_W-1:0] m_alloc_id,

  input  wire             s_free_valid,
  input  wire [ID_W-1:0]  s_free_id,

  output logic [ID_W:0]   in_use
);

  logic          init_q;
  logic [ID_W:0] init_addr_q;

  // ---------------------------------------------------------------- RAM (free-id FIFO)
  logic [ID_W-1:0] mem [1 << ID_W];
  logic            ram_we;
  logic [ID_W-1:0] ram_waddr, ram_wdata;
  logic [ID_W:0]   wp_q, rp_q;       // one extra bit: full vs empty
  logic            ram_re;
  logic [ID_W-1:0] head_q;           // RAM read register = the offered id
  logic            head_v_q;
  logic            take;

  assign ram_we    = !init_q || s_free_valid;
  assign ram_waddr = init_q ? wp_q[ID_W-1:0] : init_addr_q[ID_W-1:0];
  assign ram_wdata = init_q ? s_free_id : init_addr_q[ID_W-1:0];

  assign take   = head_v_q && m_alloc_ready;
  // read the next free id when the head is empty or being taken; never the address written
  // at this edge (wp_q != rp_q means that entry was written earlier). The last sweep cycle
  // prefetches id 0 (written in the first), so an id is offered from init_done on.
  assign ram_re = init_q ? (wp_q != rp_q) && (!head_v_q || m_alloc_ready)
                         : init_addr_q == (ID_W + 1)'((1 << ID_W) - 1);

  always_ff @(posedge clk) begin
    if (ram_we) mem[ram_waddr] <= ram_wdata;
    if (ram_re) head_q <= mem[rp_q[ID_W-1:0]];
  end

  // ---------------------------------------------------------------- pointers, counters
  logic [ID_W:0] in_use_q, in_use_d;

  always_comb begin
    in_use_d = in_use_q;
    if (take && !(init_q && s_free_valid)) in_use_d = in_use_q + 1'b1;
    else if (!take && init_q && s_free_valid) in_use_d = in_use_q - 1'b1;
  end

  always_ff @(posedge clk) begin
    if (!init_q) begin
      init_addr_q <= init_addr_q + 1'b1;
      if (init_addr_q == (ID_W + 1)'((1 << ID_W) - 1)) begin
        init_q <= 1'b1;
        wp_q   <= (ID_W + 1)'(1 << ID_W);  // full: every id is free
      end
    end else if (s_free_valid) begin
      wp_q <= wp_q + 1'b1;
    end
    if (ram_re) rp_q <= rp_q + 1'b1;
    if (ram_re) head_v_q <= 1'b1;
    else if (take) head_v_q <= 1'b0;
    in_use_q <= in_use_d;
    if (rst) begin
      init_q      <= 1'b0;
      init_addr_q <= '0;
      wp_q        <= '0;
      rp_q        <= '0;
      head_v_q    <= 1'b0;
      in_use_q    <= '0;
    end
  end

  assign init_done     = init_q;
  assign m_alloc_valid = head_v_q;
  assign m_alloc_id    = head_q;
  assign in_use        = in_use_q;

endmodule
`default_nettype wire
