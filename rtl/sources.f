# Every RTL source, in dependency order (packages before their users): the packages, then one
# list per block, each in its block's directory (rtl/common/ has two: its shared blocks and the
# kernel's clock-domain crossings). Paths are relative to the list that names them, as
# Verilator's -F reads them (`verilator -F rtl/sources.f` works as is). Consumers that need
# fewer blocks read the lists in this order.
-F packages.f
-F common/common.f
-F host/host.f
-F rx/rx.f
-F cm/cm.f
-F tx/tx.f
-F top/top.f
-F common/cdc.f
-F kernel/kernel.f
