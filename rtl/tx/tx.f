# rtl/tx/: TX frame builders and their arbiter. Needs rtl/packages.f and rtl/common/common.f
# before it.
bouncer_mpa_reject_builder.sv
bouncer_tcp_ctrl_builder.sv
bouncer_arp_responder.sv
bouncer_tx_arb.sv
