# Error frames on the emulated card: the SJA1000 model's one controller error, the receive
# overrun (CAN_ERR_CRTL_RX_OVERFLOW), if an unpaced burst provokes one (in this VM it has
# not: each transmission waits for its interrupt, which lets can0's handler empty its FIFO
# first; 90_kvaser_overrun provokes a real one, last of all); every error frame candump
# sees is logged as an ERR record (same line). --can-errors none logs none. Interface
# names are CHANNEL records.
candump_bg ref.log can0
log_bg --source can:can0,can1
wait_listeners can0 4
cangen can2 -n 3000 -g 0 -i -c 20 -L 8
marker can2 7A4
wait_seen ref.log can0 7A4
log_stop
kill "$CP"
logged_candump got.log
only_iface can0 got.log > got.can0
same_lines ref.log got.can0 "can0: the logged frames differ from candump's"
logged_records recs.txt
grep -q '^chan 0 can0$' recs.txt || fail "no CHANNEL record for can0"
grep -q '^chan 1 can1$' recs.txt || fail "no CHANNEL record for can1"
ovr=$(grep -cE "$OVERRUN_RE" ref.log || true)
info "overrun error frames seen by candump and logged: $ovr"
[ "$ovr" -gt 0 ] || info "the burst did not overrun the card this time (nothing to compare)"
# --can-errors none: no error frame logged while candump still sees them
candump_bg ref2.log can0
log_bg --source can:can0 --can-errors none
wait_listeners can0 3
cangen can2 -n 3000 -g 0 -i -c 20 -L 8
marker can2 7A5
wait_seen ref2.log can0 7A5
log_stop
kill "$CP"
logged_candump got2.log
grep -q ' 2000' got2.log && fail "--can-errors none logged an error frame"
grep -v ' 2000' ref2.log > ref2.data
same_lines ref2.data got2.log "--can-errors none: the data frames differ"
