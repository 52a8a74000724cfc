# ISO-TP through the Linux kernel's own stack (issue 28): can-isotp sockets on vcan0 (the
# sender and a receiver that answers with flow control, tests/helpers/kern_isotp.c) send
# messages while streamfat logs vcan0; `export -f messages` must give back exactly the
# payloads sent, each whole (status ok), with its id and addressing byte, in order, and
# nothing else. Covered: single frames (1..7 bytes), multi-frame up to 4,095 bytes, the
# 32-bit FF length escape (4,096..8,200, can-isotp's limit in 6.1), 11-bit ids (the
# OBD-II/UDS ids found by themselves and a named pair), 29-bit normal fixed addressing
# (0x18DA, found by themselves), functional requests (single frames on 0x7DF and
# 0x18DB33F1), extended addressing (first data byte) and mixed addressing
# on 29-bit ids (0x18CE, named pairs), padding (0xCC, 0x55), CAN FD ISO-TP (frames of 64
# and of 20 bytes, SFs above 7 bytes with the length escape), and a receiver asking for
# block sizes 1 and 4 with STmin 2 ms and 500 us (the logged flow control carries them).
log_bg --source can:vcan0
wait_listeners vcan0 2
: > sent
send() { kern_isotp vcan0 "$@" >> sent 2>> kern.err || { cat kern.err; fail "kern_isotp $*"; }; }
send 7E8 7E0 1 7 8 62 500 4095
send 7E9 7E1 4096 5000 8200
send 18DAF110 18DA10F1 7 100 3000
send 7DF 7E7 2 7
send 18DB33F1 18DAF133 3 7
send 7E8 7E0 -p CC 3 6 7 20 300
send 6F1 612 -p 55 5 50
send 6F2 613 -x 12:F1 1 6 7 200 4095
send 18CE12F1 18CEF112 -x 55:55 4 40
send 7EA 7E2 -f 64 1 7 8 62 63 200 4095 5000
send 7EB 7E3 -f 20 -p AA 10 18 30 500
send 7EC 7E4 -b 4 -m 02 300
send 7ED 7E5 -b 1 -m F5 100
log_stop
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
streamfat export -f messages --isotp-pair 6F1:612 --isotp-pair 6F2:613:ext \
    --isotp-pair 18CE12F1:18CEF112:mixed d.img LOG00001.SFL > msgs.json 2> export.err ||
    { cat export.err; fail "export -f messages failed"; }
[ -s export.err ] && { cat export.err; fail "export counted broken messages or orphans"; }
sed 's/.*"status":"\([a-z_]*\)".*"id":"\([0-9A-F]*\)".*"addr":\([0-9a-z]*\),.*"length":\([0-9]*\),.*"data":"\([0-9A-F]*\)".*/\1 \2 \3 \4 \5/' \
    msgs.json > got.all
grep -v '^ok ' got.all | cut -c1-80 | head -5 | grep . && fail "messages that are not whole (above)"
cut -d' ' -f2- got.all > got
if ! cmp -s sent got; then
    awk '{ print $1, $2, $3, substr($4, 1, 40) }' sent > s.short
    awk '{ print $1, $2, $3, substr($4, 1, 40) }' got > g.short
    diff s.short g.short | head -20
    fail "the reassembled messages differ from what the kernel sent ($(wc -l < sent) sent, $(wc -l < got) exported)"
fi
# the receiver's flow control as it asked: block size 4 / STmin 2 ms, block size 1 / 500 us
streamfat export d.img LOG00001.SFL > frames.log || fail "export failed"
grep -q ' 7E4#300402' frames.log || fail "no flow control BS 4 STmin 2 ms logged"
[ "$(grep -c ' 7E5#3001F5' frames.log)" -ge 14 ] || fail "not one flow control per CF with BS 1"
grep -q '##' frames.log || fail "no CAN FD frame logged"
info "$(wc -l < sent) messages of 1..8200 bytes, $(wc -l < frames.log) frames"
