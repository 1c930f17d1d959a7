# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Clock-domain crossings of bouncer_kernel (rtl/kernel/bouncer_kernel.sv) with ASYNC_STREAMS = 1:
# the streams run on ap_clk_2 (CMAC user clock, 322.27 MHz), the core on ap_clk (250-300 MHz).
# package_kernel.tcl packages this file into the kernel IP (processing order LATE: the clocks it
# relies on come from the platform) when --async-streams 1; a standalone Vivado top reads it
# scoped to the bouncer_kernel instance (read_xdc -ref bouncer_kernel). It has no pins, clocks or
# I/O settings: the platform (or the top's own XDC, constraints/board/) owns those.
# tb/card/xdc_check.py checks it: Tcl syntax, XDC commands only, and every -filter pattern must
# name a register or instance of the RTL, so renaming a synchroniser fails the test.
#
# What crosses (rtl/common/bouncer_axis_async_fifo.sv, two instances u_rx_cdc and u_tx_cdc):
#   fcnt_gray_q  -> fcnt_gray_sync_q1   committed-frame count, Gray code, write -> read clock
#   rd_gray_q    -> rd_gray_sync_q1     read pointer, Gray code, read -> write clock
#   mem -> ram_q, last_mem -> rd_last_q
#                                       RAM written on the write clock, read on the read clock
#                                       (a fabric path when it maps to LUTRAM; last_mem always
#                                       does, in 64-entry banks g_lbank[*]); an entry is used
#                                       only after its frame count has crossed, so the data is
#                                       stable for at least two read-clock cycles before the
#                                       flop that uses it loads it
# and the asynchronous assertion of the reset synchronisers (rtl/common/bouncer_reset_sync.sv,
# rst_sync_q): ap_rst_n && ap_rst_n_2 reaches the preset pins of both domains' flops.
#
# Why set_max_delay -datapath_only and no set_clock_groups: Vivado gives clock groups (and false
# paths) precedence over set_max_delay, so declaring ap_clk and ap_clk_2 asynchronous would leave
# the crossings without any bound. Each crossing gets a datapath-only bound instead: 3.000 ns,
# below both clock periods (3.103 ns at 322.27 MHz, 3.333-4.000 ns for ap_clk). If either clock
# runs above 333 MHz, lower the numbers.
# Why set_bus_skew as well: this file does not declare the clocks asynchronous, but a platform
# may (its own set_clock_groups covers every path between its clocks, ours included), and then
# the set_max_delay bounds are void. set_bus_skew neither overrides nor is overridden by clock
# groups, false paths or max delays (UG903, "Exceptions Priority"), so the Gray-coded buses
# keep their guarantee whatever the platform says: the bits of one bus reach the first
# synchroniser flop within 3.000 ns of each other, less than one period of the reading clock,
# so the reader samples at most one bit in transition and sees either the old or the new value
# (UG903 "set_bus_skew Example Two": the skew of a Gray-coded bus at most one destination
# period, with set_max_delay -datapath_only kept to bound the latency). The RAM paths carry no
# skew bound: their data is held stable for two read-clock cycles by the frame count.

# Two-flop synchronisers: keep each pair together, no retiming, no shift-register extraction
# (the RTL carries the same attribute).
set_property ASYNC_REG TRUE [get_cells -hier -filter {NAME =~ *_sync_q* && IS_SEQUENTIAL}]

# RX FIFO: written on ap_clk_2, read on ap_clk
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *u_rx_cdc/fcnt_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_rx_cdc/fcnt_gray_sync_q1_reg*}] 3.000
set_bus_skew -from [get_cells -hier -filter {NAME =~ *u_rx_cdc/fcnt_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_rx_cdc/fcnt_gray_sync_q1_reg*}] 3.000
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *u_rx_cdc/rd_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_rx_cdc/rd_gray_sync_q1_reg*}] 3.000
set_bus_skew -from [get_cells -hier -filter {NAME =~ *u_rx_cdc/rd_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_rx_cdc/rd_gray_sync_q1_reg*}] 3.000
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *u_rx_cdc/*mem_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_rx_cdc/ram_q_reg* || NAME =~ *u_rx_cdc/rd_last_q_reg*}] 3.000

# TX FIFO: written on ap_clk, read on ap_clk_2
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *u_tx_cdc/fcnt_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_tx_cdc/fcnt_gray_sync_q1_reg*}] 3.000
set_bus_skew -from [get_cells -hier -filter {NAME =~ *u_tx_cdc/fcnt_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_tx_cdc/fcnt_gray_sync_q1_reg*}] 3.000
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *u_tx_cdc/rd_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_tx_cdc/rd_gray_sync_q1_reg*}] 3.000
set_bus_skew -from [get_cells -hier -filter {NAME =~ *u_tx_cdc/rd_gray_q_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_tx_cdc/rd_gray_sync_q1_reg*}] 3.000
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *u_tx_cdc/*mem_reg*}] \
    -to [get_cells -hier -filter {NAME =~ *u_tx_cdc/ram_q_reg* || NAME =~ *u_tx_cdc/rd_last_q_reg*}] 3.000

# Reset synchronisers: assertion is asynchronous by design (release is synchronised by the
# flops themselves), so the path into their preset pins is not timed.
set_false_path -to [get_pins -of_objects [get_cells -hier -filter {NAME =~ *u_rst*/rst_sync_q_reg*}] -filter {REF_PIN_NAME == PRE}]
