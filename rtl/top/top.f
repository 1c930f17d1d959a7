# rtl/top/: bouncer_core and its latency probes. Needs every block list above it in
# rtl/sources.f.
bouncer_probe.sv
bouncer_core.sv
