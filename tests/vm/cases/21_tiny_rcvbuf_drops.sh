# A deliberately tiny receive buffer (--can-rcvbuf 8K: a few frames) and a stalled logger:
# the kernel drops frames, and the log says so: DROP records (flag SF_DROP_SOURCE = 1) on
# the interface's channel whose counts add up to what candump saw minus what was logged,
# each between the times of the frames around the loss; the logged frames are candump's in
# order with gaps only where a DROP record is; exit status 3 and a line on stderr.
candump_bg ref.log can0
log_bg --source can:can0 --can-rcvbuf 8K
wait_listeners can0 4
kill -STOP "$LP"
cangen can2 -n 600 -g 0 -p 10 -I i -L 8 -D i
marker can2 7A2
wait_seen ref.log can0 7A2
kill -CONT "$LP"
# frames after the stall reach the logger again
cangen can2 -n 50 -g 0 -p 10 -I 321 -L 1 -D i
marker can2 7A3
wait_seen ref.log can0 7A3
log_stop
kill "$CP"
[ "$LRC" = 3 ] || { cat log.err log.json; fail "streamfat log exited $LRC, not 3"; }
logged_candump got.log
logged_records recs.txt
refn=$(wc -l < ref.log)
gotn=$(wc -l < got.log)
drops=$(awk '$1 == "drop" && $3 == 0 && $4 == 1 { n += $5 } END { print n + 0 }' recs.txt)
kd=$(json_u64 kernel_dropped)
info "candump $refn, logged $gotn, DROP records count $drops, kernel_dropped $kd"
[ "$drops" -gt 0 ] || fail "no DROP record"
[ $((refn - gotn)) = "$drops" ] || fail "candump $refn - logged $gotn != DROP records' $drops"
[ "$kd" = "$drops" ] || fail "kernel_dropped $kd != DROP records' $drops"
# the logged lines are candump's lines in order (a subsequence)
awk "$SAME_FRAME"' NR == FNR { want[++n] = $0; next } { while (i < n && !same_frame(want[++i], $0)) ; if (!same_frame(want[i], $0)) { print "not in order:", $0; bad = 1; exit } } END { exit bad }' \
    ref.log got.log || fail "a logged frame is not candump's, or out of order"
# each DROP record lies between the logged frames around it: first_ts <= last_ts
awk '$1 == "drop" && $6 > $7 { print; bad = 1 } END { exit bad }' recs.txt || fail "DROP times reversed"
grep -q '321#' got.log || fail "nothing logged after the stall"
