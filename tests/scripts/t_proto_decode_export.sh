#!/usr/bin/env bash
# streamfat export -f uds, -f obd, -f j1939 (cli/formats/export_{uds,obd,j1939}.c over
# src/proto/): a logged session of OBD-II polling (single-frame PIDs, the supported-PID
# bitmap, a multi-frame mode 03 answer, a VIN over three frames), UDS (response pending
# then the answer, a negative response, ReadDTCInformation 0x02, a suppressed
# TesterPresent) and J1939 (a DM1 single frame, a DM1 by BAM, an EEC1 frame) with plain
# frames between; each view writes what docs/EXPORT.md says, built by hand from the
# standards here; options refused with one line where they do not apply.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/loglib.sh"
need_sf
IMG=$FASTWORK/d.img

python3 - "$WORK/in.log" <<'PY'
import sys
t = [1700000000.0]
out = []
def f(cid, data, pad=True):
    t[0] += 0.001
    if pad and len(cid) == 3:
        data = data + b"\x55" * (8 - len(data))
    out.append("(%.6f) can0 %s#%s" % (t[0], cid, data.hex().upper()))
def isotp(cid, fc, msg):
    if len(msg) <= 7:
        f(cid, bytes([len(msg)]) + msg)
        return
    f(cid, bytes([0x10 | len(msg) >> 8, len(msg) & 0xFF]) + msg[:6])
    f(fc, b"\x30\x00\x00")
    rest, sn = msg[6:], 1
    while rest:
        f(cid, bytes([0x20 | sn & 15]) + rest[:7])
        rest, sn = rest[7:], sn + 1
f("123", b"\x11\x22", pad=False)
# OBD-II
isotp("7DF", "7E8", b"\x01\x0C"); isotp("7E8", "7E0", b"\x41\x0C\x1A\xF8")
isotp("7DF", "7E8", b"\x01\x05"); isotp("7E8", "7E0", b"\x41\x05\x7B")
isotp("7DF", "7E8", b"\x01\x00"); isotp("7E8", "7E0", b"\x41\x00\xBE\x1F\xA8\x13")
isotp("7DF", "7E8", b"\x03"); isotp("7E8", "7E0", b"\x43\x03\x03\x01\x41\x23\xC0\x01")
isotp("7DF", "7E8", b"\x09\x02"); isotp("7E8", "7E0", b"\x49\x02\x01" + b"1FTFW1ET5DFC10312")
# UDS
isotp("7E0", "7E8", b"\x22\xF1\x90"); isotp("7E8", "7E0", b"\x7F\x22\x78")
isotp("7E8", "7E0", b"\x62\xF1\x90" + b"WDB1234567A123456")
isotp("7E0", "7E8", b"\x19\x02\x08")
isotp("7E8", "7E0", b"\x59\x02\xFF\x12\x34\x56\x2F\xC1\x00\x87\x09")
isotp("7E0", "7E8", b"\x3E\x80")
isotp("7E0", "7E8", b"\x22\xF1\xA0"); isotp("7E8", "7E0", b"\x7F\x22\x31")
# J1939: DM1 single frame from 0x00 (SPN 190 FMI 2 OC 5), EEC1, DM1 by BAM from 0x03
f("18FECA00", bytes.fromhex("4B1CBE000205FFFF"))
f("0CF00400", bytes.fromhex("FFFFFF6819FFFFFF"))
dm = bytes.fromhex("0400") + bytes.fromhex("6E000301") + bytes.fromhex("5A5A5183") + \
     bytes.fromhex("FFFFFF7E")
f("1CECFF03", bytes([32, len(dm), 0, 2, 0xFF, 0xCA, 0xFE, 0x00]))
f("1CEBFF03", b"\x01" + dm[:7]); f("1CEBFF03", b"\x02" + dm[7:14])
f("124", b"\x33", pad=False)
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
sf_ok mkfs -q -t exfat -s 32M "$IMG"
log_json "$WORK/log.json" --source "file:$WORK/in.log" --fast "$IMG" || fail "log failed"
sf_ok export -f uds --relative -o "$WORK/rel.jsonl" "$IMG" LOG00001.SFL
for v in uds obd j1939; do
    sf_ok export -f $v -o "$WORK/$v.jsonl" "$IMG" LOG00001.SFL
done

python3 - "$WORK" <<'PY' || fail "a decoded view is not as documented (above)"
import json, sys
w = sys.argv[1]
rd = lambda v: [json.loads(l) for l in open(f"{w}/{v}.jsonl")]
uds, obd, j = rd("uds"), rd("obd"), rd("j1939")

# UDS: requests and responses, in order; OBD-II modes are not here
got = [(m["id"], m["kind"], m["sid"], m["service"], m["sub"], m["nrc"], m["nrc_name"],
        m["did"], m["data"], m["dtcs"]) for m in uds]
