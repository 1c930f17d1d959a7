# rtl/common/: the clock-domain crossings of the kernel top (reset synchroniser, dual-clock
# stream FIFO; needs rtl/common/common.f before it).
bouncer_reset_sync.sv
bouncer_axis_async_fifo.sv
