# log --poll against the kernel's own ISO-TP stack (issue 27, polling): vm_ecu
# (tests/helpers/vm_ecu.c, CAN_ISOTP sockets of the can-isotp module) plays two ECUs on can1,
# one with 11-bit ids (7E0/7E8, functional 7DF), one with 29-bit ids (18DA10F1/18DAF110,
# functional 18DB33F1); it answers PIDs and DIDs with single frames and with first +
# consecutive frames sent by the kernel under the logger's flow control (--poll-bs 4,
# --poll-stmin 1ms). A third poll asks an ECU that is not there. cangen loads the bus from
# can2 meanwhile. Checked:
#   - every answer the ECUs sent is in the log, reassembled by the awk reader below (written
#     from ISO 15765-2, not from src/proto), byte for byte and in order (only the last one
#     of an ECU may be cut by the logger's stop);
#   - the kernel kept the flow control: at most 4 consecutive frames per flow control,
#     spaced by STmin (the mean gap in a block: the receiving card's times may bunch);
#   - requests go out at the asked period: the first item's requests, logged with the TX
#     flag (the kernel's echo), have a mean interval within 5 % of 500 ms, none missing
#     (as many as the span holds, no period skipped), and the log holds each request the
#     JSON counts;
#   - the missing ECU: its poll counts a timeout per request, and logging went on.
candump_bg ref.log can1
wait_listeners can1 2
vm_ecu can1 7E0 7E8 7DF ecu11.out 2> ecu11.err &
E1=$!
vm_ecu can1 18DA10F1 18DAF110 18DB33F1 ecu29.out 2> ecu29.err &
E2=$!
wait_until 30 sh -c "[ -e ecu11.out ] && [ -e ecu29.out ]"
cangen can2 -g 4 -p 10 -I 100 -L 8 -D i &
G=$!
log_bg --source can:can0 --poll 'obd:0C,0902@500ms@can0' \
    --poll 'uds:7E0/7E8:F190,F40C@700ms@can0' --poll 'uds:7E1/7E9:F190@300ms@can0' \
    --poll 'obd:18DB33F1:0C@500ms@can0' --poll 'uds:18DA10F1/18DAF110:F1A0,F190@1s@can0' \
    --poll-bs 4 --poll-stmin 1ms --poll-timeout 250ms
wait_until 180 sh -c "[ \$(grep -c ' 7DF#02010C' ref.log) -ge 25 ]"
# what the ECUs said while the logger ran (after its stop, an answer it no longer gives
# flow control to ends in the kernel's N_Bs timeout: ECOMM at the ECU's next write)
cat ecu11.err ecu29.err > ecu.err.run
log_stop
kill "$G" "$E1" "$E2" 2>/dev/null
marker can2 7C0
wait_seen ref.log can1 7C0
kill "$CP"
[ "$LRC" = 0 ] || { cat log.err log.json; fail "streamfat log exited $LRC"; }
grep -v '^$' ecu.err.run && fail "the ECU complained while the logger ran"
logged_records recs.txt

# poll_u64 SPEC KEY: a counter of one poll in log.json
poll_u64() {
    awk -v RS='}' -v s="\"poll\": \"$1\"" -v k="\"$2\": " 'index($0, s) {
        i = index($0, k); v = substr($0, i + length(k)); sub(/[^0-9].*/, "", v); print v; exit }' log.json
}
for p in 'obd:0C,0902@500ms@can0' 'uds:7E0/7E8:F190,F40C@700ms@can0' \
    'uds:7E1/7E9:F190@300ms@can0' 'obd:18DB33F1:0C@500ms@can0' \
    'uds:18DA10F1/18DAF110:F1A0,F190@1s@can0'; do
    info "$p: requests $(poll_u64 "$p" requests) answers $(poll_u64 "$p" answers)" \
        "multi $(poll_u64 "$p" multi_frame) timeouts $(poll_u64 "$p" timeouts)" \
        "late $(poll_u64 "$p" late) broken $(poll_u64 "$p" broken) skipped $(poll_u64 "$p" skipped)"
    [ "$(poll_u64 "$p" skipped)" = 0 ] || fail "$p: periods skipped"
    [ "$(poll_u64 "$p" failed)" = 0 ] || fail "$p: sends failed"
    [ "$(poll_u64 "$p" broken)" = 0 ] || fail "$p: broken answers"
done
p='uds:7E1/7E9:F190@300ms@can0'
r=$(poll_u64 "$p" requests)
[ "$r" -ge 20 ] && [ "$(poll_u64 "$p" timeouts)" -ge $((r - 1)) ] ||
    fail "the missing ECU: $r requests, $(poll_u64 "$p" timeouts) timeouts"
