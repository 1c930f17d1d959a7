# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Stand-ins for the Vivado commands package_kernel.tcl uses, for tclsh (no Vivado here).
#   tclsh mock_vivado.tcl LOG SCRIPT ARGS...
# Each Vivado command appends one Tcl list (the command and its arguments) to LOG and returns
# what the real command would return in a form the script can pass back (object handles are
# plain names). MOCK_MISSING (environment, space-separated) names bus interfaces or parameters
# the stand-in of ipx::package_project "did not infer", to test the script's checks.
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

foreach cmd {create_project update_compile_order close_project set_property} {
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

namespace eval ipx {}
foreach cmd {package_project unload_core edit_ip_in_project associate_bus_interfaces
             create_xgui_files update_checksums check_integrity save_core} {
  proc ipx::$cmd {args} "mock_rec ipx::$cmd {*}\$args; return {}"
}
proc ipx::current_core {args} {
  mock_rec ipx::current_core {*}$args
  return core0
}
foreach {cmd prefix} {get_user_parameters up get_hdl_parameters hp get_bus_interfaces bi} {
  proc ipx::$cmd {name args} "
    mock_rec ipx::$cmd \$name {*}\$args
    if {\$name in \$::mock_missing} { return {} }
    return $prefix:\$name
  "
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
