#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The XDC checker rejects broken constraints. Each case takes one of our real XDC files, breaks
one thing, and asserts that xdc_check reports exactly that problem (and that the unbroken file is
clean, so the case proves the checker, not a typo in the file)."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import xdc_check  # noqa: E402

with open(os.path.join(HERE, "board_facts.json")) as f:
    FACTS = json.load(f)


def board_text(card):
    with open(os.path.join(ROOT, "constraints", "board", f"{card}.xdc")) as f:
        return f.read()


class Board(unittest.TestCase):
    def errors(self, card, text):
        return xdc_check.check_board(f"{card}.xdc", text, FACTS[card])

    def broken(self, card, old, new, expected, count=1):
        text = board_text(card)
        self.assertEqual(self.errors(card, text), [], "the real file must be clean")
        self.assertIn(old, text, "the mutation must apply")
        errs = self.errors(card, text.replace(old, new, count))
        self.assertTrue(errs, f"'{old}' -> '{new}' was not rejected")
        self.assertTrue(any(expected in e for e in errs), f"expected '{expected}' in {errs}")
        return errs

    def test_real_files_clean(self):
        for card in FACTS:
            if card.startswith("_"):
                continue
            self.assertEqual(self.errors(card, board_text(card)), [], card)

    # --- Tcl syntax
    def test_unclosed_bracket(self):
        self.broken("u250", "[get_ports pcie_refclk_p]\n", "[get_ports pcie_refclk_p\n", "'[' is never closed")

    def test_unclosed_brace(self):
        self.broken("u250", "{PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP TRUE}", "{PACKAGE_PIN BD21 IOSTANDARD LVCMOS12 PULLUP TRUE", "'{' is never closed")

    def test_stray_close_bracket(self):
        self.broken("u280", "[get_ports hbm_cattrip]\nset_false_path", "[get_ports hbm_cattrip]]\nset_false_path", "']' without '['")

    def test_unclosed_quote(self):
        self.broken("u55c", "-name qsfp0_refclk", '-name "qsfp0_refclk', "'\"' is never closed")

    def test_unknown_command(self):
        self.broken("u280", "set_false_path -from", "set_falsepath -from", "unknown or unexpected command 'set_falsepath'")

    def test_unknown_query(self):
        self.broken("u280", "[get_ports pcie_perst_n]\nset_false", "[get_port pcie_perst_n]\nset_false", "unknown or unexpected command 'get_port'")

    def test_unknown_option(self):
        self.broken("u250", "create_clock -period 10.000", "create_clock -periodd 10.000", "unknown option -periodd")

    def test_wrong_arity(self):
        self.broken("u250", "set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]", "set_property PACKAGE_PIN [get_ports pcie_refclk_p]", "2 arguments, expected 3")

    # --- values
    def test_negative_period(self):
        self.broken("u250", "-period 10.000", "-period -10.000", "needs a positive -period")

    def test_zero_period(self):
        self.broken("u55c", "-period 6.206", "-period 0", "needs a positive -period")

    def test_not_a_ball(self):
        self.broken("u250", "PACKAGE_PIN AM10", "PACKAGE_PIN AI10", "is not a ball of package figd2104")

    def test_ball_outside_grid(self):
        # BG is row 47: the U250's 46x46 grid ends at BF; the U280's 54x54 one has it
        self.broken("u250", "PACKAGE_PIN BD21", "PACKAGE_PIN BG21", "is not a ball of package figd2104")
        self.broken("u280", "PACKAGE_PIN T42", "PACKAGE_PIN T55", "is not a ball of package fsvh2892")

    def test_pin_used_twice(self):
        self.broken("u250", "PACKAGE_PIN BE17", "PACKAGE_PIN BE16", "pin BE16 used by qsfp0_modsell and qsfp0_resetl")

    def test_unknown_iostandard(self):
        self.broken("u280", "IOSTANDARD LVCMOS18 PULLUP", "IOSTANDARD LVCMOS33 PULLUP", "unknown IOSTANDARD LVCMOS33")

    # --- against the card's facts
    def test_missing_iostandard(self):
        self.broken("u250", "{PACKAGE_PIN BD18 IOSTANDARD LVCMOS12}", "{PACKAGE_PIN BD18}", "qsfp0_lpmode: located on BD18 without an IOSTANDARD")

    def test_iostandard_on_gt_refclk(self):
        self.broken("u55c", "set_property PACKAGE_PIN AD42 [get_ports qsfp0_refclk_p]",
                    "set_property -dict {PACKAGE_PIN AD42 IOSTANDARD LVDS} [get_ports qsfp0_refclk_p]",
                    "a GT reference-clock pin takes no IOSTANDARD")

    def test_wrong_bank_voltage(self):
        self.broken("u250", "{PACKAGE_PIN BD21 IOSTANDARD LVCMOS12", "{PACKAGE_PIN BD21 IOSTANDARD LVCMOS18", "the bank needs LVCMOS12")

    def test_wrong_pin(self):
        self.broken("u280", "PACKAGE_PIN BH26", "PACKAGE_PIN BH27", "pcie_perst_n: on BH27, the card has it on BH26")

    def test_missing_pull(self):
        self.broken("u55c", " PULLDOWN TRUE}", "}", "hbm_cattrip: pull none, expected PULLDOWN")

    def test_port_not_located(self):
        self.broken("u280", "set_property PACKAGE_PIN P43 [get_ports qsfp1_refclk_n]\n", "", "qsfp1_refclk_n (P43) is not located")

    def test_port_not_in_facts(self):
        self.broken("u280", "[get_ports hbm_cattrip]\nset_false_path", "[get_ports hbm_trip]\nset_false_path", "hbm_trip on D32: not a port of the card's facts")

    def test_wrong_clock_period(self):
        self.broken("u55c", "-period 6.206 -name qsfp1", "-period 6.400 -name qsfp1", "qsfp1_refclk_p: period 6.4 ns, 161.1328125 MHz is 6.206 ns")

    def test_missing_clock(self):
        self.broken("u250", "create_clock -period 6.400 -name qsfp1_refclk [get_ports qsfp1_refclk_p]\n", "", "qsfp1_refclk_p: no create_clock")

    def test_clock_on_non_clock(self):
        self.broken("u250", "set_false_path -from [get_ports pcie_perst_n]", "create_clock -period 10 [get_ports pcie_perst_n]", "create_clock on pcie_perst_n")

    def test_bitstream_property_value(self):
        self.broken("u55c", "CONFIGRATE 63.8", "CONFIGRATE 85.0", "BITSTREAM.CONFIG.CONFIGRATE is 85.0, expected 63.8")

    def test_bitstream_property_missing(self):
        self.broken("u250", "set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR Yes [current_design]\n", "", "BITSTREAM.CONFIG.SPI_32BIT_ADDR is not set")

    def test_bitstream_property_object(self):
        self.broken("u280", "CONFIG_MODE SPIx4 [current_design]", "CONFIG_MODE SPIx4 [get_ports pcie_perst_n]", "CONFIG_MODE belongs on [current_design]")

    def test_power_budget(self):
        self.broken("u280", "-design_power_budget 160", "-design_power_budget 100", "design power budget 100.0, expected 160")


