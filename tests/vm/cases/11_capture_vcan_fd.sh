# The same on vcan (mtu 72) with CAN FD: FD frames with and without BRS and ESI, classic,
# extended and remote frames (any DLC on vcan), unpaced; every frame equal to candump -L's
# (time included), exit 0. candump prints the FDF bit in the flags digit (##4..##7), so the
# exported text must too.
candump_bg ref.log vcan0
log_bg --source can:vcan0
wait_listeners vcan0 4
cangen vcan0 -n 3000 -g 0 -p 10 -m
cangen vcan0 -n 500 -g 0 -p 10 -f -b
cangen vcan0 -n 500 -g 0 -p 10 -f -E -e
for f in 123##0 123##1AA 123##2BB 123##311223344556677889900 1FFFFFFF##3 7FF#R5; do
    cansend vcan0 "$f"
done
marker vcan0 7A0
wait_seen ref.log vcan0 7A0
log_stop
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
grep -q DROPCOUNT ref.log && fail "candump itself dropped frames: no reference"
logged_candump got.log
same_lines ref.log got.log "vcan0: the logged frames differ from candump's"
[ "$(wc -l < ref.log)" -ge 4000 ] || fail "too few frames"
grep -q '##[4-7]' got.log || fail "no CAN FD frame logged"
info "FD frames $(grep -c '##' ref.log) of $(wc -l < ref.log)"
