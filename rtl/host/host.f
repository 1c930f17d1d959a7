# rtl/host/: host interface (registers, reject SQ and its CQE queue, control queue, DMA, CQ
# writers). Needs rtl/packages.f and rtl/common/common.f before it.
bouncer_axil_regs.sv
bouncer_dma_rd.sv
bouncer_dma_wr.sv
bouncer_cq_writer.sv
bouncer_sq_cqe_queue.sv
bouncer_cqp_engine.sv
bouncer_sq_engine.sv
