# Side by side on the same traffic: candump -l (the anchor) and streamfat log, both on
# vcan0; 20,000 classic frames as fast as cangen sends them. Reports frames per CPU second
# of each and frames lost against what was sent. CPU is what each process used over the
# traffic (user + system clock ticks from /proc/PID/stat, 100 a second, read just before
# cangen starts and once both are idle again), so the logger's start (mkfs) and stop
# (close) are not counted, nor candump's. Verdicts: streamfat log lost none (exit 0), and
# its CPU per frame is at most BENCH_MARGIN_PCT % of candump's (the same traffic at the same
# moment in the same guest: a ratio, not a speed; before issue 27's batching it was 5x).
N=20000
BENCH_MARGIN_PCT=200
# stat_ticks PID: "user system" clock ticks of a live process
stat_ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; }
mkdir cd
(cd cd && exec candump -l -r 8000000 vcan0) 2> candump.err &
CP=$!
log_bg --source can:vcan0
wait_listeners vcan0 3
set -- $(stat_ticks "$CP") $(stat_ticks "$LP")
cu0=$1 cs0=$2 lu0=$3 ls0=$4
cangen vcan0 -n $N -g 0 -p 10 -L 8
cansend vcan0 7A8#AA55AA55
# both have read everything when their CPU time stops growing (a measurement only: the
# verdict on lost frames below does not depend on it)
last=""
i=0
while [ $i -lt 100 ]; do
    now="$(stat_ticks "$CP") $(stat_ticks "$LP")"
    [ "$now" = "$last" ] && break
    last=$now
    i=$((i + 1))
    usleep 300000
done
set -- $now
cu=$(($1 - cu0)) cs=$(($2 - cs0)) lu=$(($3 - lu0)) ls=$(($4 - ls0))
ct=$((cu + cs)) lt=$((lu + ls))
kill -INT "$CP"
wait "$CP" || true
log_stop
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
cn=$(cat cd/*.log | grep -c '')
logged_candump got.log
ln=$(wc -l < got.log)
info "candump -l: $cn frames, $ct ticks (user $cu, system $cs; $(( cn * 100 / (ct + 1) )) frames per CPU s); streamfat log: $ln frames, $lt ticks (user $lu, system $ls; $(( ln * 100 / (lt + 1) )) frames per CPU s); sent $((N + 1)); streamfat/candump CPU $(( lt * 100 / (ct + 1) )) %"
[ "$cn" = $((N + 1)) ] || info "candump -l lost $((N + 1 - cn)) frames"
[ "$ln" = $((N + 1)) ] || fail "streamfat log lost $((N + 1 - ln)) frames"
[ "$lt" -le $(( (ct + 2) * BENCH_MARGIN_PCT / 100 )) ] ||
    fail "streamfat log used $lt ticks for the traffic candump -l read in $ct (more than $BENCH_MARGIN_PCT %)"
