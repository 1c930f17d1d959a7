// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_probe: latency probes. Watches bouncer_core's internal handshakes and ports, stamps
// each event of interest with the core's free-running cycle counter (CYCLE_LO numbering: the
// edge at which the event happened) and stores one 64-bit record per event in a capture FIFO
// the host pops through registers (PROBE_* in regs/bouncer.toml):
//   record[31:0]  STAMP  low 32 bits of the cycle counter at the event's edge
//   record[39:32] STAGE  probe_stage code
//   record[63:40] TAG    which WQE or connection (per stage, see probe_stage)
// Stages and where they are taken:
//   DOORBELL       sq_db pulse (registered at the AXI4-Lite write edge): stamp = cycle_count
//   DESC_AVAIL     push_take pulse (registered): cycle_count; WQE DMA last beat: cycle_count+1
//   PD_READY       reject builder start handshake: cycle_count + 1
//   REJ_FIRST_*    first beat of a reject out of the TX arbiter (m_axis_tx or loopback): +1;
//                  HOST when the start happened between the CM engine taking an SQ reject and
//                  answering it, AUTO otherwise (auto-reject or retransmission)
//   REJ_LAST       tlast beat of that frame: +1
//   CQE_WRITTEN    CQ writer handshake (its posted write is out: registered done): cycle_count
//   SYN_IN         the SYN's tlast beat into the RX FIFO: +1 at that beat (kept in a small
//                  arrival-stamp FIFO until the parser's record says it was a SYN)
//   SYNACK_FIRST   first beat of a TX frame whose TCP flags are SYN|ACK (decided one cycle
//                  after its tlast from the captured header bytes): +1 at the first beat
//   MPA_REQ_LAST   tlast beat (arrival stamp) of the segment whose append completed the MPA
//                  request (offset < 20 + PD_Length <= total)
//   EVENT_WRITTEN  AEQ writer handshake (posted write out): cycle_count
// Each source has a one-record holding register; one record per cycle moves from the holding
// registers (lowest source first) into the FIFO. An event whose holding register is still
// full, or a record that finds the FIFO full, is lost: counted in lost and overflow (sticky;
// they follow the event by two cycles).
// The datapath is never stalled. enable = 0 captures nothing; clear empties the FIFO and the
// holding registers and clears lost/overflow. The RX arrival stamps run always (they must
// stay aligned with the parser's records); a frame whose stamp did not fit (ARR_LOG2 deep)
// gives no SYN_IN / MPA_REQ_LAST record and counts as lost.
// Latency: a record is in the FIFO 1..NSRC cycles after its event (head visible the cycle
// after it is written). pop removes the head (ignored when empty); head reads 0 when empty.
`default_nettype none
module bouncer_probe #(
  parameter int DATA_W     = 64,   // TX/RX stream width
  parameter int DEPTH_LOG2 = 6,    // capture FIFO depth
  parameter int ARR_LOG2   = 5,    // RX arrival-stamp FIFO depth
  parameter int ID_W       = 10    // cm_id width
) (
  input  wire                 clk,
  input  wire                 rst,
  /* verilator lint_off UNUSEDSIGNAL */   // only some bits of these are looked at
  input  wire [63:0]          cycle_count,

  // register interface
  input  wire                 enable,
  input  wire                 clear,        // pulse
  input  wire                 pop,          // pulse: PROBE_DATA_LO read
  output logic [63:0]         head,
  output logic [7:0]          count,
  output logic                overflow,
  output logic [31:0]         lost,

  // SQ side
  input  wire                 sq_db,        // registered doorbell pulse (a valid SQ)
  input  wire [1:0]           sq_db_sq,     // ... its SQ
  input  wire                 sq_db_push,   // ... SQ_PUSH_DB
  input  wire [14:0]          sq_db_pi,     // ... the producer index written
  input  wire                 push_take,    // registered: WQE taken from a push page
  input  wire                 wqe_rd_last,  // last beat of a WQE DMA read (combinational)
  input  wire [1:0]           sq_cur,       // the SQ engine's current SQ
  input  wire [14:0]          sq_cur_ci,    // ... and WQE index
  input  wire                 hrej_fire,    // SQ engine -> CM engine reject handshake
  input  wire                 hrsp_valid,   // CM engine's answer to it
  input  wire                 cqe_fire,     // CQE handshake with the CQ writer
  input  wire [1:0]            cqe_sq,       // ... the SQ and WQE index of that CQE
  input  wire [14:0]           cqe_ci,

  // reject builder start
  input  wire                 rej_start_fire,
  input  wire [15:0]          rej_start_port,

  // TX arbiter output (before the loopback switch)
  input  wire                 tx_fire,
  input  wire                 tx_sof,       // first beat of a frame (tx_fire implied)
  input  wire                 tx_rej_sof,   // ... of a reject frame
  input  wire                 tx_tlast,
  input  wire [DATA_W-1:0]    tx_tdata,

  // RX FIFO input and its verdict
  input  wire                 rx_in_last,   // tlast beat into the RX FIFO
  input  wire                 rx_good,      // registered: that frame was stored
  // parser records (one per stored frame, in order)
  input  wire                 rec_fire,
  input  wire                 rec_tcp,
  input  wire                 rec_bad,
  input  wire [7:0]           rec_flags,
  input  wire [15:0]          rec_sport,
  input  wire [15:0]          rec_len,
  // MPA request assembler commands and responses (in order)
  input  wire                 acmd_fire,
  input  wire [9:0]           acmd_offset,
  input  wire                 arsp_fire,
  input  wire                 arsp_ok,
  input  wire                 arsp_hdr_valid,
  input  wire [15:0]          arsp_total,
  input  wire [15:0]          arsp_pd_len,

  // AEQ writer handshake and the event it wrote
  input  wire                 evt_fire,
  input  wire [7:0]           evt_code,
  input  wire [ID_W-1:0]      evt_cm_id
  /* verilator lint_on UNUSEDSIGNAL */
);
  localparam int NSRC  = 10;
  localparam int DEPTH = 1 << DEPTH_LOG2;
  localparam int WB    = DATA_W / 8;
  localparam int SEQ_W = 10;       // > frames the RX FIFO and parser can hold (~280)

  // source indices (lowest drains first)
  localparam int S_TXF = 0, S_TXL = 1, S_SYNACK = 2, S_DB = 3, S_DESC = 4, S_PD = 5,
                 S_CQE = 6, S_SYN = 7, S_MPA = 8, S_EVT = 9;

  logic [31:0] now1;
  assign now1 = cycle_count[31:0] + 32'd1;

  function automatic logic [63:0] rec(input logic [31:0] stamp, input logic [7:0] stage,
                                      input logic [23:0] tag);
    rec = {tag, stage, stamp};
  endfunction

  // ------------------------------------------------------------------ SQ / host path
  logic host_job_q, rej_host_q, out_rej_q;
  logic [15:0] rej_port_q;

  // ------------------------------------------------------------------ TX header capture
  logic [7:0] tx_beat_q, tx_beat;
  logic [7:0] b12_q, b13_q, b36_q, b37_q, b40_q, b41_q, b47_q, b51_q;
  logic [31:0] tx_sof_stamp_q;
  logic       tx_eof_q;
  assign tx_beat = tx_sof ? 8'd0 : tx_beat_q;

  logic        synack_vlan;
  logic [7:0]  synack_flags;
  logic [15:0] synack_port;
  assign synack_vlan  = {b12_q, b13_q} == 16'h8100;
  assign synack_flags = synack_vlan ? b51_q : b47_q;
  assign synack_port  = synack_vlan ? {b40_q, b41_q} : {b36_q, b37_q};

  // ------------------------------------------------------------------ RX arrival stamps
  localparam int ARR_DEPTH = 1 << ARR_LOG2;
  logic [31:0]        arr_pend_q;
  logic [31:0]        arr_stamp [ARR_DEPTH];
  logic [SEQ_W-1:0]   arr_seq   [ARR_DEPTH];
  logic [ARR_LOG2:0]  arr_wr_q, arr_rd_q;
  logic [SEQ_W-1:0]   in_seq_q, out_seq_q;
  logic               arr_full, arr_hit;
  logic [31:0]        arr_head;
  assign arr_full = (arr_wr_q - arr_rd_q) == (ARR_LOG2+1)'(ARR_DEPTH);
  assign arr_hit  = (arr_wr_q != arr_rd_q) && (arr_seq[arr_rd_q[ARR_LOG2-1:0]] == out_seq_q);
  assign arr_head = arr_stamp[arr_rd_q[ARR_LOG2-1:0]];

  logic        is_syn, has_pl;
  assign is_syn = rec_tcp && !rec_bad && rec_flags[1] && !rec_flags[4];
  assign has_pl = rec_len != 16'd0;

  logic        mpa_sv_q;
  logic [31:0] mpa_stamp_q;
  logic [15:0] mpa_port_q;
  logic [9:0]  acmd_off_q;
  logic [16:0] mpa_need;
  logic        mpa_done;
  assign mpa_need = 17'd20 + {1'b0, arsp_pd_len};
  assign mpa_done = arsp_fire && arsp_ok && arsp_hdr_valid && ({7'd0, acmd_off_q} < mpa_need)
                 && ({1'b0, arsp_total} >= mpa_need);

  // ------------------------------------------------------------------ events
  logic [NSRC-1:0]    ev_v;
  logic [NSRC*64-1:0] ev_r;
  logic               lost_ev;    // an event whose stamp is missing (arrival FIFO overflow)

  always_comb begin
    ev_v = '0;
    ev_r = '0;
    lost_ev = 1'b0;
    // first / last beat of a reject
    ev_v[S_TXF] = tx_rej_sof;
    ev_r[S_TXF*64 +: 64] = rec(now1, rej_host_q ? bouncer_regs_pkg::PROBE_STAGE_REJ_FIRST_HOST
                                                : bouncer_regs_pkg::PROBE_STAGE_REJ_FIRST_AUTO,
                               {8'd0, rej_port_q});
    ev_v[S_TXL] = tx_fire && tx_tlast && (tx_sof ? tx_rej_sof : out_rej_q);
    ev_r[S_TXL*64 +: 64] = rec(now1, bouncer_regs_pkg::PROBE_STAGE_REJ_LAST,
                               {7'd0, rej_host_q, rej_port_q});
    ev_v[S_SYNACK] = tx_eof_q && (synack_flags & 8'h12) == 8'h12;
    ev_r[S_SYNACK*64 +: 64] = rec(tx_sof_stamp_q, bouncer_regs_pkg::PROBE_STAGE_SYNACK_FIRST,
                                  {8'd0, synack_port});
    ev_v[S_DB] = sq_db;
    ev_r[S_DB*64 +: 64] = rec(cycle_count[31:0], bouncer_regs_pkg::PROBE_STAGE_DOORBELL,
                              {6'd0, sq_db_sq, sq_db_push, sq_db_pi});
    ev_v[S_DESC] = push_take || wqe_rd_last;
    ev_r[S_DESC*64 +: 64] = rec(push_take ? cycle_count[31:0] : now1,
                                bouncer_regs_pkg::PROBE_STAGE_DESC_AVAIL,
                                {6'd0, sq_cur, push_take, sq_cur_ci});
    ev_v[S_PD] = rej_start_fire;
    ev_r[S_PD*64 +: 64] = rec(now1, bouncer_regs_pkg::PROBE_STAGE_PD_READY,
                              {7'd0, host_job_q, rej_start_port});
    ev_v[S_CQE] = cqe_fire;
    ev_r[S_CQE*64 +: 64] = rec(cycle_count[31:0], bouncer_regs_pkg::PROBE_STAGE_CQE_WRITTEN,
                               {6'd0, cqe_sq, 1'b0, cqe_ci});
    ev_v[S_SYN] = rec_fire && is_syn && arr_hit;
    ev_r[S_SYN*64 +: 64] = rec(arr_head, bouncer_regs_pkg::PROBE_STAGE_SYN_IN, {8'd0, rec_sport});
    ev_v[S_MPA] = mpa_done && mpa_sv_q;
    ev_r[S_MPA*64 +: 64] = rec(mpa_stamp_q, bouncer_regs_pkg::PROBE_STAGE_MPA_REQ_LAST,
                               {8'd0, mpa_port_q});
    ev_v[S_EVT] = evt_fire;
    ev_r[S_EVT*64 +: 64] = rec(cycle_count[31:0], bouncer_regs_pkg::PROBE_STAGE_EVENT_WRITTEN,
                               {evt_code, 16'(evt_cm_id)});
    lost_ev = (rec_fire && is_syn && !arr_hit) || (mpa_done && !mpa_sv_q);
  end

  // ------------------------------------------------------------------ holding registers
  logic [NSRC-1:0]    pend_q;
  logic [NSRC*64-1:0] pend_r_q;
  logic [NSRC-1:0]    drain;       // one-hot: the source moved (or dropped) this cycle
  logic               drain_any;
  logic [63:0]        drain_r;
  always_comb begin
    drain   = '0;
    drain_r = '0;
    for (int i = NSRC - 1; i >= 0; i--) begin
      if (pend_q[i]) begin
        drain   = '0;
        drain[i] = 1'b1;
        drain_r = pend_r_q[i*64 +: 64];
      end
    end
  end
  assign drain_any = pend_q != '0;

  // capture FIFO
  logic [63:0]         mem [DEPTH];
  logic [DEPTH_LOG2:0] wr_q, rd_q;
  logic                full, empty, fifo_wr;
  logic [DEPTH_LOG2:0] used;   // the difference at the pointers' width (they wrap)
  assign used    = wr_q - rd_q;
  assign full    = used == (DEPTH_LOG2+1)'(DEPTH);
  assign empty   = wr_q == rd_q;
  assign fifo_wr = drain_any && !full;

  // events lost this cycle: a collision with a full holding register, a record the full FIFO
  // cannot take, or a missing arrival stamp. Counted in three registered steps, off the
  // datapath handshakes: which were lost (lost_v_q), how many (nlost_q), then the saturating
  // add into lost, so lost and overflow follow the events by two cycles.
  localparam int NL = NSRC + 2;
  logic [NSRC-1:0] collide;
  logic [NL-1:0]   lost_v_q;
  logic [4:0]      nlost, nlost_q;
  logic [32:0]     lost_sum;
  assign collide = ev_v & pend_q & ~drain;
  always_comb begin
    nlost = '0;
    for (int i = 0; i < NL; i++) nlost = nlost + 5'(lost_v_q[i]);
  end
  assign lost_sum = {1'b0, lost} + 33'(nlost_q);

  always_ff @(posedge clk) begin
    // ---- host job window, reject start, TX frame kind
    if (hrej_fire) host_job_q <= 1'b1;
    if (hrsp_valid) host_job_q <= 1'b0;
    if (rej_start_fire) begin
      rej_host_q <= host_job_q;
      rej_port_q <= rej_start_port;
    end
    if (tx_sof) begin
      out_rej_q      <= tx_rej_sof;
      tx_sof_stamp_q <= now1;
    end
    tx_eof_q <= tx_fire && tx_tlast;
    if (tx_fire) begin
      tx_beat_q <= (tx_beat == 8'hFF) ? 8'hFF : tx_beat + 8'd1;
      if (tx_beat == 8'(12 / WB)) b12_q <= tx_tdata[8*(12 % WB) +: 8];
      if (tx_beat == 8'(13 / WB)) b13_q <= tx_tdata[8*(13 % WB) +: 8];
      if (tx_beat == 8'(36 / WB)) b36_q <= tx_tdata[8*(36 % WB) +: 8];
      if (tx_beat == 8'(37 / WB)) b37_q <= tx_tdata[8*(37 % WB) +: 8];
      if (tx_beat == 8'(40 / WB)) b40_q <= tx_tdata[8*(40 % WB) +: 8];
      if (tx_beat == 8'(41 / WB)) b41_q <= tx_tdata[8*(41 % WB) +: 8];
      if (tx_beat == 8'(47 / WB)) b47_q <= tx_tdata[8*(47 % WB) +: 8];
      if (tx_beat == 8'(51 / WB)) b51_q <= tx_tdata[8*(51 % WB) +: 8];
    end

    // ---- RX arrival stamps (always on)
    if (rx_in_last) arr_pend_q <= now1;
    if (rx_good) begin
      in_seq_q <= in_seq_q + 1'b1;
      if (!arr_full) begin
        arr_stamp[arr_wr_q[ARR_LOG2-1:0]] <= arr_pend_q;
        arr_seq[arr_wr_q[ARR_LOG2-1:0]]   <= in_seq_q;
        arr_wr_q <= arr_wr_q + 1'b1;
      end
    end
    if (rec_fire) begin
      out_seq_q <= out_seq_q + 1'b1;
      if (arr_hit) arr_rd_q <= arr_rd_q + 1'b1;
      if (has_pl) begin
        mpa_sv_q    <= arr_hit;
        mpa_stamp_q <= arr_head;
        mpa_port_q  <= rec_sport;
      end
    end
    if (acmd_fire) acmd_off_q <= acmd_offset;

    // ---- holding registers and FIFO
    pend_q <= pend_q & ~drain;
    for (int i = 0; i < NSRC; i++) begin
      if (enable && ev_v[i] && (!pend_q[i] || drain[i])) begin
        pend_q[i]            <= 1'b1;
        pend_r_q[i*64 +: 64] <= ev_r[i*64 +: 64];
      end
    end
    if (fifo_wr) begin
      mem[wr_q[DEPTH_LOG2-1:0]] <= drain_r;
      wr_q <= wr_q + 1'b1;
    end
    if (pop && !empty) rd_q <= rd_q + 1'b1;
    lost_v_q <= {lost_ev && enable, drain_any && full, collide & {NSRC{enable}}};
    nlost_q  <= nlost;
    if (nlost_q != 5'd0) begin
      overflow <= 1'b1;
      lost     <= lost_sum[32] ? 32'hFFFF_FFFF : lost_sum[31:0];
    end

    if (rst || clear) begin
      lost_v_q <= '0;
      nlost_q  <= '0;
      pend_q   <= '0;
      wr_q     <= '0;
      rd_q     <= '0;
      overflow <= 1'b0;
      lost     <= '0;
    end
    if (rst) begin
      host_job_q <= 1'b0;
      rej_host_q <= 1'b0;
      rej_port_q <= '0;
      out_rej_q  <= 1'b0;
      tx_beat_q  <= '0;
      tx_eof_q   <= 1'b0;
      arr_wr_q   <= '0;
      arr_rd_q   <= '0;
      in_seq_q   <= '0;
      out_seq_q  <= '0;
      mpa_sv_q   <= 1'b0;
      acmd_off_q <= '0;
    end
  end

  assign head  = empty ? 64'd0 : mem[rd_q[DEPTH_LOG2-1:0]];
  assign count = 8'(used);

endmodule
`default_nettype wire
