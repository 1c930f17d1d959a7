# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Alveo U280 (xcu280-fsvh2892-2L-e): pins, clocks and configuration for a standalone Vivado top
# (a shell of our own, OpenNIC style). Not used by the Vitis flow: there the platform owns every
# pin and clock. Port names are the ones constraints/README.md lists. The QSFP sideband signals
# are not FPGA pins on the U280: the card's satellite controller (CMS) drives them.
# Facts: AMD/Xilinx board files, open-nic-shell constr/au280, corundum fpga_au280.xdc; the same
# facts are in tb/card/board_facts.json, against which tb/card/xdc_check.py checks this file.

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

# ---- PCIe: 100 MHz reference clock (MGTREFCLK0 of quad 225, x16) and PERST#
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BH26 IOSTANDARD LVCMOS18 PULLUP TRUE} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# ---- QSFP28 reference clocks, 156.25 MHz from the SI570 (MGTREFCLK0 of quads 134 and 135).
# The CMAC places its lanes itself (GT_GROUP_SELECT); only the reference clocks are located.
set_property PACKAGE_PIN T42 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN T43 [get_ports qsfp0_refclk_n]
create_clock -period 6.400 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN P42 [get_ports qsfp1_refclk_p]
set_property PACKAGE_PIN P43 [get_ports qsfp1_refclk_n]
create_clock -period 6.400 -name qsfp1_refclk [get_ports qsfp1_refclk_p]

# ---- HBM temperature trip: the design must hold it low (the pull-down covers configuration)
set_property -dict {PACKAGE_PIN D32 IOSTANDARD LVCMOS18 PULLDOWN TRUE} [get_ports hbm_cattrip]
set_false_path -to [get_ports hbm_cattrip]
