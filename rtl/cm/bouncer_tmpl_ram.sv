// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_tmpl_ram: the listeners' auto-reject PD templates, on chip, so that an auto-reject
// needs no host-memory read. 2 * 2^NL_LOG2 slots of 512 bytes (64 words of 64 bits, byte 0 of
// the PD in bits [7:0] of word 0): slot {bank, listener}. Each listener has two banks
// (bouncer_listener_table keeps which one is live), so CREATE_LISTENER can copy a new template
// into one bank while a request that took the listener's previous template still reads the
// other.
//
// Write port: the control queue, one word per cycle as its DMA read returns them.
// Read port: the CM engine; rd_data holds the word addressed by the last cycle with rd_en
// (registered read, latency 1). One simple dual-port block RAM of 2^(NL_LOG2+7) x 64 (16 KiB
// for 16 listeners: four RAMB36E2). The engine never reads a slot while it is written (the
// control queue waits for the engine's tmpl_use_* to release it), so read-during-write
// behaviour does not matter.
`default_nettype none
module bouncer_tmpl_ram #(
  parameter int NL_LOG2 = 4
) (
  input  wire               clk,

  input  wire               wr_en,
  input  wire [NL_LOG2:0]   wr_slot,
  input  wire [5:0]         wr_word,
  input  wire [63:0]        wr_data,

  input  wire               rd_en,
  input  wire [NL_LOG2:0]   rd_slot,
  input  wire [5:0]         rd_word,
  output logic [63:0]       rd_data
);

  localparam int AW = NL_LOG2 + 7;

  // ------------------------------------------------------------------ parameter checks
  if (NL_LOG2 < 1 || NL_LOG2 > 4) begin : g_bad_nl
    $error("bouncer_tmpl_ram: NL_LOG2 must be 1..4 (the LISTENER field has 4 bits)");
  end

  (* ram_style = "block" *) logic [63:0] mem [1 << AW];

  always_ff @(posedge clk) begin
    if (wr_en) mem[{wr_slot, wr_word}] <= wr_data;
  end

  always_ff @(posedge clk) begin
    if (rd_en) rd_data <= mem[{rd_slot, rd_word}];
  end

endmodule
`default_nettype wire
