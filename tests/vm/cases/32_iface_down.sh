# An interface that goes down mid-log (ip link set can1 down) is an ANNOTATION record on its
# channel ("can1: interface down"), the other channel goes on, and can1 is logged again
# when it comes back ("can1: interface up again"); exit 0.
candump_bg ref0.log can0
log_bg --source can:can0,can1
wait_listeners can0 4
wait_listeners can1 2
cangen can2 -n 100 -g 0 -p 10 -I 101 -L 1 -D i
marker can2 7B0
wait_seen ref0.log can0 7B0
ip link set can1 down
cangen can2 -n 100 -g 0 -p 10 -I 102 -L 1 -D i
marker can2 7B1
wait_seen ref0.log can0 7B1
ip link set can1 up
cangen can2 -n 100 -g 0 -p 10 -I 103 -L 1 -D i
marker can2 7B2
wait_seen ref0.log can0 7B2
log_stop
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
logged_candump got.log
only_iface can0 got.log > got.can0
same_lines ref0.log got.can0 "can0 did not go on: its frames differ from candump's"
only_iface can1 got.log > got.can1
[ "$(grep -c ' 101#' got.can1)" = 100 ] || fail "can1 before the down: not 100 frames"
[ "$(grep -c ' 102#' got.can1)" = 0 ] || fail "can1 logged frames while down"
[ "$(grep -c ' 103#' got.can1)" = 100 ] || fail "can1 after the up: not 100 frames"
logged_records recs.txt
grep -q '^note [0-9]* 1 1 can1: interface down$' recs.txt || { cat recs.txt | grep -v '^can'; fail "no down annotation"; }
grep -q '^note [0-9]* 1 1 can1: interface up again$' recs.txt || { cat recs.txt | grep -v '^can'; fail "no up annotation"; }
