# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Alveo U250 (xcu250-figd2104-2L-e): pins, clocks and configuration for a standalone Vivado top
# (a shell of our own, OpenNIC style). Not used by the Vitis flow: there the platform owns every
# pin and clock. Port names are the ones constraints/README.md lists.
# Facts: AMD/Xilinx board files, open-nic-shell constr/au250, corundum fpga_au200.xdc (the U250
# board is the U200's); the same facts are in tb/card/board_facts.json, against which
# tb/card/xdc_check.py checks this file.

# ---- configuration from the QSPI flash (x4, 32-bit addresses, fallback to golden)
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR Yes [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE Yes [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 85.0 [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN Disable [current_design]
set_property BITSTREAM.CONFIG.CONFIGFALLBACK Enable [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN Pullup [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
set_operating_conditions -design_power_budget 160

# ---- PCIe: 100 MHz reference clock (MGTREFCLK0 of quad 226) and PERST#
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP TRUE} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# ---- QSFP28 reference clocks, 156.25 MHz (MGTREFCLK0 of quads 231 and 230). The CMAC places
# its lanes itself (GT_GROUP_SELECT); only the reference clocks are located here.
set_property PACKAGE_PIN M11 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN M10 [get_ports qsfp0_refclk_n]
create_clock -period 6.400 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN T11 [get_ports qsfp1_refclk_p]
set_property PACKAGE_PIN T10 [get_ports qsfp1_refclk_n]
create_clock -period 6.400 -name qsfp1_refclk [get_ports qsfp1_refclk_p]

# ---- QSFP28 sideband: FPGA I/Os on the U250 (1.2 V banks). Slow, asynchronous signals.
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12} [get_ports qsfp0_modsell]
set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12} [get_ports qsfp0_resetl]
set_property -dict {PACKAGE_PIN BE20 IOSTANDARD LVCMOS12 PULLUP TRUE} [get_ports qsfp0_modprsl]
set_property -dict {PACKAGE_PIN BE21 IOSTANDARD LVCMOS12 PULLUP TRUE} [get_ports qsfp0_intl]
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12} [get_ports qsfp0_lpmode]
set_property -dict {PACKAGE_PIN AY20 IOSTANDARD LVCMOS12} [get_ports qsfp1_modsell]
set_property -dict {PACKAGE_PIN BC18 IOSTANDARD LVCMOS12} [get_ports qsfp1_resetl]
set_property -dict {PACKAGE_PIN BC19 IOSTANDARD LVCMOS12 PULLUP TRUE} [get_ports qsfp1_modprsl]
set_property -dict {PACKAGE_PIN AV21 IOSTANDARD LVCMOS12 PULLUP TRUE} [get_ports qsfp1_intl]
set_property -dict {PACKAGE_PIN AV22 IOSTANDARD LVCMOS12} [get_ports qsfp1_lpmode]
set_false_path -to [get_ports {qsfp0_modsell qsfp0_resetl qsfp0_lpmode qsfp1_modsell qsfp1_resetl qsfp1_lpmode}]
set_false_path -from [get_ports {qsfp0_modprsl qsfp0_intl qsfp1_modprsl qsfp1_intl}]
