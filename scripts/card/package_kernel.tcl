# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Package the Bouncer RTL as a Vitis RTL kernel (.xo), user-managed control.
#   vivado -mode batch -source scripts/card/package_kernel.tcl -tclargs \
#     --root <repo> --xo <out.xo> --part <fpga part> [--width 512|64] [--async-streams 0|1] \
#     [--ctx-depth-log2 N] [--build-dir DIR]
# build_xclbin.sh runs it. Needs Vivado 2022.1/2022.2; tb/card/test_package_kernel.py runs it
# under tclsh against recording stand-ins of the Vivado commands (no Vivado on the CI machine).
#
# What it does:
#   1. a Vivado project with the sources of rtl/sources.f (the block lists it names, in order),
#      top bouncer_kernel;
#      with --async-streams 1 also constraints/kernel/bouncer_kernel.xdc (the CDC constraints);
#   2. ipx::package_project, which infers ap_clk, ap_rst_n and the AXI interfaces from their
#      names; the second clock and reset (ap_clk_2, ap_rst_n_2) inferred explicitly, as AMD's
#      two-clock RTL kernel example does (Vitis_Accel_Examples rtl_kernels/rtl_vadd_2clks,
#      package_kernel.tcl), both resets ACTIVE_LOW; then the kernel properties Vitis wants:
#      sdx_kernel, user-managed control, the parameter values, every bus interface associated
#      with its clock:
#        ap_clk   : s_axi_control, m_axi_host, and the streams when --async-streams 0
#        ap_clk_2 : s_axis_rx, m_axis_tx when --async-streams 1 (unverified: UG1393 wants every
#                   kernel interface on ap_clk; kept for a CMAC kernel that exports its MAC clock)
#   3. package_xo with scripts/card/kernel.xml (stream widths set to --width).

proc bk_fail {msg} {
  puts stderr "package_kernel.tcl: $msg"
  exit 1
}

# ---- arguments
set opt(root) ""
set opt(xo) ""
set opt(part) ""
set opt(width) 512
set opt(async-streams) 0
set opt(ctx-depth-log2) 10
set opt(build-dir) ""
set i 0
while {$i < [llength $argv]} {
  set a [lindex $argv $i]
  set key [string range $a 2 end]
  if {[string range $a 0 1] ne "--" || ![info exists opt($key)]} {
    bk_fail "unknown argument '$a'"
  }
  if {$i + 1 >= [llength $argv]} {
    bk_fail "$a needs a value"
  }
  set opt($key) [lindex $argv [expr {$i + 1}]]
  incr i 2
}
foreach key {root xo part} {
  if {$opt($key) eq ""} {
    bk_fail "--$key is required"
  }
}
if {$opt(width) ni {64 512}} {
  bk_fail "--width must be 64 or 512"
}
if {$opt(async-streams) ni {0 1}} {
  bk_fail "--async-streams must be 0 or 1"
}
if {![string is integer -strict $opt(ctx-depth-log2)]} {
  bk_fail "--ctx-depth-log2 must be a number"
}
set root [file normalize $opt(root)]
set xo [file normalize $opt(xo)]
if {$opt(build-dir) eq ""} {
  set opt(build-dir) [file join [file dirname $xo] package]
}
set build [file normalize $opt(build-dir)]
set kernel bouncer_kernel
set here [file join $root scripts card]
set async $opt(async-streams)

