# The SJA1000 card's receive-overrun error frames (CAN_ERR_CRTL, CAN_ERR_CRTL_RX_OVERFLOW)
# logged as ERR records, each equal to the line candump prints. Provoked deterministically
# through QEMU 7.2's model defect: a remote frame with DLC > 0 leaks receive-FIFO bytes and
# the card reports overruns from then on. Last in the boot, as it leaves can0 and can1 in
# that state.
candump_bg ref.log can0
log_bg --source can:can0
wait_listeners can0 4
cansend can2 123#R8
cangen can2 -n 200 -g 0 -p 10 -I 124 -L 8 -D i
marker can2 7A9
wait_until 120 sh -c "grep -q ' 20000004#' ref.log"
wait_seen ref.log can0 7A9
log_stop
kill "$CP"
logged_candump got.log
same_lines ref.log got.log "can0: the logged frames and error frames differ from candump's"
n=$(grep -c ' 20000004#' got.log)
[ "$n" -gt 0 ] || fail "no overrun error frame logged"
info "overrun error frames logged: $n (of $(wc -l < got.log) lines)"
