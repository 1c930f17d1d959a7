# The SystemVerilog packages, first in every list of sources that uses them: the register map
# (generated from regs/bouncer.toml) and the shared helper functions.
host/bouncer_regs_pkg.sv
common/bouncer_util_pkg.sv
