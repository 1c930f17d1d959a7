// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_tcp_ctrl_builder: bounded model check harness for rtl/tx/bouncer_tcp_ctrl_builder
// (DATA_W 64, PAD_MIN 1).
// Environment (assumed): s_req is held until s_req_ready with every field stable; m_axis_tready
// is free; rst may rise in any cycle and is high in the first one.
// Asserts: m_axis valid held until ready, tdata/tkeep/tlast stable, tvalid low after reset;
// tkeep is contiguous from byte 0 and all ones on every beat but the last; one frame per
// request: requests taken - tlast beats sent stays within the pipeline (A, B, S, O: 4), and no
// beat is offered while no request is pending; a second copy from another initial state agrees
// on m_axis_tvalid, m_axis_tlast and s_req_ready.
// Covers: a frame's tlast beat sent; the pipeline holding its most requests (4).
`default_nettype none
module formal_tcp_ctrl_builder (
  input wire        clk,
  input wire        rst,
  input wire        s_req_valid,
  input wire [1:0]  s_req_kind,
  input wire [47:0] s_req_rem_mac,
  input wire [47:0] s_req_loc_mac,
  input wire        s_req_vlan_en,
  input wire [15:0] s_req_vlan_tci,
  input wire [31:0] s_req_loc_ip,
  input wire [31:0] s_req_rem_ip,
  input wire [7:0]  s_req_tos,
  input wire [7:0]  s_req_ttl,
  input wire [15:0] s_req_ip_id,
  input wire [15:0] s_req_loc_port,
  input wire [15:0] s_req_rem_port,
  input wire [31:0] s_req_seq,
  input wire [31:0] s_req_ack,
  input wire [15:0] s_req_window,
  input wire [15:0] s_req_mss,
  input wire [7:0]  s_req_wscale,
  input wire        s_req_ws_en,
  input wire        m_axis_tready
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  wire        a_ready, b_ready, a_valid, b_valid, a_last, b_last;
  wire [63:0] a_data, b_data;
  wire [7:0]  a_keep, b_keep;

  bouncer_tcp_ctrl_builder #(.DATA_W(64), .PAD_MIN(1)) dut_a (
    .clk(clk), .rst(rst), .s_req_valid(s_req_valid), .s_req_ready(a_ready),
    .s_req_kind(s_req_kind), .s_req_rem_mac(s_req_rem_mac), .s_req_loc_mac(s_req_loc_mac),
    .s_req_vlan_en(s_req_vlan_en), .s_req_vlan_tci(s_req_vlan_tci), .s_req_loc_ip(s_req_loc_ip),
    .s_req_rem_ip(s_req_rem_ip), .s_req_tos(s_req_tos), .s_req_ttl(s_req_ttl),
    .s_req_ip_id(s_req_ip_id), .s_req_loc_port(s_req_loc_port), .s_req_rem_port(s_req_rem_port),
    .s_req_seq(s_req_seq), .s_req_ack(s_req_ack), .s_req_window(s_req_window),
    .s_req_mss(s_req_mss), .s_req_wscale(s_req_wscale), .s_req_ws_en(s_req_ws_en),
    .m_axis_tdata(a_data), .m_axis_tkeep(a_keep), .m_axis_tlast(a_last),
    .m_axis_tvalid(a_valid), .m_axis_tready(m_axis_tready)
  );
  bouncer_tcp_ctrl_builder #(.DATA_W(64), .PAD_MIN(1)) dut_b (
    .clk(clk), .rst(rst), .s_req_valid(s_req_valid), .s_req_ready(b_ready),
    .s_req_kind(s_req_kind), .s_req_rem_mac(s_req_rem_mac), .s_req_loc_mac(s_req_loc_mac),
    .s_req_vlan_en(s_req_vlan_en), .s_req_vlan_tci(s_req_vlan_tci), .s_req_loc_ip(s_req_loc_ip),
    .s_req_rem_ip(s_req_rem_ip), .s_req_tos(s_req_tos), .s_req_ttl(s_req_ttl),
    .s_req_ip_id(s_req_ip_id), .s_req_loc_port(s_req_loc_port), .s_req_rem_port(s_req_rem_port),
    .s_req_seq(s_req_seq), .s_req_ack(s_req_ack), .s_req_window(s_req_window),
    .s_req_mss(s_req_mss), .s_req_wscale(s_req_wscale), .s_req_ws_en(s_req_ws_en),
    .m_axis_tdata(b_data), .m_axis_tkeep(b_keep), .m_axis_tlast(b_last),
    .m_axis_tvalid(b_valid), .m_axis_tready(m_axis_tready)
  );

  formal_axis_check #(.W(348), .MASTER(0)) env_req (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(s_req_valid), .ready(a_ready),
    .payload({s_req_kind, s_req_rem_mac, s_req_loc_mac, s_req_vlan_en, s_req_vlan_tci,
              s_req_loc_ip, s_req_rem_ip, s_req_tos, s_req_ttl, s_req_ip_id, s_req_loc_port,
              s_req_rem_port, s_req_seq, s_req_ack, s_req_window, s_req_mss, s_req_wscale, s_req_ws_en})
  );
  formal_axis_check #(.W(73), .MASTER(1)) chk_m (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_valid), .ready(m_axis_tready),
    .payload({a_last, a_keep, a_data})
  );

  wire req_fire  = s_req_valid && a_ready;
  wire last_fire = a_valid && m_axis_tready && a_last;
  reg [2:0] pending_q;   // requests taken whose tlast beat has not been sent
  always @(posedge clk) begin
    pending_q <= pending_q + {2'd0, req_fire} - {2'd0, last_fire};
    if (rst) pending_q <= 3'd0;
  end

  always @(posedge clk) begin
    if (!init_q) begin
      assert (a_valid == b_valid && a_ready == b_ready);
      if (a_valid) assert (a_last == b_last);
      if (!rst) begin
        assert (pending_q <= 3'd4);   // stages A, B, S and the last beat in O
        if (pending_q == 3'd0) assert (!a_valid);
        if (a_valid) begin
          assert (a_keep[0] && (a_keep & (a_keep + 8'd1)) == 8'd0);
          if (!a_last) assert (a_keep == 8'hFF);
        end
        cover (last_fire);
        cover (pending_q == 3'd4);
      end
    end
  end

endmodule
`default_nettype wire
