#!/bin/bash
# The sources of streamfat log other than gen: candump lines on stdin (all frame kinds,
# malformed lines counted, filters counted), raw bytes on stdin, UDP datagrams on 127.0.0.1
# from a python3 sender, the latency probe for 1 s (and its trigger rule), and the SocketCAN
# reading loop fed through socketpair(AF_UNIX, SOCK_SEQPACKET) (these kernels have no AF_CAN).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
need_tool fsck.exfat python3

IMG=$WORK/src.img

log "stdin: candump -L lines (SFF, EFF, RTR, CAN FD with BRS/ESI, error frames) on two interfaces"
python3 - "$WORK/in.log" "$WORK/want.log" <<'PY'
import sys, random, time
r = random.Random(7)
t = int(time.time()) * 1000000
src, want = open(sys.argv[1], "w"), open(sys.argv[2], "w")
fd_lens = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64]
for i in range(5000):
    t += r.randrange(0, 2000)
    ifc = "can0" if i % 3 else "vcan1"
    k = i % 6
    old = None
    if k == 0:
        fr = "%03X#%s" % (r.randrange(0x800), bytes(r.randbytes(r.randrange(9))).hex().upper())
    elif k == 1:
        fr = "%08X#%s" % (r.randrange(1 << 29), bytes(r.randbytes(8)).hex().upper())
    elif k == 2:
        fr = "%03X#R" % r.randrange(0x800)
    elif k == 3:
        # the flags digit as candump writes it on Linux 6.1 (FDF, 4..7) or before (0..3):
        # both are read; export and decode_check write the FDF form
        cid, fl, d = r.randrange(0x800), r.randrange(8), r.randbytes(r.choice(fd_lens)).hex().upper()
        fr = "%03X##%X%s" % (cid, fl | 4, d)
        old = "%03X##%X%s" % (cid, fl, d)
    elif k == 4:
        fr = "%08X##5%s" % (r.randrange(1 << 29), r.randbytes(64).hex().upper())
    else:
        fr = "%08X#%s" % (0x20000000 | r.choice([4, 0x40, 0x80]), r.randbytes(8).hex().upper())
    line = "(%010d.%06d) %s %s" % (t // 1000000, t % 1000000, ifc, fr)
    src.write(line.replace(fr, old) + "\n" if old else line + "\n")
    want.write(line + "\n")
    if i in (100, 4000):
        src.write("this is not a frame\n")        # counted as bad input
src.write("(1.000000) can0 123#1\n")              # odd number of hex digits: bad
PY
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/stdin.json" --source stdin "$IMG" <"$WORK/in.log" || fail "stdin run failed"
jcheck "$WORK/stdin.json" 'j["records_offered"] == 5002 and j["records_in"] == 5002 and j["bad_input"] == 3 and j["records_dropped"] == 0'
decode "$IMG" --clean --candump "$WORK/got.log"
jcheck "$WORK/dec.json" 'j["frames"] == 5000 and j["channel_records"] >= 2'
cmp "$WORK/want.log" "$WORK/got.log" ||
    { diff "$WORK/want.log" "$WORK/got.log" | head >&2; fail "decoded frames differ from the input lines"; }
run_fsck_exfat "$IMG"
if have_export; then
    sf_ok export --format candump "$IMG" LOG00001.SFL >"$WORK/export.log"
    cmp "$WORK/want.log" "$WORK/export.log" || { diff "$WORK/want.log" "$WORK/export.log" | head >&2; fail "streamfat export differs from the input"; }
fi

log "stdin with filters: keep 0x1xx, reject 0x123, counted"
python3 - "$WORK/f.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(4096):
        f.write("(1700000000.%06d) can0 %03X#%02X\n" % (i, i % 0x800, i & 255))
PY
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/filt.json" --source stdin --filter 100/700 --filter '!123/7FF' "$IMG" <"$WORK/f.log" || fail "filter run failed"
# ids 0x100..0x1FF appear twice each in 0..4095 (mod 0x800): 512, minus 2 for 0x123
# (+1: the CHANNEL record naming can0 goes through the ring too, as records_in counts it)
jcheck "$WORK/filt.json" 'j["records_offered"] == 511 and j["records_in"] == 511 and j["records_filtered"] == 4096 - 510'
decode "$IMG" --clean --candump "$WORK/filt.out"
! grep -vqE ' 1[0-9A-F][0-9A-F]#' "$WORK/filt.out" || fail "a frame outside the filter was recorded"
! grep -q ' 123#' "$WORK/filt.out" || fail "the rejected id was recorded"

log "stdin --raw: bytes in, bytes out"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
head -c 3000001 /dev/urandom >"$WORK/raw.bin"
log_json "$WORK/raw.json" --source stdin --raw "$IMG" <"$WORK/raw.bin" || fail "raw stdin run failed"
sf_ok get "$IMG" LOG00001.BIN "$WORK/raw.out"
cmp "$WORK/raw.bin" "$WORK/raw.out" || fail "raw file differs from the input"
run_fsck_exfat "$IMG"

log "gen:raw with --max-bytes: the pattern, exactly"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 128M "$IMG"
log_json "$WORK/graw.json" --source gen:raw --raw --max-bytes 50000000 "$IMG" || fail "gen:raw run failed"
jcheck "$WORK/graw.json" 'j["records_dropped"] == 0 and j["bytes_in"] == 50000000 and j["files"] == 1'
decode "$IMG" --raw --expect-bytes 50000000
run_fsck_exfat "$IMG"

log "udp: 2000 datagrams from python3 to 127.0.0.1"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
timeout 60 "$SF" log --json --source udp:0 --max-records 2000 "$IMG" >"$WORK/udp.json" 2>"$WORK/udp.err" &
BG=$!
on_exit "kill $BG"
udp_wait_port "$WORK/udp.err" "$BG"
python3 - "$UDP_PORT" "$WORK/udp.sent" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
with open(sys.argv[2], "w") as f:
    for i in range(2000):
        d = bytes([i & 255]) * (1 + i % 1400)
        s.sendto(d, ("127.0.0.1", port))
        f.write("%d\n" % len(d))
        if i % 50 == 0:
            time.sleep(0.002)
PY
rc=0
wait "$BG" || rc=$?
cat "$WORK/udp.err" >&2
has_sanitizer_report "$WORK/udp.err" && fail "sanitizer report"
((rc == 0)) || { cat "$WORK/udp.json" >&2; fail "udp run exited $rc"; }
jcheck "$WORK/udp.json" 'j["records_in"] == 2000 and j["records_dropped"] == 0'
decode "$IMG" --clean
jcheck "$WORK/dec.json" 'j["samples"] == 2000'
run_fsck_exfat "$IMG"

# Like cyclictest, periods missed while the probe was not running are skipped: a loaded
# 2-core machine gets fewer than 1000 samples.
log "latency:1ms for 1 s, with a latency trigger rule"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/lat.json" --source latency:1ms --duration 1 "$IMG" || fail "latency run failed"
cat "$WORK/lat.json" >&2
# At most one sample per period of the run's own elapsed time (which includes the stop,
# so a loaded machine's late stop adds a sample or two), not 1001.
jcheck "$WORK/lat.json" '400 <= j["latency_samples"] <= j["seconds"] * 1000 + 2 and j["records_in"] == j["latency_samples"] and j["latency_max_ns"] > 0'
decode "$IMG" --clean
jcheck "$WORK/dec.json" "j['latency'] == $(jget "$WORK/lat.json" records_in)"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
log_json "$WORK/lat2.json" --source latency:1ms --duration 1 --trigger 'latency>1ns' --pre 100ms --post 100ms "$IMG" ||
    fail "latency trigger run failed"
jcheck "$WORK/lat2.json" 'j["triggers"] >= 1 and j["files"] >= 1 and j["rules_fired"] >= 1'
decode "$IMG" --clean
jcheck "$WORK/dec.json" 'j["latency"] > 0 and "latency" in j["first_annotation"]'

log "CAN datagrams through socketpair(AF_UNIX, SOCK_SEQPACKET): can_frame and canfd_frame"
rm -f "$IMG"; sf_ok mkfs -q -t exfat -s 64M "$IMG"
python3 - "$SF" "$IMG" "$WORK/pair.json" "$WORK/pair.want" <<'PY'
import socket, struct, subprocess, sys, random
sf, img, out, want = sys.argv[1:5]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sf, "log", "--json", "--source", "canpair:%d" % b.fileno(),
                      "--filter", "!7FF/1FFFFFFF", img], pass_fds=[b.fileno()],
                     stdout=open(out, "w"))
