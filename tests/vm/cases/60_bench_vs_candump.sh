# Side by side on the same traffic: candump -l (the anchor) and streamfat log, both on
# vcan0; 20,000 classic frames as fast as cangen sends them. Reports frames per CPU second
# of each (user + system clock ticks from /proc/PID/stat, 100 a second) and frames lost
# against what was sent; the verdict is only that streamfat log lost none (exit 0).
N=20000
mkdir cd
(cd cd && exec time -f "%U %S" -o ../candump.time candump -l -n $((N + 1)) -r 8000000 vcan0) \
    2> candump.err &
CP=$!
log_bg --source can:vcan0
wait_listeners vcan0 3
cangen vcan0 -n $N -g 0 -p 10 -L 8
cansend vcan0 7A8#AA55AA55
# candump ends after the last frame (-n); busybox time gives its CPU seconds
echo "sent; waiting for candump"
wait_until 120 sh -c "! kill -0 $CP"
wait "$CP" || fail "candump failed: $(cat candump.err)"
ct=$(awk '{ printf "%d\n", ($1 + $2) * 100 }' candump.time)
echo "candump done: $ct ticks"
# the logger has read everything when its CPU time stops growing (a measurement only:
# the verdict below does not depend on it)
lt=-1
i=0
while [ $i -lt 100 ]; do
    t=$(cpu_ticks "$LP")
    [ "$t" = "$lt" ] && break
    lt=$t
    i=$((i + 1))
    usleep 300000
done
echo "logger idle: $lt ticks"
log_stop
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
cn=$(cat cd/*.log | grep -c '')
logged_candump got.log
ln=$(wc -l < got.log)
info "candump -l: $cn frames, $ct ticks ($(( cn * 100 / (ct + 1) )) frames per CPU s); streamfat log: $ln frames, $lt ticks ($(( ln * 100 / (lt + 1) )) frames per CPU s); sent $((N + 1))"
[ "$ln" = $((N + 1)) ] || fail "streamfat log lost $((N + 1 - ln)) frames"