KERNEL_RTL = """
module bouncer_axis_async_fifo (input logic clk);
  logic [4:0] wr_ptr_gray_q, wr_ptr_gray_sync_q1, wr_ptr_gray_sync_q2;
  logic [71:0] mem_q [0:15];
endmodule
"""
KERNEL_XDC = """
set_property ASYNC_REG TRUE [get_cells -hier -filter {NAME =~ *_sync_q* && IS_SEQUENTIAL}]
set_max_delay -datapath_only -from [get_cells -hier -filter {NAME =~ *wr_ptr_gray_q_reg*}] \\
    -to [get_cells -hier -filter {NAME =~ *wr_ptr_gray_sync_q1_reg*}] 3.000
set_bus_skew -from [get_cells -hier -filter {NAME =~ *wr_ptr_gray_q_reg*}] \\
    -to [get_cells -hier -filter {NAME =~ *wr_ptr_gray_sync_q1_reg*}] 3.000
set_false_path -to [get_cells -hier -filter {ORIG_REF_NAME == bouncer_axis_async_fifo && NAME =~ *_sync_q1_reg*}]
"""


class Kernel(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.NamedTemporaryFile("w", suffix=".sv", delete=False)
        self.tmp.write(KERNEL_RTL)
        self.tmp.close()

    def tearDown(self):
        os.unlink(self.tmp.name)

    def errors(self, text):
        return xdc_check.check_kernel("k.xdc", text, [self.tmp.name])

    def broken(self, old, new, expected):
        self.assertEqual(self.errors(KERNEL_XDC), [])
        self.assertIn(old, KERNEL_XDC)
        errs = self.errors(KERNEL_XDC.replace(old, new))
        self.assertTrue(any(expected in e for e in errs), f"expected '{expected}' in {errs}")

    def test_pattern_matches_nothing(self):
        self.broken("*wr_ptr_gray_sync_q1_reg*", "*wr_gray_sync_q1_reg*", "NAME =~ *wr_gray_sync_q1_reg*: matches nothing in the RTL")

    def test_module_matches_nothing(self):
        self.broken("ORIG_REF_NAME == bouncer_axis_async_fifo", "ORIG_REF_NAME == bouncer_async_fifo", "matches nothing in the RTL")

    def test_unknown_filter_property(self):
        self.broken("IS_SEQUENTIAL", "IS_SEQ", "unknown property or term 'IS_SEQ'")

    def test_pins_do_not_belong(self):
        self.broken("set_false_path -to", "set_property PACKAGE_PIN A1 [get_ports x]\nset_false_path -to", "property PACKAGE_PIN does not belong in a kernel file")

    def test_no_clocks(self):
        self.broken("set_false_path -to", "create_clock -period 3.2 [get_ports ap_clk]\nset_false_path -to", "the platform owns clocks")

    def test_no_clock_groups(self):
        self.broken("set_false_path -to", "set_clock_groups -asynchronous -group [get_clocks a] -group [get_clocks b]\nset_false_path -to",
                    "set_clock_groups in the kernel file")

    def test_gray_crossing_needs_bus_skew(self):
        self.broken("set_bus_skew -from", "set_max_delay -datapath_only -from",
                    "Gray-coded crossing without set_bus_skew on the same -from/-to")

    def test_bus_skew_on_other_points(self):
        self.broken("set_bus_skew -from [get_cells -hier -filter {NAME =~ *wr_ptr_gray_q_reg*}]",
                    "set_bus_skew -from [get_cells -hier -filter {NAME =~ *wr_ptr_gray_q_reg[0]*}]",
                    "Gray-coded crossing without set_bus_skew")

    def test_delay_positive(self):
        self.broken("] 3.000", "] -3.000", "delay must be a positive number")


if __name__ == "__main__":
    unittest.main(verbosity=1)