p='uds:7E0/7E8:F190,F40C@700ms@can0'
[ "$(poll_u64 "$p" multi_frame)" -ge 10 ] || fail "$p: too few multi-frame answers"

# the independent reader: ISO-TP frames of the answer ids (received, not TX) into messages
awk '$1 == "can" && ($4 == "7e8" || $4 == "18daf110") && $5 !~ /4.$/ { print $4, $7 }' recs.txt > answers.frames
awk 'function hx(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
    { id = $1; d = $2; t = substr(d, 1, 1)
      if (t == "0") { n = hx(substr(d, 2, 1)); print id, substr(d, 3, 2 * n); open[id] = 0; next }
      if (t == "1") { need[id] = hx(substr(d, 2, 3)); buf[id] = substr(d, 5, 12); sn[id] = 1; open[id] = 1; next }
      if (t == "2" && open[id]) {
          if (hx(substr(d, 2, 1)) != sn[id]) { print "BADSN " id; open[id] = 0; next }
          buf[id] = buf[id] substr(d, 3, 14); sn[id] = (sn[id] + 1) % 16
          if (length(buf[id]) >= 2 * need[id]) { print id, substr(buf[id], 1, 2 * need[id]); open[id] = 0 }
      } }' answers.frames > answers.msgs
grep -q BADSN answers.msgs && fail "a sequence number out of order in the log"
for e in "7e8 ecu11.out" "18daf110 ecu29.out"; do
    set -- $e
    awk -v id="$1" '$1 == id { print $2 }' answers.msgs > "got.$1"
    n_got=$(wc -l < "got.$1")
    n_ecu=$(wc -l < "$2")
    info "$1: the ECU sent $n_ecu answers, the log holds $n_got whole"
    [ "$n_got" -ge 20 ] || fail "$1: only $n_got answers in the log"
    [ $((n_ecu - n_got)) -le 1 ] && [ "$n_got" -le "$n_ecu" ] || fail "$1: $n_ecu sent, $n_got logged"
    head -n "$n_got" "$2" > "want.$1"
    cmp -s "want.$1" "got.$1" || { diff "want.$1" "got.$1" | head; fail "$1: the logged answers differ"; }
done

# the flow control the kernel obeyed: 18DAF110's 200-byte answers come in blocks of at most
# 4 CFs after each FC (TX on 18DA10F1), the CFs of a block 1 ms apart or more on average
awk '$1 == "can" && (($4 == "18daf110" && $5 !~ /4.$/) || ($4 == "18da10f1" && $5 ~ /4.$/ && substr($7, 1, 1) == "3")) { print $2, $4, $7 }' recs.txt |
    awk '$2 == "18da10f1" { if ($3 !~ /^300401/) { print "FC " $3; bad = 1 }
                           if (rx) { l = $1 - rx; fl += l; if (l > fmax) fmax = l }
                           fc++; k = 0; last = 0; next }
         { rx = $1 }
         substr($3, 1, 1) == "2" { k++; if (k > 4) { print "block longer than 4"; bad = 1 }
             if (last) { gaps += $1 - last; ng++ }
             last = $1; cf++ }
         END { g = ng ? gaps / ng / 1e6 : 0
               printf "@@INFO 50_poll_isotp 29-bit: %d flow controls (%.3f ms after the frame before, mean; %.3f max), %d consecutive frames, %.3f ms apart in a block (mean)\n", fc, fc ? fl / fc / 1e6 : 0, fmax / 1e6, cf, g
               if (!fc || !cf || g < 0.95) bad = 1; exit bad }' || fail "the kernel's sender did not keep BS 4 / STmin 1 ms"

# the period: the first item's requests as the log has them (TX, the kernel's echo)
for q in "7df 02010c obd:0C,0902@500ms@can0" "18db33f1 02010c obd:18DB33F1:0C@500ms@can0"; do
    set -- $q
    awk -v id="$1" -v d="$2" '$1 == "can" && $4 == id && $5 ~ /4.$/ && substr($7, 1, 6) == d { print $2 }' recs.txt > "req.$1"
    all=$(awk -v id="$1" '$1 == "can" && $4 == id && $5 ~ /4.$/' recs.txt | wc -l)
    [ "$all" = "$(poll_u64 "$3" requests)" ] || fail "$1: $all requests logged, the JSON counts $(poll_u64 "$3" requests)"
    awk -v p=500000000 'NR == 1 { f = $1 } { l = $1; n++ }
        END { mean = (l - f) / (n - 1); span = int((l - f) / p + 0.5) + 1
              printf "@@INFO 50_poll_isotp %d requests, mean %.6f s, the span holds %d\n", n, mean / 1e9, span
              if (n < 20 || mean < p * 0.95 || mean > p * 1.05 || span != n) exit 1 }' "req.$1" ||
        fail "$1: the requests do not keep the 500 ms period"
done
