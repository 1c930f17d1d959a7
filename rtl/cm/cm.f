# rtl/cm/: the passive CM and its tables. Needs rtl/packages.f before it.
bouncer_cm_ctx_table.sv
bouncer_conn_table.sv
bouncer_id_alloc.sv
bouncer_cm_timer.sv
bouncer_listener_table.sv
bouncer_tmpl_ram.sv
bouncer_isn_hash.sv
bouncer_cm_engine.sv