want = [
 ("7E0", "request", "22", "ReadDataByIdentifier", None, None, None, "F190", "", None),
 ("7E8", "negative", "22", "ReadDataByIdentifier", None, "78",
  "requestCorrectlyReceivedResponsePending", None, "", None),
 ("7E8", "positive", "22", "ReadDataByIdentifier", None, None, None, "F190",
  b"WDB1234567A123456".hex().upper(), None),
 ("7E0", "request", "19", "ReadDTCInformation", 2, None, None, None, "08", None),
 ("7E8", "positive", "19", "ReadDTCInformation", 2, None, None, None, "1234562FC1008709",
  [{"dtc": "123456", "status": "2F"}, {"dtc": "C10087", "status": "09"}]),
 ("7E0", "request", "3E", "TesterPresent", 0, None, None, None, "", None),
 ("7E0", "request", "22", "ReadDataByIdentifier", None, None, None, "F1A0", "", None),
 ("7E8", "negative", "22", "ReadDataByIdentifier", None, "31", "requestOutOfRange", None,
  "", None),
]
assert got == want, "\n".join(map(str, got))
# pairing: the pending answer and the answer after it name the request's time
assert uds[1]["req_ts"] == uds[0]["ts_first"] and uds[2]["req_ts"] == uds[0]["ts_first"]
assert uds[4]["req_ts"] == uds[3]["ts_first"] and uds[7]["req_ts"] == uds[6]["ts_first"]
assert uds[0]["req_ts"] is None and uds[2]["fc_id"] == "7E0"
# --relative: every time from the log's start, req_ts too
rel = rd("rel")
t0 = uds[0]["ts_first"] - rel[0]["ts_first"]
assert t0 > 1_600_000_000 * 10**9 and rel[0]["ts_first"] < 10**9, rel[0]
assert all(r["req_ts"] is None and a["req_ts"] is None or r["req_ts"] == a["req_ts"] - t0
           for r, a in zip(rel, uds)), rel

# OBD-II: answers only
assert [m["mode"] for m in obd] == [1, 1, 1, 3, 9], obd
assert obd[0]["pids"] == [{"pid": 12, "name": "rpm", "value": 1726, "unit": "rpm"}]
assert obd[1]["pids"] == [{"pid": 5, "name": "coolant_temp", "value": 83, "unit": "degC"}]
bm = 0xBE1FA813
assert obd[2]["pids"] == [{"pid": 0, "name": "pids_supported",
                           "supported": [b + 1 for b in range(32) if bm >> (31 - b) & 1]}]
assert obd[3]["dtcs"] == ["P0301", "C0123", "U0001"] and obd[3]["pids"] is None
assert obd[4]["vin"] == "1FTFW1ET5DFC10312" and obd[4]["dtcs"] is None

# J1939: the DM1 frame, EEC1, the BAM's message (its TP frames are not lines)
assert [(m["pgn"], m["prio"], m["sa"], m["da"], m["tp"]) for m in j] == \
    [(0xFECA, 6, 0, 255, False), (0xF004, 3, 0, 255, False), (0xFECA, 7, 3, 255, True)], j
d = j[0]["dm"]
assert (d["mil"], d["red_stop"], d["amber_warning"], d["protect"]) == \
    ("on", "off", "error", "na"), d
assert (d["mil_flash"], d["red_stop_flash"], d["amber_warning_flash"],
        d["protect_flash"]) == ("slow", "fast", "off", "slow"), d
assert d["dtcs"] == [{"spn": 190, "fmi": 2, "oc": 5, "cm": 0}]
assert j[1]["dm"] is None and j[1]["data"] == "FFFFFF6819FFFFFF"
d = j[2]["dm"]
assert d["mil"] == "off" and d["amber_warning"] == "on"
spn1 = 0x5A << 11 | 0x5A << 3 | 0x51 >> 5
assert d["dtcs"] == [{"spn": 110, "fmi": 3, "oc": 1, "cm": 0},
                     {"spn": spn1, "fmi": 0x11, "oc": 3, "cm": 1},
                     {"spn": 0x7FFFF, "fmi": 31, "oc": 126, "cm": 0}], d
assert j[2]["length"] == 14 and j[2]["ts_first"] < j[2]["ts_last"]
PY

log "options: --isotp-pair for uds/obd, not j1939; --fast-pgn for messages only"
sf_ok export -f uds --isotp-pair 6F1:612:ext -o "$WORK/u2.jsonl" "$IMG" LOG00001.SFL
cmp -s "$WORK/u2.jsonl" "$WORK/uds.jsonl" || fail "a pair not in the log changed -f uds"
sf_err 2 export -f j1939 --isotp-pair 6F1:612 "$IMG" LOG00001.SFL
sf_err 2 export -f obd --fast-pgn 129029 "$IMG" LOG00001.SFL
log "ok"
