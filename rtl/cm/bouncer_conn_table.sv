// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_conn_table: the passive side's connection lookup, TCP 4-tuple -> cm_id.
//
// The table is a set-associative hash in one block RAM (BRAM/URAM after synthesis, never
// flops): 2**DEPTH_LOG2 entries in 2**DEPTH_LOG2 / WAYS buckets of WAYS entries (WAYS a
// power of two). One bucket is one RAM word, {valid, tuple, cm_id} x WAYS, read in one
// access. The bucket index is an add-rotate-xor mix of the tuple keyed with `hash_key`
// (sampled while `rst` is high: the host's HASH_KEY, taken at every reset of the core's
// state while the table sweeps itself empty), folded to the index width, so the bucket of a
// tuple is not predictable without the key.
//
// Commands (cmd_*, valid/ready, one per cycle):
//   OP_LOOKUP (0)  hit/cm_id of the tuple; status OK or NOT_FOUND
//   OP_INSERT (1)  add tuple -> cmd_cm_id in the first free way; status OK, EXISTS (hit=1 and
//                  the stored cm_id; nothing written) or FULL (all WAYS taken; nothing written,
//                  insert_fail_full pulses)
//   OP_DELETE (2)  remove the tuple; status OK (hit=1, the removed cm_id) or NOT_FOUND
//   op 3 is executed as OP_LOOKUP.
// Results (res_*, valid/ready) come out in command order: hit = the tuple was in the table
// before the command, res_cm_id = its cm_id (0 on a miss), res_status as above: OK = 0,
// NOT_FOUND = 1, EXISTS = 2, FULL = 3.
//
// Pipeline (never stalls; a result FIFO with credit-based cmd_ready absorbs backpressure):
//   SA  accept: the command registered, with the first add of the hash mix
//   SB  the rest of the first two rounds of the mix, S0 the third round and the fold to a
//       bucket index
//   S1  RAM read (registered address)
//   S2  RAM output register; the forwarding decision for S3 and the tuple compares against
//       the bucket images written ahead of the command (see below)
//   S3  compare the WAYS entries of the RAM word, decide, write the bucket back (every insert
//       and delete; only the valid bits depend on the compares), push the result
// Read-after-write hazards are handled by FORWARDING, not stalls: in S2 a command compares
// its bucket index with the buckets written by the two commands ahead of it (the writes its
// RAM read could not see), and in S3 it takes the newest matching bucket image instead of the
// RAM data. Its tuple is compared with those images in S2 already where they are known then,
// so that S3 has one compare per way (the RAM word's) and selects after it (S3 section).
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

  // OP_LOOKUP = 0 (and op 3): neither insert nor delete
  localparam logic [1:0] OP_INSERT = 2'd1;
  localparam logic [1:0] OP_DELETE = 2'd2;

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
  // SA registers the command and the mix's first add (a1 = a0 + b0: one XOR with the key and
  // one add behind the command port); SB computes the rest of the first two rounds (one add),
  // S0 the third and the fold. So no stage has two dependent 32-bit adds (SB had both).
  logic              cmd_fire;
  logic              va_q, vb_q;
  logic [1:0]        opa_q, opb_q;
  logic [TW-1:0]     tupa_q, tupb_q;
  logic [CM_ID_W-1:0] ida_q, idb_q;
  logic [31:0] h_b0, h_c0, h_a1, h_c1, h_b1, h_a2, h_c2, h_x;
  logic [31:0] h_a1a_q, h_a1_q, h_b1_q, h_c1_q;
  logic [BL-1:0] cmd_bucket;

  always_comb begin
    // tupa_q = {rem_ip, loc_ip, rem_port, loc_port}
    h_b0 = tupa_q[63:32] ^ {key_q[15:0], key_q[31:16]};
    h_c0 = tupa_q[31:0] ^ {key_q[23:0], key_q[31:24]} ^ 32'h9E3779B9;
    h_a1 = h_a1a_q;
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
    // a0 + b0 with a0 = rem_ip ^ key, b0 = loc_ip ^ rotl(key, 16)
    h_a1a_q <= (cmd_rem_ip ^ key_q) + (cmd_loc_ip ^ {key_q[15:0], key_q[31:16]});
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
  logic [1:0]        op0_q, op1_q;
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

  // read-first: a read in the same cycle as a write to the same bucket returns the old word
  always_ff @(posedge clk) begin
    if (ram_we) mem[ram_waddr] <= ram_wdata;
    rdata_q <= mem[bk0_q];
  end

  // output register stage (kept outside the RAM block so it maps to the BRAM output reg)
  always_ff @(posedge clk) rdata_out_q <= rdata_q;

  // ---------------------------------------------------------------- S3: forward, compare, modify
  // Writes of the last two S3 cycles (wr1 = the last, wr2 = the one before): the RAM data of
  // the command now in S3 (C) predates both. Which one holds its bucket (src_w1_q, src_w2_q;
  // src_r_q for the RAM word) is decided one cycle ahead, while C is in S2, and so is all
  // that can be known there, so that the only compare left in S3 is C's tuple against the
  // RAM word, and the select between the sources comes after the compares:
  //   wr2 (C-2's image, in wr1_d_q while C is in S2): C's matches (m2_q) and, for the case
  //     that wr2 is C's bucket, C's new valid bits, insert way, hit and status are computed
  //     in S2 (*w2_q).
  //   wr1 (C-1's image, written while C is in S2): its valid bits are C-1's decision, known
  //     in S3 only (wr1_d_q), its tuples are per way either C-1's own (its insert's way:
  //     tup1_q == tup2_q in S2) or from C-1's bucket. If that was C-1's wr1 (C-2's image) the
  //     compare is made in S2 as for m2_q: together p_q (a match if the way is valid).
  //     Otherwise C-1's bucket was its RAM word or C-3's image, and that is exactly the RAM
  //     word C reads (C-3's write is the last to the bucket before C's read, C-2 did not
  //     write it), so the S3 compare against the RAM word serves it, with wr1's valid bits
  //     (g_q); the cm_ids are then the RAM word's too.
  // The compares are trees of LUT6 (3-bit slices x_*, groups of six slices y_*, the tail t_*
  // with the slices left over and the valid/select terms), kept as such: left alone, Yosys'
  // ABC maps them with LUT6+MUXF7/F8, the same depth in its unit-delay model but 1.5 times
  // deeper by the LUT-level count. The decision in S3 is one LUT after the RAM compare's
  // matches m_r (hit_id: a LUT7..9 with the cm_ids): everything else is folded into at most
  // two signals two LUTs from the flops (per way a 2-bit code for the new valid bit; ins_ok,
  // fail_ok, s0, hit_f, hid_f), each the OR of a RAM-word part, a wr1 part and a wr2 part
  // computed in S2.
  localparam int NX  = TW / 3;       // 3-bit slices of a tuple: one LUT6 each
  localparam int NY  = NX / 6;       // groups of six slices: one LUT6 each
  localparam int NXR = NX - 6 * NY;  // slices left for the tail (2)

  // Slice k of the compare of two tuples: a[3k +: 3] == b[3k +: 3]. Written as whole-word
  // XNOR and ANDs with the next two bits, then one bit per slice: each slice is still one
  // LUT6 of its six input bits, and a simulator evaluates a few word operations instead of
  // NX separate 3-bit compares.
  function automatic logic [NX-1:0] slice_eq(input logic [TW-1:0] a, input logic [TW-1:0] b);
    logic [TW-1:0] e, t;
    e = ~(a ^ b);
    t = e & (e >> 1) & (e >> 2);
    for (int k = 0; k < NX; k++) slice_eq[k] = t[3*k];
  endfunction

  logic          wr1_v_q;
  logic [BL-1:0] wr1_bk_q;
  logic [BW-1:0] wr1_d_q, wr2_d_q;

  // decided in S2 for the command in S3 (see above)
  logic            src_r_q, src_w1_q, src_w2_q;    // one-hot: bucket = RAM word, wr1, wr2
  logic            ins2_q, del2_q;                 // it is a valid insert / delete
  logic            kr_q, dr_q, ir_q;               // init_q && src_r && !delete / delete / insert
  logic            kw1_q, dw1_q, iw1_q;            // init_q && src_w1 && !delete / delete / insert
  logic [WAYS-1:0] p_q, g_q;                       // wr1: match known from S2 / RAM compare's
  logic [WAYS-1:0] m2_q;                           // wr2: match
  logic [WAYS-1:0] nvw2_q, iw2_q;                  // bucket wr2: new valid bits, insert way
  logic            hw2_q, okw2_q, ffw2_q, s0w2_q;  // bucket wr2: hit, ins_ok, fail_ok, s0

  // S2: tup1_q against tup2_q (eqt), and against wr1_d_q (the image wr2 will be)
  (* keep *) logic [NX-1:0]      x_t;
  (* keep *) logic [NY-1:0]      y_t;
  (* keep *) logic               t_t;
  (* keep *) logic [WAYS*NX-1:0] x_1;
  (* keep *) logic [WAYS*NY-1:0] y_1;
  (* keep *) logic [WAYS-1:0]    t_1e, t_1v;
  logic                          eqt, ins1, del1, hit2, all_w2, fwd1_d, fwd2_d, src_w2_d;
  logic [WAYS-1:0]               vw2, free2, e1_d, m2_d, p_d, g_d, nvw2_d, iw2_d;
  // S3: tup2_q against the RAM word; rv: whose valid bit goes with it (see above)
  (* keep *) logic [WAYS*NX-1:0] x_r;
  (* keep *) logic [WAYS*NY-1:0] y_r;
  (* keep *) logic [WAYS-1:0]    t_r, m_r;
  // S3: all the rest, ready before m_r
  (* keep *) logic [WAYS-1:0]    code_m, code_k, ins_way;
  (* keep *) logic               hit_f, ins_ok, fail_ok, s0;
  (* keep *) logic [CM_ID_W-1:0] hid_f;
  logic [WAYS-1:0]    vr, vw1, rv, mw1, fr, fw1, u, nv;
  logic [BW-1:0]      bucket;
  logic               hit, hit_r, all_r, all_w1, none_w1;
  logic [CM_ID_W-1:0] hit_id;
  logic               do_ins, do_del, fail_full;
  logic [1:0]         s3_status;

  // S3
  always_comb begin
    // the bucket (data bits: the wide path to the RAM, no compare on it), an AND-OR of whole
    // words (the same logic as per bit, and a few word operations in a simulator)
    bucket = ({BW{src_r_q}} & rdata_out_q) | ({BW{src_w1_q}} & wr1_d_q)
           | ({BW{src_w2_q}} & wr2_d_q);
    for (int w = 0; w < WAYS; w++) begin
      vr[w]  = rdata_out_q[w*EW + EW-1];
      vw1[w] = wr1_d_q[w*EW + EW-1];
      mw1[w] = p_q[w] && vw1[w];
      rv[w]  = (src_r_q && vr[w]) || (g_q[w] && vw1[w]);
    end
    all_r   = &vr;
    all_w1  = &vw1;
    none_w1 = !(|mw1);

    // the compare against the RAM word
    for (int w = 0; w < WAYS; w++) begin
      x_r[w*NX +: NX] = slice_eq(rdata_out_q[w*EW + CM_ID_W +: TW], tup2_q);
      for (int j = 0; j < NY; j++) y_r[w*NY + j] = &x_r[w*NX + 6*j +: 6];
      t_r[w] = (&x_r[w*NX + 6*NY +: NXR]) && rv[w];
      m_r[w] = (&y_r[w*NY +: NY]) && t_r[w];
    end
    hit_r = |m_r;

    // The insert's way (the first free one) and the new valid bits. Per way a 2-bit code
    // {code_m, code_k}: 00 invalid, 01 valid, 10 valid unless m_r (a delete), 11 valid unless
    // hit_r (inserted, no other match). RAM word: fr/ir_q/kr_q/dr_q; wr1: u (free, insert, no
    // match known from S2), kw1_q, dw1_q/p_q; wr2: nvw2_q. The reset sweep gets code 00.
    for (int w = 0; w < WAYS; w++) begin
      fr[w] = !vr[w];
      fw1[w] = !vw1[w];
      u[w]  = iw1_q && !vw1[w];
      for (int x = 0; x < WAYS; x++) begin
        if (x < w) begin
          fr[w] = fr[w] && vr[x];
          fw1[w] = fw1[w] && vw1[x];
          u[w]  = u[w] && vw1[x] && !p_q[x];
        end else if (x > w) begin
          u[w]  = u[w] && !mw1[x];
        end
      end
      ins_way[w] = (ir_q && fr[w]) || (iw1_q && fw1[w]) || iw2_q[w];
      code_k[w] = (vr[w] ? kr_q : (ir_q && fr[w])) || (vw1[w] ? kw1_q : u[w])
               || (src_w2_q && nvw2_q[w]);
      code_m[w] = (vr[w] ? dr_q : (ir_q && fr[w])) || (vw1[w] ? (dw1_q && !p_q[w]) : u[w]);
      case ({code_m[w], code_k[w]})
        2'b00:   nv[w] = 1'b0;
        2'b01:   nv[w] = 1'b1;
        2'b10:   nv[w] = !m_r[w];
        default: nv[w] = !hit_r;
      endcase
    end

    // hit_f: a match known from S2; ins_ok / fail_ok: an insert that finds a free way / none
    // and no match known from S2; s0 = !hit_f && (!insert || no free way)
    hit_f   = !none_w1 || hw2_q;
    ins_ok  = (ir_q && !all_r) || (iw1_q && !all_w1 && none_w1) || okw2_q;
    fail_ok = (ir_q && all_r) || (iw1_q && all_w1 && none_w1) || ffw2_q;
    s0      = (src_r_q && (!ins2_q || all_r)) || (src_w1_q && none_w1 && (!ins2_q || all_w1))
           || s0w2_q;
    hit     = hit_r || hit_f;

    // hit_id = OR over ways of (match & cm_id); at most one way matches
    hid_f = '0;
    for (int w = 0; w < WAYS; w++)
      hid_f = hid_f | ({CM_ID_W{mw1[w]}} & wr1_d_q[w*EW +: CM_ID_W])
                    | ({CM_ID_W{src_w2_q && m2_q[w]}} & wr2_d_q[w*EW +: CM_ID_W]);
    hit_id = hid_f;
    for (int w = 0; w < WAYS; w++)
      hit_id = hit_id | ({CM_ID_W{m_r[w]}} & rdata_out_q[w*EW +: CM_ID_W]);

    do_ins    = ins_ok && !hit_r;
    fail_full = fail_ok && !hit_r;
    do_del    = del2_q && hit;

    // Every insert and delete writes its bucket back, changed or not, and only the valid bits
    // wait for the tuple compares: an insert puts its tuple and cm_id into the first free way
    // whether or not the tuple is already there (the way stays invalid then), a delete clears
    // the valid bit of the matching way. An invalid way's other bits are never looked at, so
    // the wide data path to the RAM does not go through the compares.
    s3_we    = ins2_q || del2_q;
    s3_wdata = bucket;
    for (int w = 0; w < WAYS; w++) begin
      if (ins_way[w]) s3_wdata[w*EW +: EW-1] = {tup2_q, id2_q};
      s3_wdata[w*EW + EW-1] = nv[w];
    end

    // status: INSERT -> EXISTS (2) on a hit, else OK (0) with a free way, else FULL (3);
    // the others -> OK (0) on a hit, else NOT_FOUND (1)
    s3_status[1] = ins2_q && !(ins_ok && !hit_r);
    s3_status[0] = s0 && !hit_r;
  end

  // S2, for the command in S2 (C), with the one in S3 as C-1
  always_comb begin
    ins1 = v1_q && (op1_q == OP_INSERT);
    del1 = v1_q && (op1_q == OP_DELETE);
    x_t = slice_eq(tup1_q, tup2_q);
    for (int j = 0; j < NY; j++) y_t[j] = &x_t[6*j +: 6];
    t_t = &x_t[6*NY +: NXR];
    eqt = (&y_t) && t_t;
    for (int w = 0; w < WAYS; w++) begin
      vw2[w] = wr1_d_q[w*EW + EW-1];
      x_1[w*NX +: NX] = slice_eq(wr1_d_q[w*EW + CM_ID_W +: TW], tup1_q);
      for (int j = 0; j < NY; j++) y_1[w*NY + j] = &x_1[w*NX + 6*j +: 6];
      t_1e[w] = &x_1[w*NX + 6*NY +: NXR];
      t_1v[w] = (&x_1[w*NX + 6*NY +: NXR]) && vw2[w];
      e1_d[w] = (&y_1[w*NY +: NY]) && t_1e[w];
      m2_d[w] = (&y_1[w*NY +: NY]) && t_1v[w];
    end
    hit2 = |m2_d;
    // next cycle: wr1 is this S3 write, wr2 is wr1, and the command in S3 is bk1_q's
    fwd1_d   = s3_we && (bk2_q == bk1_q);
    fwd2_d   = wr1_v_q && (wr1_bk_q == bk1_q);
    src_w2_d = !fwd1_d && fwd2_d;
    for (int w = 0; w < WAYS; w++) begin
      // wr1 will be C-1's image: way w holds C-1's tuple (its insert's way), C-2's (C-1's
      // bucket was wr1) or that of the RAM word C reads (see above)
      p_d[w]   = fwd1_d && (ins_way[w] ? eqt : (src_w1_q && e1_d[w]));
      g_d[w]   = fwd1_d && !ins_way[w] && !src_w1_q;
      // wr2 will be wr1_d_q: everything about it as C's bucket
      free2[w] = !vw2[w];
      for (int x = 0; x < w; x++) free2[w] = free2[w] && vw2[x];
      nvw2_d[w] = init_q && (vw2[w] ? !(del1 && m2_d[w]) : (ins1 && free2[w] && !hit2));
      iw2_d[w]  = src_w2_d && ins1 && free2[w];
    end
    all_w2 = &vw2;
  end

  // The valid bits are already 0 during the reset sweep (code 00); the rest is cleared here.
  always_comb begin
    ram_wdata = init_q ? s3_wdata : {BW{1'b0}};
    for (int w = 0; w < WAYS; w++) ram_wdata[w*EW + EW-1] = nv[w];
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
    src_r_q  <= !fwd1_d && !fwd2_d;
    src_w1_q <= fwd1_d;
    src_w2_q <= src_w2_d;
    ins2_q   <= ins1;
    del2_q   <= del1;
    kr_q     <= init_q && !fwd1_d && !fwd2_d && !del1;
    dr_q     <= init_q && !fwd1_d && !fwd2_d && del1;
    ir_q     <= init_q && !fwd1_d && !fwd2_d && ins1;
    kw1_q    <= init_q && fwd1_d && !del1;
    dw1_q    <= init_q && fwd1_d && del1;
    iw1_q    <= init_q && fwd1_d && ins1;
    p_q      <= p_d;
    g_q      <= g_d;
    m2_q     <= m2_d;
    nvw2_q   <= nvw2_d;
    iw2_q    <= iw2_d;
    hw2_q    <= src_w2_d && hit2;
    okw2_q   <= src_w2_d && ins1 && !hit2 && !all_w2;
    ffw2_q   <= src_w2_d && ins1 && !hit2 && all_w2;
    s0w2_q   <= src_w2_d && !hit2 && (!ins1 || all_w2);

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
    fail_full_q <= fail_full;

    if (!init_q) begin
      init_addr_q <= init_addr_q + 1'b1;
      if (init_addr_q == (BL+1)'((1 << BL) - 1)) init_q <= 1'b1;
    end

    if (rst) begin
      key_q       <= hash_key;
      init_q      <= 1'b0;
      init_addr_q <= '0;
      wr1_v_q     <= 1'b0;
      src_r_q     <= 1'b1;
      src_w1_q    <= 1'b0;
      src_w2_q    <= 1'b0;
      ins2_q      <= 1'b0;
      del2_q      <= 1'b0;
      kr_q        <= 1'b0;
      dr_q        <= 1'b0;
      ir_q        <= 1'b0;
      kw1_q       <= 1'b0;
      dw1_q       <= 1'b0;
      iw1_q       <= 1'b0;
      nvw2_q      <= '0;
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
