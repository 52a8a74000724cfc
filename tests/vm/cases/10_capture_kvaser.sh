# log --source can:can0,can1 records what another card (can2) puts on the bus: standard,
# extended and remote frames (remote with DLC 0: QEMU 7.2's SJA1000 leaks FIFO bytes on
# remote frames with DLC > 0), the card's error frames if it overruns; every frame equal,
# time included (the kernel's receive time, SO_TIMESTAMPNS), to what candump -L sees on the
# same interface, nothing invented, nothing lost, exit 0.
candump_bg ref.log can0 can1
log_bg --source can:can0,can1
wait_listeners can0 4
wait_listeners can1 4
t0=$(now_ms)
cangen can2 -n 1500 -g 0 -p 10 -I r -L r -D r
cangen can2 -n 1000 -g 0 -p 10 -e
cangen can2 -n 300 -g 0 -p 10 -R -L 0
cangen can2 -n 300 -g 0 -p 10 -e -R -L 0
for f in 000# 7FF#0102030405060708 00000000#01 1FFFFFFF#FFFFFFFFFFFFFFFF 123#R 1ABCDE12#R; do
    cansend can2 "$f"
done
t1=$(now_ms)
marker can2 7A0
wait_seen ref.log can0 7A0
wait_seen ref.log can1 7A0
log_stop
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
grep -q DROPCOUNT ref.log && fail "candump itself dropped frames: no reference"
logged_candump got.log
for i in can0 can1; do
    only_iface $i ref.log > ref.$i
    only_iface $i got.log > got.$i
    same_lines ref.$i got.$i "$i: the logged frames differ from candump's"
done
n=$(wc -l < ref.can0)
[ "$n" -ge 3100 ] || fail "only $n frames reached can0"
[ "$(json_u64 kernel_dropped)" = 0 ] || fail "kernel drops reported"
ovr=$(grep -cE ' 2000[0-9A-F]{4}#' ref.log || true)
info "frames per interface $n in $((t1 - t0)) ms of generating ($((n * 1000 / (t1 - t0 + 1))) frames/s); error frames $ovr"
