# A logger stalled (SIGSTOP) while 3,000 frames pass loses none of them: the default receive
# buffer (sized from the ring, SO_RCVBUFFORCE as root) holds them. The times are the
# kernel's receive times, so the frames read late keep their spacing: equal, to the
# microsecond, to candump's. Today's code logged 278 and said "records dropped 0".
candump_bg ref.log can0
log_bg --source can:can0
wait_listeners can0 4
kill -STOP "$LP"
cangen can2 -n 3000 -g 0 -p 10 -I i -L 8 -D i
cangen can2 -n 20 -g 20 -I 555 -L 2 -D i
marker can2 7A1
wait_seen ref.log can0 7A1
kill -CONT "$LP"
log_stop
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
logged_candump got.log
same_lines ref.log got.log "the logged frames (and times) differ from candump's"
n=$(wc -l < got.log)
[ "$n" -ge 3000 ] || fail "only $n frames"
info "frames logged across the stall: $n of $(wc -l < ref.log) candump saw"
