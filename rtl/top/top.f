# rtl/top/: bouncer_core, its latency probes and the capture ring. Needs every block list
# above it in rtl/sources.f.
bouncer_probe.sv
bouncer_capture.sv
bouncer_core.sv
