# rtl/kernel/: the Vitis RTL-kernel top. Needs the rest of rtl/sources.f before it.
bouncer_kernel.sv
