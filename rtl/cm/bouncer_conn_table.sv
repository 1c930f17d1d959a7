// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_conn_table: the passive side's connection lookup, TCP 4-tuple -> cm_id.
//
// The table is a set-associative hash in one block RAM (BRAM/URAM after synthesis, never
// flops): 2**DEPTH_LOG2 entries in 2**DEPTH_LOG2 / WAYS buckets of WAYS entries (WAYS a
// power of two). One bucket is one RAM word, {valid, tuple, cm_id} x WAYS, read in one
// access. The bucket index is an add-rotate-xor mix of the tuple keyed with `hash_key`
// (sampled while `rst` is high), folded to the index width, so the bucket of a tuple is not
// predictable without the key.
//
// Commands (cmd_*, valid/ready, one per cycle):
//   OP_LOOKUP (0)  hit/cm_id of the tuple; status OK or NOT_FOUND
//   OP_INSERT (1)  add tuple -> cmd_cm_id in the first free way; status OK, EXISTS (hit=1 and
//                  the stored cm_id; nothing written) or FULL (all WAYS taken; nothing written,
//                  insert_fail_full pulses)
//   OP_DELETE (2)  remove the tuple; status OK (hit=1, the removed cm_id) or NOT_FOUND
//   op 3 is executed as OP_LOOKUP.
// Results (res_*, valid/ready) come out in command order: hit = the tuple was in the table
// before the command, res_cm_id = its cm_id (0 on a miss), res_status as above.
//
// Pipeline (never stalls; a result FIFO with credit-based cmd_ready absorbs backpressure):
//   SA  accept: the command registered as it came
//   SB  first two rounds of the hash mix, S0 the third round and the fold to a bucket index
//   S1  RAM read (registered address), S2 RAM output register
//   S3  compare the WAYS entries, decide, write the bucket back (every insert and delete; only
//       the valid bits depend on the compares), push the result
// Read-after-write hazards are handled by FORWARDING, not stalls: a command in S3 compares
// its bucket index with the buckets written by the two commands ahead of it (the writes its
// RAM read could not see) and takes the newest matching bucket image instead of the RAM data.
// Latency: cmd accepted in cycle t -> res_valid in cycle t+6. Throughput: 1 command/cycle
// while res_ready holds (cmd_ready drops only when the result FIFO could overflow).
// Reset sweep: every bucket is written invalid, one per cycle (2**DEPTH_LOG2 / WAYS cycles);
// init_done rises when it is over and no command is accepted before.
`default_nettype none
module bouncer_conn_table #(
  parameter int DEPTH_LOG2 = 10,  // entries = 2**DEPTH_LOG2 (up to 16: 65536 entries)
  parameter int WAYS       = 4,   // entries per bucket, power of two
  parameter int CM_ID_W    = 10   // = CTX_DEPTH_LOG2 of the context table
) (
  input  wire                  clk,
  input  wire                  rst,
  input  wire [31:0]           hash_key,
  output logic                 init_done,

  input  wire                  cmd_valid,
  output logic                 cmd_ready,
  input  wire [1:0]            cmd_op,
  input  wire [31:0]           cmd_rem_ip,
  input  wire [31:0]           cmd_loc_ip,
  input  wire [15:0]           cmd_rem_port,
  input  wire [15:0]           cmd_loc_port,
  input  wire [CM_ID_W-1:0]    cmd_cm_id,

  output logic                 res_valid,
  input  wire                  res_ready,
  output logic                 res_hit,
  output logic [CM_ID_W-1:0]   res_cm_id,
  output logic [1:0]           res_status,

  output logic [DEPTH_LOG2:0]  occupancy,
  output logic                 insert_fail_full
);

  localparam logic [1:0] OP_LOOKUP = 2'd0;
  localparam logic [1:0] OP_INSERT = 2'd1;
  localparam logic [1:0] OP_DELETE = 2'd2;

  localparam logic [1:0] ST_OK        = 2'd0;
  localparam logic [1:0] ST_NOT_FOUND = 2'd1;
  localparam logic [1:0] ST_EXISTS    = 2'd2;
  localparam logic [1:0] ST_FULL      = 2'd3;

  localparam int WAYS_LOG2 = $clog2(WAYS);
  localparam int BL        = DEPTH_LOG2 - WAYS_LOG2;  // bucket index width
  localparam int TW        = 96;                      // tuple width
  localparam int EW        = 1 + TW + CM_ID_W;        // entry: {valid, tuple, cm_id}
  localparam int BW        = WAYS * EW;               // bucket (RAM word) width
  localparam int FIFO_LOG2 = 3;                       // result FIFO: 8 entries
  localparam int RW        = 1 + CM_ID_W + 2;         // result: {hit, cm_id, status}

  // ---------------------------------------------------------------- reset sweep, key
  logic          init_q;
  logic [BL:0]   init_addr_q;
  logic [31:0]   key_q;

  // ---------------------------------------------------------------- SA, SB, S0: accept + hash
  // SA registers the command as it came (nothing combinational from the command port into the
  // hash); SB computes the first two rounds of the mix, S0 the third and the fold.
  logic              cmd_fire;
  logic              va_q, vb_q;
  logic [1:0]        opa_q, opb_q;
  logic [TW-1:0]     tupa_q, tupb_q;
  logic [CM_ID_W-1:0] ida_q, idb_q;
  logic [31:0] h_a0, h_b0, h_c0, h_a1, h_c1, h_b1, h_a2, h_c2, h_x;
  logic [31:0] h_a1_q, h_b1_q, h_c1_q;
  logic [BL-1:0] cmd_bucket;

  always_comb begin
    // tupa_q = {rem_ip, loc_ip, rem_port, loc_port}
    h_a0 = tupa_q[95:64] ^ key_q;
    h_b0 = tupa_q[63:32] ^ {key_q[15:0], key_q[31:16]};
    h_c0 = tupa_q[31:0] ^ {key_q[23:0], key_q[31:24]} ^ 32'h9E3779B9;
    h_a1 = h_a0 + h_b0;
    h_c1 = h_c0 ^ {h_a1[24:0], h_a1[31:25]};   // rotl 7
    h_b1 = h_b0 + h_c1;
    h_a2 = h_a1_q ^ {h_b1_q[18:0], h_b1_q[31:19]};   // rotl 13
    h_c2 = h_c1_q + h_a2;
    h_x  = h_c2 ^ {h_b1_q[14:0], h_b1_q[31:15]};     // rotl 17
    cmd_bucket = '0;                            // fold all 32 bits: bit i -> i mod BL
    for (int i = 0; i < 32; i++) cmd_bucket[i % BL] = cmd_bucket[i % BL] ^ h_x[i];
  end

  always_ff @(posedge clk) begin
    va_q   <= cmd_fire;
    opa_q  <= cmd_op;
    tupa_q <= {cmd_rem_ip, cmd_loc_ip, cmd_rem_port, cmd_loc_port};
    ida_q  <= cmd_cm_id;
    vb_q   <= va_q;
    opb_q  <= opa_q;
    tupb_q <= tupa_q;
    idb_q  <= ida_q;
    h_a1_q <= h_a1;
    h_b1_q <= h_b1;
    h_c1_q <= h_c1;
    if (rst) begin
      va_q <= 1'b0;
      vb_q <= 1'b0;
    end
  end

  // pipeline registers
  logic              v0_q, v1_q, v2_q;
  logic [1:0]        op0_q, op1_q, op2_q;
  logic [TW-1:0]     tup0_q, tup1_q, tup2_q;
  logic [CM_ID_W-1:0] id0_q, id1_q, id2_q;
  logic [BL-1:0]     bk0_q, bk1_q, bk2_q;

  // result FIFO state. Credit for cmd_ready: used_q counts the commands accepted and not yet
  // taken from the FIFO (in SA..S3, every stage moves each cycle, or in the FIFO), so a command
  // is accepted only when its result will have a FIFO entry. A register, so cmd_ready is one
  // LUT from flops (the sum of FIFO count and stage valids was on the CM engine's deepest path).
  logic [FIFO_LOG2:0] fifo_cnt_q;
  logic [FIFO_LOG2:0] used_q;

  assign cmd_ready = init_q && !used_q[FIFO_LOG2];
  assign cmd_fire  = cmd_valid && cmd_ready;

  always_ff @(posedge clk) begin
    v0_q   <= vb_q;
    op0_q  <= opb_q;
    tup0_q <= tupb_q;
    id0_q  <= idb_q;
    bk0_q  <= cmd_bucket;
    v1_q   <= v0_q;
    op1_q  <= op0_q;
    tup1_q <= tup0_q;
    id1_q  <= id0_q;
    bk1_q  <= bk0_q;
    v2_q   <= v1_q;
    op2_q  <= op1_q;
    tup2_q <= tup1_q;
    id2_q  <= id1_q;
    bk2_q  <= bk1_q;
    if (rst) begin
      v0_q <= 1'b0;
      v1_q <= 1'b0;
      v2_q <= 1'b0;
    end
  end

  // ---------------------------------------------------------------- RAM
  logic [BW-1:0] mem [1 << BL];
  logic          ram_we;
  logic [BL-1:0] ram_waddr;
  logic [BW-1:0] ram_wdata;
  logic [BW-1:0] rdata_q;      // S1: RAM read register (address = bk0_q)
  logic [BW-1:0] rdata_out_q;  // S2: RAM output register

  // S3 write (from the compare stage below) or the reset sweep
  logic          s3_we;
  logic [BW-1:0] s3_wdata;

  assign ram_we    = !init_q || s3_we;
  assign ram_waddr = !init_q ? init_addr_q[BL-1:0] : bk2_q;
  assign ram_wdata = !init_q ? {BW{1'b0}} : s3_wdata;

  // read-first: a read in the same cycle as a write to the same bucket returns the old word
  always_ff @(posedge clk) begin
    if (ram_we) mem[ram_waddr] <= ram_wdata;
    rdata_q <= mem[bk0_q];
  end

  // output register stage (kept outside the RAM block so it maps to the BRAM output reg)
  always_ff @(posedge clk) rdata_out_q <= rdata_q;

  // ---------------------------------------------------------------- S3: forward, compare, modify
  // Writes of the last two S3 cycles: the RAM data of the command now in S3 predates both.
  // Whether they hit its bucket (fwd1_q, fwd2_q) is decided one cycle ahead, while the
  // command is in S2, so the bucket-index compares are not in front of the tuple compares.
  logic          wr1_v_q;
  logic [BL-1:0] wr1_bk_q;
  logic [BW-1:0] wr1_d_q, wr2_d_q;
  logic          fwd1_q, fwd2_q;

  logic [BW-1:0]      bucket;
  logic [WAYS-1:0]    way_valid, way_match, free_oh;
  logic               hit, any_free, free_found;
  logic [CM_ID_W-1:0] hit_id;
  logic [EW-1:0]      ent;
  logic               do_ins, do_del;
  logic [1:0]         s3_status;

  always_comb begin
    if (fwd1_q) bucket = wr1_d_q;
    else if (fwd2_q) bucket = wr2_d_q;
    else bucket = rdata_out_q;

    hit_id     = '0;
    free_oh    = '0;
    free_found = 1'b0;
    for (int w = 0; w < WAYS; w++) begin
      ent          = bucket[w*EW +: EW];
      way_valid[w] = ent[EW-1];
      way_match[w] = ent[EW-1] && (ent[EW-2 -: TW] == tup2_q);
      if (way_match[w]) hit_id = hit_id | ent[CM_ID_W-1:0];
      if (!ent[EW-1] && !free_found) begin
        free_oh[w] = 1'b1;
        free_found = 1'b1;
      end
    end
    ent      = '0;
    hit      = |way_match;
    any_free = !(&way_valid);

    do_ins = v2_q && (op2_q == OP_INSERT) && !hit && any_free;
    do_del = v2_q && (op2_q == OP_DELETE) && hit;

    // Every insert and delete writes its bucket back, changed or not, and only the valid bits
    // wait for the tuple compares: an insert puts its tuple and cm_id into the first free way
    // whether or not the tuple is already there (the way stays invalid then), a delete clears
    // the valid bit of the matching way. An invalid way's other bits are never looked at, so
    // the wide data path to the RAM does not go through the compares.
    s3_we    = v2_q && ((op2_q == OP_INSERT) || (op2_q == OP_DELETE));
    s3_wdata = bucket;
    for (int w = 0; w < WAYS; w++) begin
      if (v2_q && (op2_q == OP_INSERT) && free_oh[w])
        s3_wdata[w*EW +: EW-1] = {tup2_q, id2_q};
      s3_wdata[w*EW + EW-1] = (way_valid[w] && !(do_del && way_match[w]))
                            || (do_ins && free_oh[w]);
    end

    case (op2_q)
      OP_INSERT: s3_status = hit ? ST_EXISTS : (any_free ? ST_OK : ST_FULL);
      OP_DELETE: s3_status = hit ? ST_OK : ST_NOT_FOUND;
      OP_LOOKUP: s3_status = hit ? ST_OK : ST_NOT_FOUND;
      default:   s3_status = hit ? ST_OK : ST_NOT_FOUND;
    endcase
  end

  // ---------------------------------------------------------------- result FIFO
  logic [RW-1:0]        fifo [1 << FIFO_LOG2];
  logic [FIFO_LOG2-1:0] fifo_wp_q, fifo_rp_q;
  logic                 fifo_push, fifo_pop;

  assign fifo_push = v2_q;
  assign fifo_pop  = res_valid && res_ready;

  always_ff @(posedge clk) begin
    if (fifo_push) fifo[fifo_wp_q] <= {hit, hit_id, s3_status};
  end

  assign res_valid  = fifo_cnt_q != '0;
  assign res_hit    = fifo[fifo_rp_q][RW-1];
  assign res_cm_id  = fifo[fifo_rp_q][2 +: CM_ID_W];
  assign res_status = fifo[fifo_rp_q][1:0];

  // ---------------------------------------------------------------- state, counters
  logic [DEPTH_LOG2:0] occ_q;
  logic                ins_q, del_q;
  logic                fail_full_q;

  always_ff @(posedge clk) begin
    wr1_v_q  <= s3_we;
    wr1_bk_q <= bk2_q;
    wr1_d_q  <= s3_wdata;
    wr2_d_q  <= wr1_d_q;
    // next cycle: wr1 is this S3 write, wr2 is wr1, and the command in S3 is bk1_q's
    fwd1_q   <= s3_we && (bk2_q == bk1_q);
    fwd2_q   <= wr1_v_q && (wr1_bk_q == bk1_q);

    if (fifo_push) fifo_wp_q <= fifo_wp_q + 1'b1;
    if (fifo_pop) fifo_rp_q <= fifo_rp_q + 1'b1;
    if (fifo_push && !fifo_pop) fifo_cnt_q <= fifo_cnt_q + 1'b1;
    else if (!fifo_push && fifo_pop) fifo_cnt_q <= fifo_cnt_q - 1'b1;
    if (cmd_fire && !fifo_pop) used_q <= used_q + 1'b1;
    else if (!cmd_fire && fifo_pop) used_q <= used_q - 1'b1;

    // the count follows a cycle after the write (ins_q, del_q)
    ins_q <= do_ins;
    del_q <= do_del;
    if (ins_q) occ_q <= occ_q + 1'b1;
    else if (del_q) occ_q <= occ_q - 1'b1;
    fail_full_q <= v2_q && (op2_q == OP_INSERT) && !hit && !any_free;

    if (!init_q) begin
      init_addr_q <= init_addr_q + 1'b1;
      if (init_addr_q == (BL+1)'((1 << BL) - 1)) init_q <= 1'b1;
    end

    if (rst) begin
      key_q       <= hash_key;
      init_q      <= 1'b0;
      init_addr_q <= '0;
      wr1_v_q     <= 1'b0;
      fwd1_q      <= 1'b0;
      fwd2_q      <= 1'b0;
      fifo_wp_q   <= '0;
      fifo_rp_q   <= '0;
      fifo_cnt_q  <= '0;
      used_q      <= '0;
      occ_q       <= '0;
      ins_q       <= 1'b0;
      del_q       <= 1'b0;
      fail_full_q <= 1'b0;
    end
  end

  assign init_done        = init_q;
  assign occupancy        = occ_q;
  assign insert_fail_full = fail_full_q;

endmodule
`default_nettype wire
