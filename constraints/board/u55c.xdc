# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Alveo U55C (xcu55c-fsvh2892-2L-e): pins, clocks and configuration for a standalone Vivado top
# (a shell of our own, OpenNIC style). Not used by the Vitis flow: there the platform owns every
# pin and clock. Port names are the ones constraints/README.md lists. The QSFP sideband signals
# are not FPGA pins on the U55C: the card's satellite controller (CMS) drives them.
# Facts: AMD/Xilinx board files, open-nic-shell constr/au55c (AR72926 for the HBM trip pin); the
# same facts are in tb/card/board_facts.json, against which tb/card/xdc_check.py checks this file.

# ---- configuration from the QSPI flash (x4, 32-bit addresses, fallback to golden)
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR Yes [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE Yes [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN Disable [current_design]
set_property BITSTREAM.CONFIG.CONFIGFALLBACK Enable [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN Pullup [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
set_operating_conditions -design_power_budget 100

# ---- PCIe: 100 MHz reference clock (x16) and PERST#
set_property PACKAGE_PIN AR15 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AR14 [get_ports pcie_refclk_n]
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]
set_property -dict {PACKAGE_PIN BF41 IOSTANDARD LVCMOS18} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# ---- QSFP28 reference clocks, 161.1328125 MHz from the SI5394 (banks 130 and 131, for GTY
# X0Y24-27 and X0Y28-31). The CMAC places its lanes itself; only the reference clocks are located.
set_property PACKAGE_PIN AD42 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN AD43 [get_ports qsfp0_refclk_n]
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN AB42 [get_ports qsfp1_refclk_p]
set_property PACKAGE_PIN AB43 [get_ports qsfp1_refclk_n]
create_clock -period 6.206 -name qsfp1_refclk [get_ports qsfp1_refclk_p]

# ---- HBM temperature trip: the design must hold it low (the pull-down covers configuration)
set_property -dict {PACKAGE_PIN BE45 IOSTANDARD LVCMOS18 PULLDOWN TRUE} [get_ports hbm_cattrip]
set_false_path -to [get_ports hbm_cattrip]