b.close()
r = random.Random(3)
EFF, RTR, ERR = 0x80000000, 0x40000000, 0x20000000
lines = []
for i in range(3000):
    k = i % 5
    if k == 0:
        cid, d = r.randrange(0x7FF), r.randbytes(r.randrange(9))
        a.send(struct.pack("<IB3x8s", cid, len(d), d))
        lines.append("%03X#%s" % (cid, d.hex().upper()))
    elif k == 1:
        cid, d = r.randrange(1 << 29), r.randbytes(8)
        a.send(struct.pack("<IB3x8s", cid | EFF, 8, d))
        lines.append("%08X#%s" % (cid, d.hex().upper()))
    elif k == 2:
        cid = r.randrange(0x7FF)
        a.send(struct.pack("<IB3x8s", cid | RTR, 0, b""))
        lines.append("%03X#R" % cid)
    elif k == 3:
        cid, d = r.randrange(0x7FF), r.randbytes(r.choice([12, 16, 32, 64]))
        a.send(struct.pack("<IBBxx64s", cid, len(d), 0x05, d))   # FDF | BRS
        lines.append("%03X##5%s" % (cid, d.hex().upper()))
    else:
        a.send(struct.pack("<IB3x8s", ERR | 0x04, 8, bytes(8)))
        lines.append("%08X#%s" % (ERR | 0x04, "00" * 8))
    if i % 500 == 0:
        a.send(struct.pack("<IB3x8s", 0x7FF, 0, b""))          # rejected by the filter
a.send(b"short")                                                # not a frame: counted
a.close()                                                       # end of input ends the run
rc = p.wait(timeout=60)
open(want, "w").write("\n".join(lines) + "\n")
sys.exit(rc)
PY
cat "$WORK/pair.json" >&2
jcheck "$WORK/pair.json" 'j["records_in"] == 3000 and j["records_filtered"] == 6 and j["bad_input"] == 1'
decode "$IMG" --clean --candump "$WORK/pair.got"
awk '{print $3}' "$WORK/pair.got" | cmp - "$WORK/pair.want" || fail "socketpair frames differ"
run_fsck_exfat "$IMG"