# ---- sources: rtl/sources.f in its order (packages first), read the way Verilator's -F reads
# a list: one source a line, blank lines and # or // comments skipped, paths relative to the
# list's directory, "-F other.f" read in place (rtl/packages.f and the block lists)
proc bk_read_f {path} {
  if {![file exists $path]} {
    bk_fail "source list $path not found"
  }
  set dir [file dirname $path]
  set fh [open $path r]
  set lines [split [read $fh] "\n"]
  close $fh
  set files {}
  foreach line $lines {
    regsub {(#|//).*$} $line "" line
    set line [string trim $line]
    if {$line eq ""} {
      continue
    }
    if {[regexp {^-F\s+(.+)$} $line -> inc]} {
      lappend files {*}[bk_read_f [file normalize [file join $dir $inc]]]
    } elseif {[string index $line 0] eq "-"} {
      bk_fail "$path: unsupported option '$line' (only -F)"
    } else {
      set f [file normalize [file join $dir $line]]
      if {![file exists $f]} {
        bk_fail "source $f (from $path) not found"
      }
      lappend files $f
    }
  }
  return $files
}
set rtl [file join $root rtl]
set srcs [bk_read_f [file join $rtl sources.f]]
if {[lsearch -glob $srcs */${kernel}.sv] < 0} {
  bk_fail "rtl/sources.f lists no ${kernel}.sv"
}
set xdc [file join $root constraints kernel bouncer_kernel.xdc]
set params [list DATA_W $opt(width) CTX_DEPTH_LOG2 $opt(ctx-depth-log2) ASYNC_STREAMS $async]

# ---- 1. project
file delete -force $build
file mkdir $build
create_project -force ${kernel}_pkg [file join $build project] -part $opt(part)
add_files -norecurse $srcs
set generic {}
foreach {name value} $params {
  lappend generic "$name=$value"
}
set_property generic $generic [current_fileset]
set_property top $kernel [current_fileset]
if {$async} {
  add_files -fileset constrs_1 -norecurse $xdc
}
update_compile_order -fileset sources_1

# ---- 2. IP with the kernel properties
set ipdir [file join $build ip]
ipx::package_project -root_dir $ipdir -vendor bouncer -library kernel -taxonomy /KernelIP \
  -import_files -set_current false
ipx::unload_core [file join $ipdir component.xml]
ipx::edit_ip_in_project -upgrade true -name ${kernel}_edit -directory [file join $build edit] \
  [file join $ipdir component.xml]
set core [ipx::current_core]
set_property core_revision 1 $core
set_property sdx_kernel true $core
set_property sdx_kernel_type rtl $core
set_property vitis_drc {ctrl_protocol user_managed} $core
set_property ipi_drc {ignore_freq_hz true} $core

# Parameter values: the user parameter (what the IP shows) and the HDL parameter (what the RTL
# gets when v++ instantiates the IP with its defaults).
foreach {name value} $params {
  set up [ipx::get_user_parameters $name -of_objects $core]
  set hp [ipx::get_hdl_parameters $name -of_objects $core]
  if {[llength $up] == 0 || [llength $hp] == 0} {
    bk_fail "parameter $name of $kernel was not found by ipx::package_project"
  }
  set_property value $value $up
  set_property value $value $hp
}

proc bk_busif {core name} {
  set b [ipx::get_bus_interfaces $name -of_objects $core]
  if {[llength $b] == 0} {
    bk_fail "bus interface $name was not inferred from the ports of bouncer_kernel"
  }
  return $b
}
# ipx::package_project infers a clock and a reset only under the names ap_clk and ap_rst_n;
# the second pair is inferred here, and every reset gets its polarity (the RTL's resets are
# active low) rather than whatever inference guessed.
ipx::infer_bus_interface ap_clk_2 xilinx.com:signal:clock_rtl:1.0 $core
ipx::infer_bus_interface ap_rst_n_2 xilinx.com:signal:reset_rtl:1.0 $core
foreach r {ap_rst_n ap_rst_n_2} {
  set b [bk_busif $core $r]
  set p [ipx::get_bus_parameters POLARITY -of_objects $b]
  if {[llength $p] == 0} {
    set p [ipx::add_bus_parameter POLARITY $b]
  }
  set_property value ACTIVE_LOW $p
}
foreach b {ap_clk ap_clk_2 ap_rst_n ap_rst_n_2 s_axi_control m_axi_host s_axis_rx m_axis_tx} {
  bk_busif $core $b
}
if {$async} {
  set stream_clk ap_clk_2
  set other_clk ap_clk
} else {
  set stream_clk ap_clk
  set other_clk ap_clk_2
}
ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core
ipx::associate_bus_interfaces -clock ap_clk_2 -reset ap_rst_n_2 $core
foreach b {s_axi_control m_axi_host} {
  ipx::associate_bus_interfaces -busif $b -clock ap_clk $core
}
foreach b {s_axis_rx m_axis_tx} {
  # Vivado may have associated every interface with ap_clk when it inferred them.
  catch {ipx::associate_bus_interfaces -busif $b -clock $other_clk -remove $core}
  ipx::associate_bus_interfaces -busif $b -clock $stream_clk $core
}

# The register space: 64 KiB, the range xrt::ip can address.
foreach mm [ipx::get_memory_maps s_axi_control -of_objects $core] {
  foreach ab [ipx::get_address_blocks -of_objects $mm] {
    set_property range 65536 $ab
  }
}
# The CDC constraints refer to the kernel's clocks, which the platform creates: read them late.
foreach fg [ipx::get_file_groups -of_objects $core] {
  foreach f [ipx::get_files -filter {NAME =~ *.xdc} -of_objects $fg] {
    set_property processing_order late $f
  }
}
ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity -kernel $core
ipx::save_core $core
close_project -delete

# ---- 3. kernel.xml with the stream width, then the .xo
set fh [open [file join $here kernel.xml] r]
set xml [read $fh]
close $fh
if {$opt(width) != 512} {
  set w $opt(width)
  set xml [string map [list \
    {dataWidth="512" portType="stream"} "dataWidth=\"$w\" portType=\"stream\"" \
    {ap_axiu&lt;512,} "ap_axiu&lt;$w,"] $xml]
}
set kxml [file join $build kernel.xml]
set fh [open $kxml w]
puts -nonewline $fh $xml
close $fh
file mkdir [file dirname $xo]
package_xo -force -xo_path $xo -kernel_name $kernel -ip_directory $ipdir -kernel_xml $kxml
if {![file exists $xo]} {
  bk_fail "package_xo did not write $xo"
}
puts "package_kernel.tcl: wrote $xo (DATA_W=$opt(width), ASYNC_STREAMS=$async, part $opt(part))"
