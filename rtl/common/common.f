# rtl/common/: blocks shared by the others (needs rtl/packages.f before it).
bouncer_rr_arbiter.sv
bouncer_eq_sliced.sv
bouncer_axis_frame_fifo.sv
