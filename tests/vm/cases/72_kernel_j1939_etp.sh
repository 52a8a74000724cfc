# J1939 ETP through the Linux kernel's own stack (issue 28): above 1,785 bytes can-j1939
# sends a destination-specific message by the extended transport (ETP.CM 0xC800: RTS, CTS,
# DPO, EndOfMsgAck; ETP.DT 0xC700, packet numbers 1..255 after each DPO's offset), the
# kernel answering for the receiving socket. streamfat logs vcan0; `export -f j1939` must
# give back each message whole with its PGN, priority, source and destination (no ETP
# frame of its own in the view), and `export -f messages` gives them as j1939 messages with
# status ok: sizes 1,786 (one DPO of 255 packets and one of 1), 5,000 and 20,000 (12 DPO
# windows), and a 9-byte TP message after them on the same pair.
log_bg --source can:vcan0
wait_listeners vcan0 2
: > sent
send() { kern_j1939 vcan0 "$@" >> sent 2>> kern.err || { cat kern.err; fail "kern_j1939 $*"; }; }
send 25 42 EF00 6 1786 5000 20000 9
log_stop
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
streamfat export -f j1939 d.img LOG00001.SFL > j.json 2> export.err ||
    { cat export.err; fail "export -f j1939 failed"; }
[ -s export.err ] && { cat export.err; fail "export counted broken messages or orphans"; }
sed 's/.*"pgn":\([0-9]*\),"prio":\([0-9]*\),"sa":\([0-9]*\),"da":\([0-9]*\),"tp":\([a-z]*\),"length":\([0-9]*\),"data":"\([0-9A-F]*\)".*/\1 \2 \3 \4 \5 \6 \7/' \
    j.json > got
if ! cmp -s sent got; then
    streamfat export d.img LOG00001.SFL | head -12
    awk '{ print $1, $2, $3, $4, $5, $6, substr($7, 1, 40) }' sent > s.short
    awk '{ print $1, $2, $3, $4, $5, $6, substr($7, 1, 40) }' got > g.short
    diff s.short g.short | head -20
    fail "the exported J1939 messages differ from what the kernel sent ($(wc -l < sent) sent, $(wc -l < got) exported)"
fi
streamfat export -f messages d.img LOG00001.SFL > msgs.json || fail "export -f messages failed"
[ "$(grep -c '"proto":"j1939","status":"ok"' msgs.json)" = 4 ] || fail "not 4 whole messages"
streamfat export d.img LOG00001.SFL > frames.log || fail "export failed"
grep -q ' [0-9A-F][0-9A-F]C84225#16' frames.log || fail "no ETP DPO logged"
info "$(wc -l < sent) messages of 9..20000 bytes, $(wc -l < frames.log) frames"
