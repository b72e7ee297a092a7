"""Pure game rules and the match state machine: no I/O, no clocks, no sockets."""
