# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Stand-ins for the Vivado commands package_kernel.tcl uses, for tclsh (no Vivado here).
#   tclsh mock_vivado.tcl LOG SCRIPT ARGS...
# Each Vivado command appends one Tcl list (the command and its arguments) to LOG and returns
# what the real command would return in a form the script can pass back (object handles are
# plain names). The stand-in of ipx::package_project infers bus interfaces the way Vivado does
# by name only: ap_clk, ap_rst_n and the AXI ports (s_axi_*, m_axi_*, s_axis_*, m_axis_*). Any
# other clock or reset (ap_clk_2, ap_rst_n_2) exists only once ipx::infer_bus_interface has
# named it. MOCK_MISSING (environment, space-separated) names bus interfaces or parameters the
# stand-in "did not infer", to test the script's checks.
# The IP commands of check_cmac_license.tcl (create_ip, get_ips, generate_target, synth_ip) are
# here too. MOCK_SYNTH_FAIL makes synth_ip fail: "license" with a licence message in the error,
# "license-log" with a generic error and the licence message in the run's runme.log, "other"
# with an error that has nothing to do with licences.
# package_xo writes the .xo (a copy of the kernel.xml it was given) so the script's own check
# of its output runs too.

set mock_log [lindex $argv 0]
set mock_script [lindex $argv 1]
set argv [lrange $argv 2 end]
set argc [llength $argv]
set mock_fh [open $mock_log w]
set mock_missing {}
if {[info exists ::env(MOCK_MISSING)]} {
  set mock_missing $::env(MOCK_MISSING)
}
set mock_xdc {}

proc mock_rec {args} {
  puts $::mock_fh [list {*}$args]
  flush $::mock_fh
}
proc mock_opt {args name} {
  set i [lsearch -exact $args $name]
  if {$i < 0} {
    return ""
  }
  return [lindex $args [expr {$i + 1}]]
}

proc create_project {args} {
  mock_rec create_project {*}$args
  set pos [lsearch -all -inline -not -glob $args -*]
  set ::mock_project [lindex $pos 0]
  set ::mock_project_dir [lindex $pos 1]
  return {}
}
foreach cmd {update_compile_order close_project set_property} {
  proc $cmd {args} "mock_rec $cmd {*}\$args; return {}"
}
proc current_fileset {args} {
  mock_rec current_fileset {*}$args
  return sources_1
}
proc add_files {args} {
  mock_rec add_files {*}$args
  if {[mock_opt $args -fileset] eq "constrs_1"} {
    lappend ::mock_xdc [lindex $args end]
  }
  return {}
}
proc package_xo {args} {
  mock_rec package_xo {*}$args
  file copy -force [mock_opt $args -kernel_xml] [mock_opt $args -xo_path]
  return {}
}

set mock_busifs {}
set mock_kernel_ports {ap_clk ap_rst_n ap_clk_2 ap_rst_n_2 s_axi_control m_axi_host s_axis_rx m_axis_tx}
namespace eval ipx {}
proc ipx::package_project {args} {
  mock_rec ipx::package_project {*}$args
  foreach p $::mock_kernel_ports {
    if {[regexp {^(ap_clk|ap_rst_n|[sm]_axis?_\w+)$} $p]} {
      lappend ::mock_busifs $p
    }
  }
  return {}
}
proc ipx::infer_bus_interface {name vlnv args} {
  mock_rec ipx::infer_bus_interface $name $vlnv {*}$args
  if {$name ni $::mock_kernel_ports} {
    error "ERROR: \[IP_Flow 19-xxxx\] (mock) no port $name"
  }
  if {$name ni $::mock_busifs} {
    lappend ::mock_busifs $name
  }
  return bi:$name
}
proc ipx::get_bus_parameters {name args} {
  mock_rec ipx::get_bus_parameters $name {*}$args
  return {}
}
proc ipx::add_bus_parameter {name busif args} {
  mock_rec ipx::add_bus_parameter $name $busif {*}$args
  return bp:[string range $busif 3 end]:$name
}
foreach cmd {unload_core edit_ip_in_project associate_bus_interfaces
             create_xgui_files update_checksums check_integrity save_core} {
  proc ipx::$cmd {args} "mock_rec ipx::$cmd {*}\$args; return {}"
}
proc ipx::current_core {args} {
  mock_rec ipx::current_core {*}$args
  return core0
}
foreach {cmd prefix} {get_user_parameters up get_hdl_parameters hp} {
  proc ipx::$cmd {name args} "
    mock_rec ipx::$cmd \$name {*}\$args
    if {\$name in \$::mock_missing} { return {} }
    return $prefix:\$name
  "
}
proc ipx::get_bus_interfaces {name args} {
  mock_rec ipx::get_bus_interfaces $name {*}$args
  if {$name in $::mock_missing || $name ni $::mock_busifs} {
    return {}
  }
  return bi:$name
}

# IP commands (check_cmac_license.tcl)
proc create_ip {args} {
  mock_rec create_ip {*}$args
  set ::mock_ip [mock_opt $args -module_name]
  return {}
}
proc get_ips {name args} {
  mock_rec get_ips $name {*}$args
  return ip:$name
}
proc generate_target {args} {
  mock_rec generate_target {*}$args
  return {}
}
proc synth_ip {args} {
  mock_rec synth_ip {*}$args
  set how ""
  if {[info exists ::env(MOCK_SYNTH_FAIL)]} {
    set how $::env(MOCK_SYNTH_FAIL)
  }
  switch -- $how {
    license {
      error "ERROR: (mock) \[Common 17-69\] Command failed: synth_ip: no valid license for feature cmac_usplus"
    }
    license-log {
      set dir [file join $::mock_project_dir $::mock_project.runs ${::mock_ip}_synth_1]
      file mkdir $dir
      set fh [open [file join $dir runme.log] w]
      puts $fh "INFO: (mock) starting synthesis"
      puts $fh "ERROR: (mock) \[Common 17-345\] A valid license was not found for feature 'cmac_usplus'"
      close $fh
      error "ERROR: (mock) \[Vivado 12-4473\] Run ${::mock_ip}_synth_1 failed"
    }
    other {
      error "ERROR: (mock) \[Synth 8-439\] module 'nothing' not found"
    }
  }
  return {}
}
proc ipx::get_memory_maps {name args} {
  mock_rec ipx::get_memory_maps $name {*}$args
  return mm:$name
}
proc ipx::get_address_blocks {args} {
  mock_rec ipx::get_address_blocks {*}$args
  return ab:reg0
}
proc ipx::get_file_groups {args} {
  mock_rec ipx::get_file_groups {*}$args
  return {fg:synthesis fg:implementation}
}
proc ipx::get_files {args} {
  mock_rec ipx::get_files {*}$args
  set out {}
  foreach f $::mock_xdc {
    lappend out file:[file tail $f]
  }
  return $out
}

set rc [catch {source $mock_script} msg]
close $mock_fh
if {$rc} {
  puts stderr "mock_vivado: $msg"
  exit 1
}
exit 0
