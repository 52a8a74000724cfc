# --listen-only (issue 27, transmit): the logger checks the interface's mode and refuses to
# start (exit 1, naming the ip command) when it is not listen-only; once it is, a cansend
# from can1 reaches nobody (Debian's 6.1 kernel drops it without an error to the sender:
# candump on can0 sees nothing) while frames from can2 are still logged on can1. On vcan,
# which has no such mode, the logger says so and runs. can1 is put back as it was.
rm -f d.img
rc=0
streamfat log --mkfs exfat --size 64M --source can:can1 --listen-only can1 d.img 2> lo.err || rc=$?
[ "$rc" = 1 ] && grep -q 'ip link set can1 type can listen-only on' lo.err ||
    { cat lo.err; fail "--listen-only on a card not in that mode: exit $rc"; }
ip link set can1 down
ip link set can1 type can bitrate 500000 listen-only on || skip "no listen-only on this card"
ip link set can1 up
candump_bg ref.log can0
wait_listeners can0 2
log_bg --source can:can1 --listen-only can1
wait_listeners can1 2
cansend can1 321#DEADBEEF
cangen can2 -n 50 -g 0 -p 10 -I 104 -L 2 -D i
marker can2 7C1
wait_seen ref.log can0 7C1
log_stop
kill "$CP"
ip link set can1 down
ip link set can1 type can bitrate 500000 listen-only off
ip link set can1 up
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
grep -q ' 321#' ref.log && fail "a frame from the listen-only can1 reached can0"
logged_candump got.log
[ "$(grep -c ' can1 104#' got.log)" = 50 ] || fail "frames from can2 not all logged on can1"
# vcan: no listen-only mode, said so, logging goes on
log_bg --source can:vcan0 --listen-only vcan0
wait_listeners vcan0 2
cansend vcan0 111#01
log_stop
[ "$LRC" = 0 ] || { cat log.err; fail "vcan0 with --listen-only: exit $LRC"; }
grep -q 'vcan0 has no listen-only mode (vcan)' log.err || { cat log.err; fail "no note about vcan"; }
