# Nothing lost at the rates the emulated bus sustains (issue 27): the highest cangen rate at
# which candump on the receiving card (can0) sees no overrun (no error frame, every frame the
# sending card can2 put on the bus: its tx_packets) is found in the run, by a short search
# over cangen's gap (-g, paced with -p 10), slowest first, ending with an unpaced -g 0 -i
# (ENOBUFS ignored: the card's queue always full); at that rate streamfat log on can0, beside
# candump, must log every frame can2 sent, equal to candump's, no kernel drop, exit 0. (The
# emulated bus has no bit timing: the rate is whatever the host delivers, so it is
# measured, not assumed; the wall-clock rate is only reported.)
RUNGS="-g_2_-p_10 -g_1_-p_10 -g_0.5_-p_10 -g_0.2_-p_10 -g_0.1_-p_10 -g_0_-p_10 -g_0_-i"
SEARCH_N=400
N=3000
# tx: frames can2 has put on the bus so far
tx() { cat /sys/class/net/can2/statistics/tx_packets; }
# frames IFACE FILE: data frames (no error frames) of IFACE in a candump -L file
frames() { awk -v d="$1" '$2 == d && $3 !~ /^2000/' "$2" | grep -c '' || true; }
overruns() { grep -cE "$OVERRUN_RE" "$1" || true; }
# reset_can0: down and up (the SJA1000 model after an overrun; the bitrate stays)
reset_can0() { ip link set can0 down && ip link set can0 up; }
best=""
k=0
for r in $RUNGS; do
    k=$((k + 1))
    opt=$(echo "$r" | tr _ ' ')
    candump_bg ref.$k can0
    wait_listeners can0 2
    x0=$(tx)
    t0=$(now_ms)
    cangen can2 -n $SEARCH_N $opt -L 8
    t1=$(now_ms)
    marker can2 7B0
    wait_seen ref.$k can0 7B0
    sent=$(($(tx) - x0))
    kill "$CP"
    wait "$CP" 2>/dev/null || true
    o=$(overruns ref.$k)
    n=$(frames can0 ref.$k)
    info "search: cangen $opt: can2 sent $sent, candump on can0 got $n, $o overrun error frames ($(((sent - 1) * 1000 / (t1 - t0 + 1))) frames/s)"
    if [ "$o" != 0 ] || [ "$n" != "$sent" ]; then
        reset_can0
        break
    fi
    best=$opt
done
[ -n "$best" ] || fail "candump on can0 saw overruns even at the slowest rate"
# At that rate: streamfat log and candump on can0, the same traffic
candump_bg ref.log can0
log_bg --source can:can0
wait_listeners can0 4
x0=$(tx)
t0=$(now_ms)
cangen can2 -n $N $best -L 8
t1=$(now_ms)
marker can2 7B1
wait_seen ref.log can0 7B1
sent=$(($(tx) - x0))
log_stop
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
logged_candump got.log
ln=$(frames can0 got.log)
cn=$(frames can0 ref.log)
info "sustained rate: cangen $best ($(((sent - 1) * 1000 / (t1 - t0 + 1))) frames/s): can2 sent $sent, candump got $cn, streamfat log $ln, overruns $(overruns ref.log)"
[ "$(overruns ref.log)" = 0 ] || info "candump saw an overrun at the searched rate this time (the comparison still holds)"
same_lines ref.log got.log "can0: the logged frames differ from candump's"
[ "$(json_u64 kernel_dropped)" = 0 ] || fail "kernel drops reported"
if [ "$(overruns ref.log)" = 0 ]; then
    [ "$ln" = "$sent" ] || fail "streamfat log lost $((sent - ln)) of $sent frames at a rate without overrun"
fi
