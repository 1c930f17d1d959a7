# rtl/rx/: RX parser and MPA request reassembly. Needs rtl/packages.f before it.
bouncer_rx_parser.sv
bouncer_mpa_req_asm.sv
