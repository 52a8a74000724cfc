# Bus-off, error-passive and restarted cannot be produced by QEMU's SJA1000 model: they are
# injected on vcan as error frames (a raw socket may send CAN_ERR_FLAG frames there) and
# logged as ERR records equal to candump's lines; --can-errors 40 keeps only bus-off.
candump_bg ref.log vcan0
log_bg --source can:vcan0
wait_listeners vcan0 4
cansend vcan0 20000040#0000000000000000       # CAN_ERR_BUSOFF
cansend vcan0 20000004#0030000000000000       # CAN_ERR_CRTL: RX and TX error-passive
cansend vcan0 20000004#0004000000000000       # CAN_ERR_CRTL: RX warning
cansend vcan0 20000100#0000000000000000       # CAN_ERR_RESTARTED
cansend vcan0 20000080#0000000000000000       # CAN_ERR_BUSERROR
marker vcan0 7A6
wait_seen ref.log vcan0 7A6
log_stop
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
logged_candump got.log
same_lines ref.log got.log "the logged error frames differ from candump's"
[ "$(grep -c ' 2000' got.log)" = 5 ] || fail "not 5 error frames logged"
candump_bg ref2.log vcan0
log_bg --source can:vcan0 --can-errors 40
wait_listeners vcan0 4
cansend vcan0 20000040#0000000000000000
cansend vcan0 20000100#0000000000000000
cansend vcan0 20000004#0030000000000000
marker vcan0 7A7
wait_seen ref2.log vcan0 7A7
log_stop
kill "$CP"
logged_candump got2.log
[ "$(grep -c ' 2000' got2.log)" = 1 ] && grep -q '20000040#' got2.log ||
    { cat got2.log; fail "--can-errors 40 did not keep exactly the bus-off frame"; }
