# rtl/host/: host interface (registers, reject SQ, control queue, DMA, CQ writers). Needs
# rtl/packages.f and rtl/common/common.f before it.
bouncer_axil_regs.sv
bouncer_dma_rd.sv
bouncer_dma_wr.sv
bouncer_cq_writer.sv
bouncer_cqp_engine.sv
bouncer_sq_engine.sv
