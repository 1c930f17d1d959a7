# rtl/rx/: RX port queues (SYNs apart), RX parser and MPA request reassembly. Needs
# rtl/packages.f before it.
bouncer_rx_syn_class.sv
bouncer_rx_frame_ring.sv
bouncer_rx_prio_fifo.sv
bouncer_rx_parser.sv
bouncer_mpa_req_asm.sv
