// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_mpa_req_asm: MPA request reassembly. Holds the RX parser's payload beats in a
// staging FIFO until the CM engine says what to do with each frame's payload, collects MPA
// requests (20-byte header + PD_Length bytes, possibly over several TCP segments) in a pool
// of 2**NBUF_LOG2 reassembly buffers of 1024 bytes, reports the header fields, and reads the
// private data back out in 64-byte chunks for the DMA writer.
//
// Payload (s_axis_payload_*): the parser's realigned payload stream (byte 0 of a frame in
// tdata[7:0] of its first beat, tlast per frame). Beats are written to the staging RAM
// (2**STAGE_LOG2 bytes = 2**STAGE_LOG2 / (DATA_W/8) beats; every beat takes one word, so
// short frames use a whole beat each); tready = 0 while it is full.
// Commands (s_cmd_*, one per payload-carrying frame, in frame order): the frame's beats are
// consumed up to and including the beat with tlast (a command waits for them; a frame may
// stream through, it need not fit in staging). Only the first s_cmd_len bytes count; tkeep
// is not looked at (the parser's tkeep agrees with its payload_len). s_cmd_len = 0 consumes
// no beat.
//   append = 0              discard the frame: ok = 0, buf = s_cmd_buf
//   append = 1, new = 0     write payload byte i to byte s_cmd_offset + i of s_cmd_buf
//   append = 1, new = 1     allocate the lowest-numbered free buffer (its header shadow is
//                           cleared) and write there; no free buffer: discard, ok = 0, buf 0
// Bytes that would land at buffer offset >= 1024 are dropped. The response (m_rsp_*, in
// command order) carries total = s_cmd_offset + s_cmd_len (saturated at 0xFFFF), and, when
// ok = 1, hdr_valid = (total >= 20) with the header read from the buffer's first 24 bytes
// after the append (key_ok: bytes 0..15 are "MPA ID Req Frame"; flags = byte 16, rev =
// byte 17, pd_len = bytes 18..19 big-endian) and ird_ord_valid = (total >= 24) with ird_ord =
// bytes 20..23 big-endian. Fields that are not valid (and all of them when ok = 0) are 0.
// The first 24 bytes of every buffer are also kept in flops for these fields (the "shadow":
// bytes 16..23 as they are, bytes 0..15 as one key-match bit each).
// Read-out (s_rd_*): bytes [start, start + len) of buffer s_rd_buf leave as ceil(len / 64)
// chunks; chunk i holds buffer bytes start + 64 i + k in bits [8k+7:8k], zero past len (and
// past byte 1023); beats = ceil(bytes in the chunk / 8); last on the final chunk. With
// s_rd_free the buffer returns to the pool when the last chunk is taken (len = 0: at once,
// and no chunk). s_free_* returns a buffer at once. Freeing a buffer while an append or a
// read of it is in flight is the caller's error.
//
// Structure: staging FIFO (one RAM, DATA_W + 1 bits wide, first-word-fall-through through its
// read register) -> piece select (8 bytes per cycle) -> write register -> eight byte-lane RAMs
// (lane L holds the buffer bytes whose offset is L mod 8, NBUF * 128 deep), so an 8-byte
// piece at any byte offset is one write per lane, and any 8 consecutive bytes are one read
// per lane. The lane RAMs have one write port (append) and one read port (read-out).
// Latency: a command accepted in cycle t gets m_rsp_valid in cycle t + P + 3, where P is the
// number of cycles the frame spends in the piece selector: one per beat at DATA_W 64; at 512
// one per 8-byte piece that is stored and one per beat otherwise (a discarded frame or the
// part of a beat past len or past byte 1023), plus any cycles its beats are not yet staged.
// s_cmd_len = 0: t + 2. A read accepted in cycle t offers its first chunk in cycle
// t + 2 + (8-byte pieces in that chunk).
// Throughput: 8 payload bytes per cycle while appending (both widths), one beat per cycle
// while discarding. The next command is taken in the cycle the previous response becomes
// valid (P + 3 cycles per command); one response may wait in the response register while
// the next command runs. Read-out: one chunk per 8 cycles with m_chunk_ready high (fewer for
// a short last chunk), back to back across reads (a read is taken while the previous one
// issues its last piece; s_rd_ready does not depend on m_chunk_ready combinationally).
`default_nettype none
module bouncer_mpa_req_asm #(
  parameter int DATA_W     = 64,  // payload stream width: 64 or 512
  parameter int NBUF_LOG2  = 3,   // 2**NBUF_LOG2 reassembly buffers of 1024 bytes
  parameter int STAGE_LOG2 = 12   // staging capacity in bytes
) (
  input  wire                  clk,
  input  wire                  rst,

  input  wire [DATA_W-1:0]     s_axis_payload_tdata,
  input  wire [DATA_W/8-1:0]   s_axis_payload_tkeep,
  input  wire                  s_axis_payload_tlast,
  input  wire                  s_axis_payload_tvalid,
  output logic                 s_axis_payload_tready,

  input  wire                  s_cmd_valid,
  output logic                 s_cmd_ready,
  input  wire                  s_cmd_append,
  input  wire                  s_cmd_new,
  input  wire [NBUF_LOG2-1:0]  s_cmd_buf,
  input  wire [9:0]            s_cmd_offset,
  input  wire [15:0]           s_cmd_len,

  output logic                 m_rsp_valid,
  input  wire                  m_rsp_ready,
  output logic                 m_rsp_ok,
  output logic [NBUF_LOG2-1:0] m_rsp_buf,
  output logic [15:0]          m_rsp_total,
  output logic                 m_rsp_hdr_valid,
  output logic                 m_rsp_key_ok,
  output logic [7:0]           m_rsp_flags,
  output logic [7:0]           m_rsp_rev,
  output logic [15:0]          m_rsp_pd_len,
  output logic                 m_rsp_ird_ord_valid,
  output logic [31:0]          m_rsp_ird_ord,

  input  wire                  s_rd_valid,
  output logic                 s_rd_ready,
  input  wire [NBUF_LOG2-1:0]  s_rd_buf,
  input  wire [9:0]            s_rd_start,
  input  wire [9:0]            s_rd_len,
  input  wire                  s_rd_free,
  output logic                 m_chunk_valid,
  input  wire                  m_chunk_ready,
  output logic [511:0]         m_chunk_data,
  output logic [3:0]           m_chunk_beats,
  output logic                 m_chunk_last,

  input  wire                  s_free_valid,
  input  wire [NBUF_LOG2-1:0]  s_free_buf,
  output logic [NBUF_LOG2:0]   bufs_free
);

  localparam int BYTES     = DATA_W / 8;
  localparam int LANES     = DATA_W / 64;                   // 8-byte pieces per beat
  localparam logic signed [17:0] BYTES_S = 18'(BYTES);
  localparam int LANE_W    = (LANES > 1) ? $clog2(LANES) : 1;
  localparam int SA        = STAGE_LOG2 - $clog2(BYTES);    // staging address width
  localparam int NBUF      = 1 << NBUF_LOG2;
  localparam int BA        = NBUF_LOG2 + 7;                 // lane RAM address {buf, word}
  localparam int SHW       = 8 * 8;                         // shadow bits per buffer
  // "MPA ID Req Frame", byte 0 ('M') in bits [7:0]
  localparam logic [127:0] REQ_KEY = 128'h656D6172_46207165_52204449_2041504D;

  localparam logic [1:0] A_IDLE  = 2'd0;
  localparam logic [1:0] A_RUN   = 2'd1;
  localparam logic [1:0] A_DRAIN = 2'd2;
  localparam logic [1:0] A_RESP  = 2'd3;

  logic unused_keep;
  assign unused_keep = ^s_axis_payload_tkeep;

  // ================================================================== staging FIFO
  logic [DATA_W:0] stg_mem [1 << SA];
  logic [SA:0]     stg_wp_q, stg_rp_q, stg_rp_d;
  logic [SA:0]     stg_rp_inc_q;   // stg_rp_q + 1: a pop only selects, nothing adds after it
  logic [DATA_W:0] stg_rd_q;   // = stg_mem[stg_rp_q] when stg_hv_q
  logic            stg_hv_q;
  logic            stg_push, stg_pop;

  assign s_axis_payload_tready = !((stg_wp_q[SA] != stg_rp_q[SA]) &&
                                   (stg_wp_q[SA-1:0] == stg_rp_q[SA-1:0]));
  assign stg_push = s_axis_payload_tvalid && s_axis_payload_tready;
  assign stg_rp_d = stg_pop ? stg_rp_inc_q : stg_rp_q;

  always_ff @(posedge clk) begin
    if (stg_push) stg_mem[stg_wp_q[SA-1:0]] <= {s_axis_payload_tlast, s_axis_payload_tdata};
    stg_rd_q <= stg_mem[stg_rp_d[SA-1:0]];
  end

  always_ff @(posedge clk) begin
    if (stg_push) stg_wp_q <= stg_wp_q + 1'b1;
    stg_rp_q     <= stg_rp_d;
    stg_rp_inc_q <= stg_pop ? stg_rp_inc_q + 1'b1 : stg_rp_inc_q;
    // the word at stg_rp_d was written on an earlier edge, so the read above saw it (both
    // candidates compared side by side, the pop selects)
    stg_hv_q <= stg_pop ? (stg_wp_q != stg_rp_inc_q) : (stg_wp_q != stg_rp_q);
    if (rst) begin
      stg_wp_q     <= '0;
      stg_rp_q     <= '0;
      stg_rp_inc_q <= (SA + 1)'(1);
      stg_hv_q     <= 1'b0;
    end
  end

  // ================================================================== buffer pool
  logic [NBUF-1:0]      free_q;
  logic                 free_any;
  logic [NBUF_LOG2-1:0] free_idx;
  logic                 alloc_fire;
  logic                 rd_free_now;     // read command with len 0 and free
  logic                 chunk_free_now;  // last chunk taken, with free
  logic [NBUF_LOG2-1:0] out_buf_q;

  always_comb begin
    free_any = |free_q;
    free_idx = '0;
    for (int n = NBUF - 1; n >= 0; n--) if (free_q[n]) free_idx = NBUF_LOG2'(n);
  end

  always_comb begin
    bufs_free = '0;
    for (int n = 0; n < NBUF; n++) bufs_free = bufs_free + (NBUF_LOG2 + 1)'(free_q[n]);
  end

  always_ff @(posedge clk) begin
    for (int n = 0; n < NBUF; n++) begin
      if (s_free_valid && s_free_buf == NBUF_LOG2'(n)) free_q[n] <= 1'b1;
      if (rd_free_now && s_rd_buf == NBUF_LOG2'(n)) free_q[n] <= 1'b1;
      if (chunk_free_now && out_buf_q == NBUF_LOG2'(n)) free_q[n] <= 1'b1;
      if (alloc_fire && free_idx == NBUF_LOG2'(n)) free_q[n] <= 1'b0;
    end
    if (rst) free_q <= '1;
  end

  // ================================================================== append engine
  logic [1:0]           a_st_q, a_st_d;
  logic                 a_ok_q;
  logic [NBUF_LOG2-1:0] a_buf_q;
  logic [9:0]           a_off_q;
  logic [15:0]          a_len_q;
  // Where the piece in hand falls, kept as registers so no adder sits in front of the piece
  // decisions: with pos = frame byte of the piece and boff = a_off_q + pos (buffer offset),
  // rem = a_len_q - pos (bytes still to store), room = 1024 - boff (space left in the
  // buffer), both signed; the w* copies hold the same for the first piece of the word in
  // front, so a pop (next word) and a lane step (next piece) are each one constant add.
  logic signed [17:0]   a_rem_q, a_wrem_q, a_room_q, a_wroom_q;
  logic [9:0]           a_boff_q, a_wboff_q;
  logic [LANE_W-1:0]    a_lane_q;   // piece within that word (DATA_W 512)
  logic                 a_more_q;   // (a_rem_q > 8) && (a_room_q > 8), kept with them
  logic [3:0]           a_rem8_q, a_room8_q;   // a_rem_q, a_room_q clamped to 0..8, likewise
  // The compares behind the next clamps, kept with the values they are about (set whenever the
  // value is), so a step or a pop selects a clamp without a carry chain in front of it:
  // *_lo: v <= k, *_hi: v >= k + 8, with k = 8 for a_rem_q / a_room_q (the next lane) and
  // k = BYTES for a_wrem_q / a_wroom_q (the next word)
  logic                 a_rem_lo_q, a_rem_hi_q, a_room_lo_q, a_room_hi_q;
  logic                 a_wrem_lo_q, a_wrem_hi_q, a_wroom_lo_q, a_wroom_hi_q;
  function automatic logic [3:0] clamp8_f(input logic lo, input logic hi, input logic [2:0] v);
    clamp8_f = lo ? 4'd0 : (hi ? 4'd8 : {1'b0, v});
  endfunction
  function automatic logic [3:0] clamp8(input logic signed [17:0] v);
    clamp8 = (v <= 18'sd0) ? 4'd0 : ((v >= 18'sd8) ? 4'd8 : v[3:0]);
  endfunction
  logic                 cmd_fire;

  // piece selector
  logic [63:0]  piece;
  logic         head_last;
  logic [3:0]   p_n;                // bytes of the piece to store (0..8)
  logic         p_use, p_more;      // store this piece; the next piece in the word is useful
  logic [3:0]   p_rem8, p_room8;    // rem, room clamped to 0..8
  logic         a_step, a_pop;

  // write register (one 8-byte piece at any byte offset of one buffer)
  logic                 w1_v_q;
  logic [NBUF_LOG2-1:0] w1_buf_q;
  logic [9:0]           w1_off_q;
  logic [3:0]           w1_n_q;
  logic [63:0]          w1_data_q;

  assign s_cmd_ready = a_st_q == A_IDLE;
  assign cmd_fire    = s_cmd_valid && s_cmd_ready;
  assign alloc_fire  = cmd_fire && s_cmd_append && s_cmd_new && free_any;

  always_comb begin
    piece = '0;
    for (int l = 0; l < LANES; l++)
      if (LANE_W'(l) == a_lane_q) piece = stg_rd_q[64*l +: 64];
    head_last = stg_rd_q[DATA_W];

    p_rem8  = a_rem8_q;
    p_room8 = a_room8_q;
    p_n     = (p_rem8 < p_room8) ? p_rem8 : p_room8;
    p_use   = a_ok_q && (p_rem8 != 4'd0) && (p_room8 != 4'd0);
    p_more  = a_ok_q && a_more_q;

    a_step = (a_st_q == A_RUN) && stg_hv_q;
    if (LANES == 1) a_pop = a_step;
    else a_pop = a_step && ((a_lane_q == LANE_W'(LANES - 1)) || !p_more);
  end

  assign stg_pop = a_pop;

  // response register
  logic                 rsp_v_q;
  logic                 rsp_ok_q;
  logic [NBUF_LOG2-1:0] rsp_buf_q;
  logic [15:0]          rsp_total_q;
  logic                 rsp_hdr_q, rsp_key_q, rsp_iov_q;
  logic [7:0]           rsp_flags_q, rsp_rev_q;
  logic [15:0]          rsp_pd_len_q;
  logic [31:0]          rsp_ird_ord_q;
  logic                 rsp_load;

  assign rsp_load = (a_st_q == A_RESP) && (!rsp_v_q || m_rsp_ready);

  always_comb begin
    a_st_d = a_st_q;
    case (a_st_q)
      A_IDLE:  if (cmd_fire) a_st_d = (s_cmd_len == 16'd0) ? A_RESP : A_RUN;
      A_RUN:   if (a_pop && head_last) a_st_d = A_DRAIN;
      A_DRAIN: a_st_d = A_RESP;   // the last piece is written on this edge
      default: if (rsp_load) a_st_d = A_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    a_st_q <= a_st_d;
    if (cmd_fire) begin
      a_ok_q   <= s_cmd_append && (!s_cmd_new || free_any);
      a_buf_q  <= !(s_cmd_append && s_cmd_new) ? s_cmd_buf : (free_any ? free_idx : '0);
      a_off_q  <= s_cmd_offset;
      a_len_q  <= s_cmd_len;
      a_lane_q <= '0;
      a_rem_q   <= 18'(s_cmd_len);
      a_wrem_q  <= 18'(s_cmd_len);
      a_room_q  <= 18'sd1024 - 18'(s_cmd_offset);
      a_wroom_q <= 18'sd1024 - 18'(s_cmd_offset);
      a_boff_q  <= s_cmd_offset;
      a_wboff_q <= s_cmd_offset;
      a_more_q  <= (s_cmd_len > 16'd8) && (s_cmd_offset < 10'd1016);
      a_rem8_q  <= clamp8(18'(s_cmd_len));
      a_room8_q <= clamp8(18'sd1024 - 18'(s_cmd_offset));
      a_rem_lo_q   <= 18'(s_cmd_len) <= 18'sd8;
      a_rem_hi_q   <= 18'(s_cmd_len) >= 18'sd16;
      a_room_lo_q  <= 18'sd1024 - 18'(s_cmd_offset) <= 18'sd8;
      a_room_hi_q  <= 18'sd1024 - 18'(s_cmd_offset) >= 18'sd16;
      a_wrem_lo_q  <= 18'(s_cmd_len) <= BYTES_S;
      a_wrem_hi_q  <= 18'(s_cmd_len) >= BYTES_S + 18'sd8;
      a_wroom_lo_q <= 18'sd1024 - 18'(s_cmd_offset) <= BYTES_S;
      a_wroom_hi_q <= 18'sd1024 - 18'(s_cmd_offset) >= BYTES_S + 18'sd8;
    end else if (a_pop) begin
      a_lane_q <= '0;
      a_rem_q   <= a_wrem_q - BYTES_S;
      a_wrem_q  <= a_wrem_q - BYTES_S;
      a_room_q  <= a_wroom_q - BYTES_S;
      a_wroom_q <= a_wroom_q - BYTES_S;
      a_boff_q  <= a_wboff_q + 10'(BYTES);
      a_wboff_q <= a_wboff_q + 10'(BYTES);
      a_more_q  <= (a_wrem_q > BYTES_S + 18'sd8) && (a_wroom_q > BYTES_S + 18'sd8);
      a_rem8_q  <= clamp8_f(a_wrem_lo_q, a_wrem_hi_q, a_wrem_q[2:0]);
      a_room8_q <= clamp8_f(a_wroom_lo_q, a_wroom_hi_q, a_wroom_q[2:0]);
      a_rem_lo_q   <= a_wrem_q <= BYTES_S + 18'sd8;
      a_rem_hi_q   <= a_wrem_q >= BYTES_S + 18'sd16;
      a_room_lo_q  <= a_wroom_q <= BYTES_S + 18'sd8;
      a_room_hi_q  <= a_wroom_q >= BYTES_S + 18'sd16;
      a_wrem_lo_q  <= a_wrem_q <= 2 * BYTES_S;
      a_wrem_hi_q  <= a_wrem_q >= 2 * BYTES_S + 18'sd8;
      a_wroom_lo_q <= a_wroom_q <= 2 * BYTES_S;
      a_wroom_hi_q <= a_wroom_q >= 2 * BYTES_S + 18'sd8;
    end else if (a_step) begin
      a_lane_q <= a_lane_q + 1'b1;
      a_rem_q   <= a_rem_q - 18'sd8;
      a_room_q  <= a_room_q - 18'sd8;
      a_boff_q  <= a_boff_q + 10'd8;
      a_more_q  <= (a_rem_q > 18'sd16) && (a_room_q > 18'sd16);
      a_rem8_q  <= clamp8_f(a_rem_lo_q, a_rem_hi_q, a_rem_q[2:0]);
      a_room8_q <= clamp8_f(a_room_lo_q, a_room_hi_q, a_room_q[2:0]);
      a_rem_lo_q  <= a_rem_q <= 18'sd16;
      a_rem_hi_q  <= a_rem_q >= 18'sd24;
      a_room_lo_q <= a_room_q <= 18'sd16;
      a_room_hi_q <= a_room_q >= 18'sd24;
    end

    w1_v_q    <= a_step && p_use;
    w1_buf_q  <= a_buf_q;
    w1_off_q  <= a_boff_q;
    w1_n_q    <= p_n;
    w1_data_q <= piece;

    if (rst) begin
      a_st_q <= A_IDLE;
      w1_v_q <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ lane writes
  logic [7:0]    wen;
  logic [8*BA-1:0] waddr;
  logic [63:0]   wdata;
  logic [2:0]    wk;

  always_comb begin
    wen   = '0;
    waddr = '0;
    wdata = '0;
    wk    = '0;
    for (int l = 0; l < 8; l++) begin
      wk = 3'(l) - w1_off_q[2:0];                      // piece byte that lands in lane l
      wen[l] = w1_v_q && ({1'b0, wk} < w1_n_q);
      waddr[l*BA +: BA] = {w1_buf_q, w1_off_q[9:3] + ((3'(l) < w1_off_q[2:0]) ? 7'd1 : 7'd0)};
      wdata[8*l +: 8] = w1_data_q[8*wk +: 8];
    end
  end

  // ------------------------------------------------------------------ header shadow
  // Bytes 16..23 of every buffer (flags, rev, PD_Length, IRD/ORD) in shadow_q; for bytes
  // 0..15 only one bit each, whether the byte equals its byte of "MPA ID Req Frame" (keym_q).
  // The bit is written with the byte (compared on the lane data, not on a stored byte), so
  // the response needs only a 16-input AND of the selected buffer's bits instead of a
  // 128-bit compare behind the 8-way buffer mux.
  logic [NBUF*SHW-1:0] shadow_q;
  logic [NBUF*16-1:0]  keym_q;
  logic [SHW-1:0]      sh;
  logic [15:0]         keym_sel;

  always_ff @(posedge clk) begin
    for (int n = 0; n < NBUF; n++) begin
      if (alloc_fire && free_idx == NBUF_LOG2'(n)) begin
        shadow_q[n*SHW +: SHW] <= '0;
        keym_q[n*16 +: 16]     <= '0;   // no key byte is 0
      end
      // byte b is lane b % 8 of word b / 8; lane l's word is w1_off_q[9:3] + (l < off[2:0]),
      // compared here without the add (a lane write never wraps past the buffer's end). Every
      // lane enable includes w1_v_q and w1_buf_q names one buffer: both are tested first, so a
      // simulator skips the byte tests of the other buffers and of cycles without a write.
      if (w1_v_q && w1_buf_q == NBUF_LOG2'(n)) begin
        for (int b = 0; b < 24; b++) begin
          if (wen[b % 8] &&
              (((3'(b % 8) < w1_off_q[2:0]) && (b / 8 > 0) && w1_off_q[9:3] == 7'(b / 8 - 1))
               || (!(3'(b % 8) < w1_off_q[2:0]) && w1_off_q[9:3] == 7'(b / 8)))) begin
            if (b < 16)
              keym_q[n*16 + (b % 16)] <= (wdata[8*(b % 8) +: 8] == REQ_KEY[8*(b % 16) +: 8]);
            else
              shadow_q[(n*8 + (b % 8))*8 +: 8] <= wdata[8*(b % 8) +: 8];
          end
        end
      end
    end
  end

  // ------------------------------------------------------------------ response
  // The total is registered (a_tot_q), so the response fields are a compare with a constant,
  // a mux and an AND behind registers, not behind an adder. a_off_q and a_len_q only change
  // when a command is taken and a_tot_q follows them one cycle later, which is in time: a
  // command with s_cmd_len != 0 reaches A_RESP at least three cycles after it was taken, and
  // one with s_cmd_len = 0 (total = offset) loads a_tot_q straight from s_cmd_offset.
  logic [16:0] tot;
  logic [15:0] a_tot_q;            // total, saturated at 0xFFFF
  logic        tot_ge20, tot_ge24;

  always_comb begin
    sh = '0;
    keym_sel = '0;
    for (int n = 0; n < NBUF; n++)
      if (a_buf_q == NBUF_LOG2'(n)) begin
        sh       = shadow_q[n*SHW +: SHW];
        keym_sel = keym_q[n*16 +: 16];
      end
    tot      = {7'd0, a_off_q} + {1'b0, a_len_q};
    // >= 20 (10100b) and >= 24 (11000b) as and/or of bits: Yosys makes a carry chain of a
    // compare with a constant
    tot_ge20 = (|a_tot_q[15:5]) || (a_tot_q[4] && (a_tot_q[3] || a_tot_q[2]));
    tot_ge24 = (|a_tot_q[15:5]) || (a_tot_q[4] && a_tot_q[3]);
  end

  always_ff @(posedge clk) begin
    if (cmd_fire) a_tot_q <= {6'd0, s_cmd_offset};
    else a_tot_q <= tot[16] ? 16'hFFFF : tot[15:0];
  end

  always_ff @(posedge clk) begin
    if (m_rsp_ready) rsp_v_q <= 1'b0;
    if (rsp_load) begin
      rsp_v_q       <= 1'b1;
      rsp_ok_q      <= a_ok_q;
      rsp_buf_q     <= a_buf_q;
      rsp_total_q   <= a_tot_q;
      rsp_hdr_q     <= 1'b0;
      rsp_key_q     <= 1'b0;
      rsp_flags_q   <= '0;
      rsp_rev_q     <= '0;
      rsp_pd_len_q  <= '0;
      rsp_iov_q     <= 1'b0;
      rsp_ird_ord_q <= '0;
      if (a_ok_q && tot_ge20) begin
        rsp_hdr_q    <= 1'b1;
        rsp_key_q    <= &keym_sel;
        rsp_flags_q  <= sh[7:0];
        rsp_rev_q    <= sh[15:8];
        rsp_pd_len_q <= {sh[23:16], sh[31:24]};
      end
      if (a_ok_q && tot_ge24) begin
        rsp_iov_q     <= 1'b1;
        rsp_ird_ord_q <= {sh[39:32], sh[47:40], sh[55:48], sh[63:56]};
      end
    end
    if (rst) rsp_v_q <= 1'b0;
  end

  assign m_rsp_valid         = rsp_v_q;
  assign m_rsp_ok            = rsp_ok_q;
  assign m_rsp_buf           = rsp_buf_q;
  assign m_rsp_total         = rsp_total_q;
  assign m_rsp_hdr_valid     = rsp_hdr_q;
  assign m_rsp_key_ok        = rsp_key_q;
  assign m_rsp_flags         = rsp_flags_q;
  assign m_rsp_rev           = rsp_rev_q;
  assign m_rsp_pd_len        = rsp_pd_len_q;
  assign m_rsp_ird_ord_valid = rsp_iov_q;
  assign m_rsp_ird_ord       = rsp_ird_ord_q;

  // ================================================================== read-out engine
  logic                 rd_busy_q;
  logic [NBUF_LOG2-1:0] rd_buf_q;
  logic [10:0]          rd_off_q;   // buffer byte of the next piece
  logic [10:0]          rd_rem_q;   // bytes still to issue
  logic [2:0]           rd_p_q;     // piece within the chunk
  logic                 rd_free_q;
  logic                 rd_fire, rd_issue, p0_ok;
  logic [3:0]           rd_n;       // bytes of this piece (1..8)
  logic [3:0]           rd_inb;     // of those, below byte 1024
  logic                 rd_lastp;
  logic [8*BA-1:0]      raddr;

  // R1: lane RAM outputs for the issued piece
  logic                 r1_v_q;
  logic [2:0]           r1_p_q, r1_sh_q;
  logic [3:0]           r1_n_q;
  logic                 r1_clast_q, r1_last_q, r1_free_q;
  logic [NBUF_LOG2-1:0] r1_buf_q;
  logic [63:0]          rdl;

  // chunk assembly and output registers
  logic [511:0]         asm_q, asm_d;
  logic                 asm_full_q;
  logic [3:0]           asm_beats_q;
  logic                 asm_last_q, asm_free_q;
  logic [NBUF_LOG2-1:0] asm_buf_q;
  logic                 out_v_q;
  logic [511:0]         out_data_q;
  logic [3:0]           out_beats_q;
  logic                 out_last_q, out_free_q;
  logic                 out_can_load;
  logic [63:0]          r1_piece;

  // a new read is taken while the last piece of the current one issues (certain unless it
  // is the first piece of a chunk, which may wait for the assembly register)
  assign s_rd_ready     = !rd_busy_q || (rd_lastp && rd_p_q != 3'd0);
  assign rd_fire        = s_rd_valid && s_rd_ready;
  assign rd_free_now    = rd_fire && (s_rd_len == 10'd0) && s_rd_free;
  assign out_can_load   = !out_v_q || m_chunk_ready;
  assign chunk_free_now = out_v_q && m_chunk_ready && out_last_q && out_free_q;

  // The first piece of a chunk may go only if the assembly register is free when it
  // arrives: no completed chunk may still be waiting in it after this edge.
  always_comb begin
    if (asm_full_q) p0_ok = out_can_load;
    else if (r1_v_q && r1_clast_q) p0_ok = out_can_load;
    else p0_ok = 1'b1;
    rd_issue = rd_busy_q && ((rd_p_q != 3'd0) || p0_ok);
    rd_n     = (rd_rem_q > 11'd8) ? 4'd8 : rd_rem_q[3:0];
    rd_inb   = rd_off_q[10] ? 4'd0 :
               ((rd_off_q > 11'd1016) ? 4'(11'd1024 - rd_off_q) : 4'd8);
    if (rd_inb > rd_n) rd_inb = rd_n;
    rd_lastp = rd_rem_q <= 11'd8;
    raddr = '0;
    for (int l = 0; l < 8; l++)
      raddr[l*BA +: BA] = {rd_buf_q, rd_off_q[9:3] + ((3'(l) < rd_off_q[2:0]) ? 7'd1 : 7'd0)};
  end

  always_ff @(posedge clk) begin
    if (rd_issue) begin
      rd_off_q <= rd_off_q + 11'd8;
      rd_rem_q <= rd_rem_q - {7'd0, rd_n};
      rd_p_q   <= rd_p_q + 3'd1;         // wraps to 0 after piece 7
      if (rd_lastp) begin
        rd_busy_q <= 1'b0;
        rd_p_q    <= '0;
      end
    end
    if (rd_fire && s_rd_len != 10'd0) begin
      rd_busy_q <= 1'b1;
      rd_buf_q  <= s_rd_buf;
      rd_off_q  <= {1'b0, s_rd_start};
      rd_rem_q  <= {1'b0, s_rd_len};
      rd_p_q    <= '0;
      rd_free_q <= s_rd_free;
    end

    r1_v_q     <= rd_issue;
    r1_p_q     <= rd_p_q;
    r1_sh_q    <= rd_off_q[2:0];
    r1_n_q     <= rd_inb;
    r1_clast_q <= rd_lastp || (rd_p_q == 3'd7);
    r1_last_q  <= rd_lastp;
    r1_free_q  <= rd_free_q && rd_lastp;
    r1_buf_q   <= rd_buf_q;

    if (rst) begin
      rd_busy_q <= 1'b0;
      r1_v_q    <= 1'b0;
    end
  end

  // byte-lane RAMs
  for (genvar l = 0; l < 8; l++) begin : g_lane
    logic [7:0] mem [NBUF * 128];
    logic [7:0] rd_q;
    always_ff @(posedge clk) begin
      if (wen[l]) mem[waddr[l*BA +: BA]] <= wdata[8*l +: 8];
      rd_q <= mem[raddr[l*BA +: BA]];
    end
    assign rdl[8*l +: 8] = rd_q;
  end

  // R1: rotate the lane bytes into piece order, zero past the valid bytes, merge
  logic [2:0] rk;
  always_comb begin
    r1_piece = '0;
    rk       = '0;
    for (int k = 0; k < 8; k++) begin
      rk = 3'(k) + r1_sh_q;                           // lane holding piece byte k
      if (4'(k) < r1_n_q) r1_piece[8*k +: 8] = rdl[8*rk +: 8];
    end
    asm_d = asm_q;
    if (r1_p_q == 3'd0) asm_d = '0;
    for (int p = 0; p < 8; p++)
      if (r1_p_q == 3'(p)) asm_d[64*p +: 64] = r1_piece;
  end

  always_ff @(posedge clk) begin
    if (r1_v_q) asm_q <= asm_d;

    if (m_chunk_ready) out_v_q <= 1'b0;
    if (asm_full_q) begin
      if (out_can_load) begin
        out_v_q     <= 1'b1;
        out_data_q  <= asm_q;
        out_beats_q <= asm_beats_q;
        out_last_q  <= asm_last_q;
        out_free_q  <= asm_free_q;
        out_buf_q   <= asm_buf_q;
        asm_full_q  <= 1'b0;
      end
    end else if (r1_v_q && r1_clast_q) begin
      if (out_can_load) begin
        out_v_q     <= 1'b1;
        out_data_q  <= asm_d;
        out_beats_q <= {1'b0, r1_p_q} + 4'd1;
        out_last_q  <= r1_last_q;
        out_free_q  <= r1_free_q;
        out_buf_q   <= r1_buf_q;
      end else begin
        asm_full_q  <= 1'b1;
        asm_beats_q <= {1'b0, r1_p_q} + 4'd1;
        asm_last_q  <= r1_last_q;
        asm_free_q  <= r1_free_q;
        asm_buf_q   <= r1_buf_q;
      end
    end

    if (rst) begin
      out_v_q    <= 1'b0;
      asm_full_q <= 1'b0;
    end
  end

  assign m_chunk_valid = out_v_q;
  assign m_chunk_data  = out_data_q;
  assign m_chunk_beats = out_beats_q;
  assign m_chunk_last  = out_last_q;

endmodule
`default_nettype wire
