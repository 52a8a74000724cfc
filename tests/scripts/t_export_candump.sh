#!/usr/bin/env bash
# streamfat export --format candump: a synthetic log (tests/helpers/mklog.c: CAN 2.0, EFF,
# RTR, CAN FD with BRS/ESI, an error frame, TEXT/DROP/ANNOTATION/SAMPLE records, 2000 bulk
# frames over many 512-byte blocks, checkpointed blocks, a trailing unwritten block) is
# exported from the host and compared line by line with candump -L lines written here by
# hand and by an independent Python formatter; python-can's CanutilsLogReader must read every
# line back with the right id, flags, data and timestamp to the microsecond. The same file
# put on an exFAT image exports identically through TARGET PATH. A damaged block is reported
# (exit 1) and only its frames are missing. Usage errors exit 2.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3

MKLOG=$(helper mklog)
LOGF=$WORK/LOG00001.SFL
run_helper mklog "$LOGF" 512 2000

# ---- expected output ------------------------------------------------------------------
# CAN FD: the flags digit carries FDF (4) as candump writes it on Linux 6.1 (issue 27)
d12=$(python3 -c 'print("".join("%02X" % ((i * 3 + 1) & 0xFF) for i in range(12)))')
d64=$(python3 -c 'print("".join("%02X" % ((i * 3 + 1) & 0xFF) for i in range(64)))')
cat >"$WORK/expected" <<EOF
(1700000000.123457) can0 123#11223344
(1700000000.123458) can0 1ABCDEF0#DEADBEEF00010203
(1700000000.123459) vcan1 7FF#R
(1700000000.123460) vcan1 00000ABC#R5
(1700000000.123461) can0 321##5$d12
(1700000000.123462) can0 1FFFFFFF##6$d64
(1700000000.123463) can2 20000080#0000080000000000
(1700000000.123464) can0 000#
(1700000000.123465) vcan1 010##7
EOF
python3 - >>"$WORK/expected" <<'EOF'
T0 = 1700000000123456789
for k in range(2000):
    ns = T0 + 1000000 + k * 1000 + 789
    us = (ns + 500) // 1000          # the text formats: to the nearest microsecond
    print("(%d.%06d) %s %03X#%s" % (us // 10**6, us % 10**6, ("can0", "vcan1")[k % 2],
                                  0x100 + k % 16, k.to_bytes(8, "little").hex().upper()))
EOF

# ---- host file --------------------------------------------------------------------------
log "export from a host file"
sf_ok export --format candump "$LOGF" >"$WORK/out"
diff "$WORK/expected" "$WORK/out" >&2 || fail "candump lines differ from the expected ones"
grep -q '^export: skipped 24 non-CAN records (SAMPLE: 1, TEXT: 21, DROP: 1 accounting for 5 lost records, ANNOTATION: 1)$' "$SF_LAST_ERR" ||
    fail "skipped-record summary missing or wrong"
sf_ok export -o "$WORK/out2" "$LOGF"
cmp "$WORK/out" "$WORK/out2" || fail "-o output differs from stdout output"
sf_ok export --format candump - <"$LOGF" >"$WORK/out3"
cmp "$WORK/out" "$WORK/out3" || fail "export from stdin differs"

# ---- python-can reads it back -----------------------------------------------------------
log "python-can CanutilsLogReader"
/usr/bin/python3 - "$WORK/out" <<'EOF' || fail "python-can disagrees"
import sys
import can

T0 = 1700000000123456789
def us(ns):
    return (ns + 500) // 1000

d = bytes((i * 3 + 1) & 0xFF for i in range(64))
# (us, channel, id, ext, rtr, fd, brs, esi, err, dlc, data)
want = [
    (us(T0), "can0", 0x123, False, False, False, False, False, False, 4, bytes.fromhex("11223344")),
    (us(T0 + 1000), "can0", 0x1ABCDEF0, True, False, False, False, False, False, 8,
     bytes.fromhex("DEADBEEF00010203")),
    (us(T0 + 2000), "vcan1", 0x7FF, False, True, False, False, False, False, 0, None),
    (us(T0 + 3000), "vcan1", 0xABC, True, True, False, False, False, False, 5, None),
    (us(T0 + 4000), "can0", 0x321, False, False, True, True, False, False, 12, d[:12]),
    (us(T0 + 5000), "can0", 0x1FFFFFFF, True, False, True, False, True, False, 64, d),
    (us(T0 + 6000), None, None, None, False, False, False, False, True, None, None),
    (us(T0 + 7000), "can0", 0x000, False, False, False, False, False, False, 0, b""),
    (us(T0 + 8000), "vcan1", 0x010, False, False, True, True, True, False, 0, b""),
]
for k in range(2000):
    ns = T0 + 1000000 + k * 1000 + 789
    want.append((us(ns), ("can0", "vcan1")[k % 2], 0x100 + k % 16, False, False, False, False,
                 False, False, 8, k.to_bytes(8, "little")))
