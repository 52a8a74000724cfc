# J1939 through the Linux kernel's own stack (issue 28): can-j1939 sockets on vcan0 (a
# sender and a receiver bound to the destination address, tests/helpers/kern_j1939.c)
# send parameter groups while streamfat logs vcan0; `export -f j1939` must give back each
# message whole with its PGN, priority, source and destination, in order, and nothing
# else: single frames (0..8 bytes, PDU2 broadcast and PDU1 to an address), TP BAM (9..1,785
# bytes to 0xFF: 50 ms between TP.DTs, the kernel's pace) and TP RTS/CTS (9..1,785 bytes to
# an address: the kernel answers RTS with CTS and ends with EndOfMsgAck for the receiving
# socket). The priority is the kernel receiver's, and the one each sending socket set
# (SO_J1939_SEND_PRIO: Linux sends the TP.CM at it too).
log_bg --source can:vcan0
wait_listeners vcan0 2
: > sent
send() { kern_j1939 vcan0 "$@" >> sent 2>> kern.err || { cat kern.err; fail "kern_j1939 $*"; }; }
send 20 FF FECA 6 1 8
send 21 30 EF00 3 0 5 8
send 22 FF FEF1 7 9 100 1785
send 23 40 DA00 5 9 20 1785
send 24 41 EF00 2 300
log_stop
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
streamfat export -f j1939 d.img LOG00001.SFL > j.json 2> export.err ||
    { cat export.err; fail "export -f j1939 failed"; }
[ -s export.err ] && { cat export.err; fail "export counted broken messages or orphans"; }
sed 's/.*"pgn":\([0-9]*\),"prio":\([0-9]*\),"sa":\([0-9]*\),"da":\([0-9]*\),"tp":\([a-z]*\),"length":\([0-9]*\),"data":"\([0-9A-F]*\)".*/\1 \2 \3 \4 \5 \6 \7/' \
    j.json > got
if ! cmp -s sent got; then
    awk '{ print $1, $2, $3, $4, $5, $6, substr($7, 1, 40) }' sent > s.short
    awk '{ print $1, $2, $3, $4, $5, $6, substr($7, 1, 40) }' got > g.short
    diff s.short g.short | head -20
    fail "the exported J1939 messages differ from what the kernel sent ($(wc -l < sent) sent, $(wc -l < got) exported)"
fi
cut -d' ' -f1,2,5 got > pgn_prio
for pp in "65226 6 false" "61184 3 false" "65265 7 true" "55808 5 true" "61184 2 true"; do
    grep -qx "$pp" pgn_prio || fail "no message of PGN, priority, tp $pp"
done
streamfat export -f messages d.img LOG00001.SFL > msgs.json || fail "export -f messages failed"
[ "$(grep -c '"proto":"j1939","status":"ok"' msgs.json)" = 7 ] || fail "not 7 whole TP messages"
streamfat export d.img LOG00001.SFL > frames.log || fail "export failed"
grep -q ' [0-9A-F][0-9A-F]EC2340#11' frames.log || fail "no CTS from the kernel logged"
info "$(wc -l < sent) messages of 0..1785 bytes, $(wc -l < frames.log) frames; pgn prio tp: $(sort -u pgn_prio | tr '\n' ';')"
