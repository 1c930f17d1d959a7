# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Does this Vivado have a licence for the 100G CMAC (cmac_usplus)? Run before a multi-hour link:
#   vivado -mode batch -source scripts/card/check_cmac_license.tcl -tclargs \
#     --part <fpga part> --result <file> [--build-dir DIR]
# Writes one line to --result: "ok", or "missing: <Vivado's message>", or "error: <message>"
# when the probe itself failed for another reason; exits 0 in all three cases (build_xclbin.sh
# reads the file). Vivado checks an IP's licence when the IP is synthesised, implemented and
# written to a bitstream (PG209 and the other IP product guides, "License Checkers"); in the
# v++ link the CMAC is synthesised an hour or more in. This probe synthesises one cmac_usplus
# (xup's configuration: CAUI-4, 4x25G, AXI4-Stream) alone, out of context, in a few minutes.
# tb/card/test_license_check.py runs it under tclsh with stand-ins of the Vivado commands.

proc lc_fail {msg} {
  puts stderr "check_cmac_license.tcl: $msg"
  exit 1
}

set opt(part) ""
set opt(result) ""
set opt(build-dir) ""
set i 0
while {$i < [llength $argv]} {
  set a [lindex $argv $i]
  set key [string range $a 2 end]
  if {[string range $a 0 1] ne "--" || ![info exists opt($key)]} {
    lc_fail "unknown argument '$a'"
  }
  if {$i + 1 >= [llength $argv]} {
    lc_fail "$a needs a value"
  }
  set opt($key) [lindex $argv [expr {$i + 1}]]
  incr i 2
}
foreach key {part result} {
  if {$opt($key) eq ""} {
    lc_fail "--$key is required"
  }
}
set result [file normalize $opt(result)]
if {$opt(build-dir) eq ""} {
  set opt(build-dir) [file join [file dirname $result] license_check]
}
set build [file normalize $opt(build-dir)]

proc lc_write {text} {
  set fh [open $::result w]
  puts $fh $text
  close $fh
  puts "check_cmac_license.tcl: $text"
}

# A message about licences, from the error or the log Vivado wrote for the IP run.
proc lc_license_text {msg} {
  foreach line [split $msg "\n"] {
    if {[regexp -nocase {\mlicen[cs]e} $line]} {
      return [string trim $line]
    }
  }
  return ""
}

file delete -force $build
file mkdir $build
if {[catch {
  create_project -force bouncer_cmac_probe [file join $build project] -part $opt(part)
  create_ip -name cmac_usplus -vendor xilinx.com -library ip -module_name bouncer_cmac_probe \
    -dir [file join $build ip]
  set ip [get_ips bouncer_cmac_probe]
  set_property -dict [list CONFIG.CMAC_CAUI4_MODE {1} CONFIG.NUM_LANES {4x25} \
    CONFIG.USER_INTERFACE {AXIS}] $ip
  generate_target synthesis $ip
} msg]} {
  lc_write "error: $msg"
  exit 0
}
if {[catch {synth_ip $ip} msg]} {
  set lic [lc_license_text $msg]
  if {$lic eq ""} {
    # synth_ip reports the run's failure; the reason is in the run's log
    foreach log [glob -nocomplain -directory $build -types f */*.runs/*/runme.log] {
      set fh [open $log r]
      set lic [lc_license_text [read $fh]]
      close $fh
      if {$lic ne ""} {
        break
      }
    }
  }
  if {$lic ne ""} {
    lc_write "missing: $lic"
  } else {
    lc_write "error: [string trim [lindex [split $msg "\n"] 0]]"
  }
  catch {close_project -delete}
  exit 0
}
catch {close_project -delete}
lc_write "ok"
exit 0