msgs = list(can.CanutilsLogReader(sys.argv[1]))
assert len(msgs) == len(want), (len(msgs), len(want))
for i, (m, w) in enumerate(zip(msgs, want)):
    t, ch, ident, ext, rtr, fd, brs, esi, err, dlc, data = w
    got_us = round(m.timestamp * 1e6)
    assert got_us == t, (i, got_us, t)
    assert m.is_error_frame == err, (i, "error frame")
    if err:
        continue
    assert m.channel == ch, (i, m.channel, ch)
    assert m.arbitration_id == ident, (i, hex(m.arbitration_id), hex(ident))
    assert m.is_extended_id == ext, (i, "ext")
    assert m.is_remote_frame == rtr, (i, "rtr")
    assert m.is_fd == fd, (i, "fd")
    assert m.bitrate_switch == brs, (i, "brs")
    assert m.error_state_indicator == esi, (i, "esi")
    assert m.dlc == dlc, (i, m.dlc, dlc)
    if not rtr:
        assert bytes(m.data) == data, (i, bytes(m.data).hex(), data.hex())
print("python-can: %d messages match" % len(msgs))
EOF

# ---- a damaged block --------------------------------------------------------------------
log "a damaged block"
cp "$LOGF" "$WORK/damaged.SFL"
printf '\xff' | dd of="$WORK/damaged.SFL" bs=1 seek=$((3 * 512 + 100)) conv=notrunc status=none
lost=$(awk '$1 == 3 { print $2 }' "$LOGF.blocks")
[[ -n $lost && $lost -gt 0 ]] || fail "manifest: block 3 holds no frames?"
rc=0
sf export --format candump "$WORK/damaged.SFL" >"$WORK/out.damaged" || rc=$?
((rc == 1)) || fail "export of a damaged file exited $rc, expected 1"
grep -q 'block 3 damaged (CRC mismatch)' "$SF_LAST_ERR" || fail "damage not reported"
python3 - "$WORK/out" "$WORK/out.damaged" "$lost" <<'EOF' || fail "damaged export is not the clean one minus block 3"
import sys
full = open(sys.argv[1]).read().splitlines()
dmg = open(sys.argv[2]).read().splitlines()
lost = int(sys.argv[3])
assert len(full) - len(dmg) == lost, (len(full), len(dmg), lost)
it = iter(full)
assert all(any(l == f for f in it) for l in dmg), "not a subsequence"
EOF
# a truncated copy: the partial block is reported, the rest exported
head -c $((20 * 512 + 100)) "$LOGF" >"$WORK/trunc.SFL"
rc=0
sf export "$WORK/trunc.SFL" >"$WORK/out.trunc" || rc=$?
((rc == 1)) || fail "export of a truncated file exited $rc, expected 1"
grep -q 'block 20: the file ends inside it (100 of 512 bytes)' "$SF_LAST_ERR" || fail "truncation not reported"
grep -qx '.*damaged: invalid 1, truncated 1' "$SF_LAST_ERR" || fail "no one-line verdict for the truncated file"
[[ -s $WORK/out.trunc ]] || fail "nothing exported from the truncated file"
cmp -s <(head -n "$(wc -l <"$WORK/out.trunc")" "$WORK/out") "$WORK/out.trunc" ||
    fail "truncated export is not a prefix of the clean one"

# ---- on a volume ------------------------------------------------------------------------
log "export from an exFAT image"
IMG=$WORK/vol.img
sf_ok mkfs -t exfat -s 64M "$IMG" >/dev/null
sf_ok mkdir "$IMG" logs
sf_ok put "$IMG" "$LOGF" logs/LOG00001.SFL
sf_ok export --format candump "$IMG" logs/LOG00001.SFL >"$WORK/out.vol"
cmp "$WORK/out" "$WORK/out.vol" || fail "export from the volume differs from the host export"
sf_ok export -o "$WORK/out.vol2" "$IMG" /logs/LOG00001.SFL
cmp "$WORK/out" "$WORK/out.vol2" || fail "export -o from the volume differs"
sf_err 1 export "$IMG" logs/NOPE.SFL

# ---- usage ------------------------------------------------------------------------------
sf_ok export --help >"$WORK/help"
grep -q 'candump' "$WORK/help" || fail "--help does not describe candump"
sf_err 2 export
sf_err 2 export --format pcap "$LOGF"
sf_err 2 export "$IMG" a b
sf_err 2 export --bogus "$LOGF"
sf_err 1 export "$WORK/does-not-exist.SFL"
# not a log at all
head -c 100000 /dev/urandom >"$WORK/random.bin"
sf_err 1 export "$WORK/random.bin"
grep -q 'not a streamfat log' "$SF_LAST_ERR" || fail "random bytes not called 'not a streamfat log'"
log "export: all checks passed"
