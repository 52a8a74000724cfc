#!/usr/bin/env bash
# Issue 26 item 3 (c): a log killed before its first regular checkpoint is recovered. The
# reproducer: `streamfat log --source gen:can,rate=200000 --chunk 8K --sync-interval 10s`
# killed with SIGKILL after about 3 s left some 2,300 valid blocks on the device, and
# `fsck --repair` removed LOG00001.SFL as "empty log file without a header block" (the
# entry still had first cluster 0) and freed the clusters holding them. Now the logger
# checkpoints right behind each file's header block (docs/DESIGN.md, "Finding a file after
# a cut"), so the entry names the file from its first record on; on exFAT and FAT32:
#   - before repair the file is there with its header block (the checker reports the
#     blocks past its size as recoverable);
#   - `fsck --repair` re-attaches every block of the file that reached the image: all the
#     record blocks of its file_id found on the image, but at most the one being written
#     when the process died (none invented: each is checked at its place);
#   - after repair fsck, fsck.fat/fsck.exfat are clean and `streamfat export` gives every
#     gen:can frame from 0 on, in order, without a gap, and no damage.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool python3 awk
export SF_TIMEOUT=120
img=$FASTWORK/k.img

for fs in exfat fat32; do
    log "$fs: gen:can at 200000/s, 8 KiB blocks, checkpoints every 10 s, SIGKILL after ~3 s"
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 256M "$img" >/dev/null
    "$SF" log --source gen:can,rate=200000 --chunk 8K --sync-interval 10s "$img" >/dev/null 2>"$WORK/log.err" &
    pid=$!
    on_exit "kill -9 $pid"
    # Wait for data on the image (the header, then records), not for a fixed time: about
    # 3 s of records, well before the first checkpoint at 10 s.
    for ((i = 0; ; i++)); do
        kill -0 "$pid" 2>/dev/null || { cat "$WORK/log.err" >&2; fail "$fs: the log ended early"; }
        ((i < 300)) || fail "$fs: nothing logged within 30 s"
        n=$(python3 -c 'import sys; print(open(sys.argv[1],"rb").read().count(b"SFLB\x01\x00\x02\x00"))' "$img")
        ((n >= 500)) && break
        sleep 0.1
    done
    sleep 2
    kill -9 "$pid" || fail "$fs: the log ended before it was killed"
    wait "$pid" 2>/dev/null || true
    has_sanitizer_report "$WORK/log.err" && { cat "$WORK/log.err" >&2; fail "$fs: sanitizer report from log"; }
    size=$(sf ls -l "$img" LOG00001.SFL | awk '$1 == "file" { print $2 }')
    [[ $size == 8192 ]] || fail "$fs: LOG00001.SFL has size '$size' before repair, expected its header block (8192)"
    # The file's record blocks on the image (by header: magic, kind 2, its file_id).
    fid=$(sf cat "$img" LOG00001.SFL | python3 -c 'import struct,sys; print(struct.unpack_from("<Q", sys.stdin.buffer.read(), 8)[0])')
    onimg=$(python3 - "$img" "$fid" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
pat = b"SFLB" + struct.pack("<HHQ", 1, 2, int(sys.argv[2]))
n, p = 0, d.find(pat)
while p >= 0:
    n += 1
    p = d.find(pat, p + 1)
print(n)
PY
)
    ((onimg >= 1000)) || fail "$fs: only $onimg record blocks on the image (test setup)"
    sf fsck --json "$img" >"$WORK/fsck.json" || true
    found=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recovered_blocks"])' "$WORK/fsck.json")
    rc=0; sf fsck --repair "$img" >"$WORK/fsck.out" || rc=$?
    ((rc == 1)) || { cat "$WORK/fsck.out" >&2; fail "$fs: fsck --repair exited $rc"; }
    grep -q 'LOG00001.SFL: empty log file' "$WORK/fsck.out" && { cat "$WORK/fsck.out" >&2; fail "$fs: the log was removed as empty"; }
    rc=0; sf fsck "$img" >"$WORK/fsck.out" || rc=$?
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs: not clean after repair (exit $rc)"; }
    if [[ $fs == exfat ]]; then run_fsck_exfat "$img"; else run_fsck_fat "$img"; fi
    rc=0; sf export "$img" /LOG00001.SFL >"$WORK/frames.txt" 2>"$WORK/export.err" || rc=$?
    ((rc == 0)) || { cat "$WORK/export.err" >&2; fail "$fs: export after repair exited $rc"; }
    frames=$(python3 - "$WORK/frames.txt" <<'PY'
import sys
n = 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3 or '#' not in f[2]:
        continue
    cid, data = f[2].split('#')
    k = int.from_bytes(bytes.fromhex(data), 'little')
    if k != n:
        sys.exit(f"frame {n}: {f[2]}")
    n += 1
print(n)
PY
) || fail "$fs: frames after repair not in order or with a gap"
    size=$(sf ls -l "$img" LOG00001.SFL | awk '$1 == "file" { print $2 }')
    blocks=$((size / 8192 - 1))
    ((blocks == found)) || fail "$fs: $blocks record blocks after repair, fsck found $found"
    ((blocks >= onimg - 1 && blocks <= onimg)) ||
        fail "$fs: $blocks record blocks re-attached, $onimg on the image"
    echo "$fs: $onimg record blocks on the image, $blocks re-attached, $frames frames back in order"
done
