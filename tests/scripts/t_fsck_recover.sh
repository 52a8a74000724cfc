#!/usr/bin/env bash
# Acceptance (issue 6, fsck): log recovery past the last checkpoint, on exFAT, FAT32 and
# FAT16. The logcut helper writes a framed log through the streaming path and stops as a
# killed writer does (entry at the checkpoint's size, blocks after it on the medium, the
# allocation ahead leaked). Then:
#   - `streamfat fsck` finds exactly the blocks written after the checkpoint (exit 1),
#     `fsck --repair` re-attaches them, a second fsck is clean, the independent checker is
#     clean, and `streamfat export` decodes every frame of every block in order;
#   - stale blocks of a deleted log (another file_id) lying right where the next block of
#     the new log would be are never attached (checked: one is there, at that offset);
#   - a gap in the sequence numbers ends the recovery at the gap;
#   - a closed file gets nothing attached.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool python3 awk
export SF_TIMEOUT=120
img=$FASTWORK/r.img

# fsck_rc ARGS...: streamfat fsck's exit status (0, 1 or 2 are all answers here).
fsck_rc() {
    local rc=0
    sf fsck "$@" >"$WORK/fsck.out" || rc=$?
    echo "$rc"
}
# recovered IMG: recovered_blocks from fsck --json (without repair).
recovered() {
    sf fsck --json "$1" >"$WORK/fsck.json" || true
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recovered_blocks"])' "$WORK/fsck.json"
}
indep_clean() {
    if [[ $1 == exfat ]]; then run_fsck_exfat "$img"; else run_fsck_fat "$img"; fi
}
# frames IMG PATH FILE_ID NBLOCKS: export yields exactly NBLOCKS * 20 frames, the data of
# frame r of block s (in file order) being FILE_ID's low 16 bits << 48 | s * 100 + r.
frames() {
    sf export "$1" "$2" >"$WORK/frames.txt" 2>"$WORK/export.err" || fail "export $2 failed"
    python3 - "$WORK/frames.txt" "$3" "$4" <<'PY' || fail "export of $2 is not the frames written"
import sys
lines = open(sys.argv[1]).read().split()
frames = [l for l in lines if '#' in l]
fid, n = int(sys.argv[2], 16) & 0xFFFF, int(sys.argv[3])
if len(frames) != n * 20:
    sys.exit(f"{len(frames)} frames, expected {n * 20}")
for i, f in enumerate(frames):
    s, r = i // 20 + 1, i % 20
    want = f"{0x100 + r:03X}#{(fid << 48) | (s * 100 + r):016X}"
    if f != want:
        sys.exit(f"frame {i}: {f}, expected {want}")
PY
}

for fs in exfat fat32 fat16; do
    log "$fs: a log cut 20 blocks after its checkpoint"
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 64M "$img" >/dev/null
    run_helper logcut "$img" /LOG00001.SFL aa01 30 10 >/dev/null
    n=$(recovered "$img")
    ((n == 20)) || fail "$fs: fsck found $n blocks past the checkpoint, expected 20"
    frames "$img" /LOG00001.SFL aa01 10        # before repair: what the checkpoint made visible
    rc=$(fsck_rc --repair "$img")
    ((rc == 1)) || { cat "$WORK/fsck.out" >&2; fail "$fs: fsck --repair exited $rc, expected 1"; }
    grep -q 're-attached' "$WORK/fsck.out" || fail "$fs: no re-attach reported"
    rc=$(fsck_rc "$img")
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs: not clean after repair (exit $rc)"; }
    indep_clean "$fs"
    frames "$img" /LOG00001.SFL aa01 30

    log "$fs: stale blocks of a deleted log right after the new log's last block"
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 64M "$img" >/dev/null
    run_helper logcut "$img" /OLD.SFL bb02 40 0 0 close >/dev/null
    sf_ok rm "$img" /OLD.SFL
    run_helper logcut "$img" /LOG00002.SFL cc03 15 10 >/dev/null
    # The old log's block 16 must be exactly where the new log's block 16 would be: else
    # this case would test nothing.
    python3 - "$img" <<'PY' || fail "$fs: no stale block at the new log's next block (test setup)"
import struct, sys
d = open(sys.argv[1], 'rb').read()
def find(fid, seq, kind):
    pat = b'SFLB' + struct.pack('<HHQQ', 1, kind, fid, seq)
    return d.find(pat)
hdr = find(0xcc03, 0, 1)
old = find(0xbb02, 16, 2)
if hdr < 0 or old != hdr + 16 * 4096:
    sys.exit(f"new header at {hdr}, old block 16 at {old}")
PY
    n=$(recovered "$img")
    ((n == 5)) || fail "$fs: $n blocks found past the checkpoint, expected 5 (stale ones taken?)"
    rc=$(fsck_rc --repair "$img")
    ((rc == 1)) || fail "$fs: fsck --repair exited $rc"
    rc=$(fsck_rc "$img")
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs: not clean after repair"; }
    indep_clean "$fs"
    frames "$img" /LOG00002.SFL cc03 15

    log "$fs: a gap in the sequence ends the recovery"
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 64M "$img" >/dev/null
    run_helper logcut "$img" /LOG00003.SFL dd04 30 10 20 >/dev/null   # seq 20 missing
    n=$(recovered "$img")
    ((n == 9)) || fail "$fs: $n blocks found, expected 9 (11..19, then the gap)"
    rc=$(fsck_rc --repair "$img")
    ((rc == 1)) || fail "$fs: fsck --repair exited $rc"
    indep_clean "$fs"
    frames "$img" /LOG00003.SFL dd04 19

    log "$fs: a closed log gets nothing attached"
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 64M "$img" >/dev/null
    run_helper logcut "$img" /LOG00004.SFL ee05 12 4 0 close >/dev/null
    rc=$(fsck_rc "$img")
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs: a cleanly closed log is not clean"; }
    frames "$img" /LOG00004.SFL ee05 12
done

# The real logger killed with SIGKILL well after a checkpoint: the blocks it wrote since are
# found and re-attached, and every frame of the file decodes in order without a gap (gen:can
# frame k carries k, little-endian).
gen_frames_in_order() {
    sf export "$img" /LOG00001.SFL >"$WORK/frames.txt" 2>"$WORK/export.err" || fail "export failed"
    python3 - "$WORK/frames.txt" <<'PY'
import sys
n = 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3 or '#' not in f[2]:
        continue
    cid, data = f[2].split('#')
    k = int.from_bytes(bytes.fromhex(data), 'little')
    if k != n or int(cid, 16) != 0x100 + n % 16:
        sys.exit(f"frame {n}: {f[2]}")
    n += 1
print(n)
PY
}
for fs in exfat fat32; do
    log "$fs: streamfat log killed with SIGKILL 0.5 s after its first checkpoint"
    rm -f "$img"
    sf_ok mkfs -q -t "$fs" -s 256M "$img" >/dev/null
    "$SF" log --source gen:can,rate=50000 --sync-interval 3s "$img" >/dev/null 2>"$WORK/log.err" &
    pid=$!
    on_exit "kill -9 $pid"
    # The first checkpoint is visible when the file's size on the image (0 until then) is
    # not; 0.5 s after it about 800 KB (12 blocks) lie past it and the next one is 2.5 s
    # away. (A fixed sleep against the 3 s interval killed before the first checkpoint when
    # the start was slow.)
    for ((i = 0; ; i++)); do
        size=$(timeout 30 "$SF" ls -l "$img" LOG00001.SFL 2>/dev/null | awk '$1 == "file" { print $2 }' || true)
        [[ ${size:-0} -gt 0 ]] && break
        kill -0 "$pid" 2>/dev/null || { cat "$WORK/log.err" >&2; fail "$fs: the log ended before its first checkpoint"; }
        ((i < 300)) || fail "$fs: no checkpoint visible within 30 s"
        sleep 0.1
    done
    sleep 0.5
    kill -9 "$pid" || fail "$fs: the log ended before it was killed"
    wait "$pid" 2>/dev/null || true
    has_sanitizer_report "$WORK/log.err" && { cat "$WORK/log.err" >&2; fail "$fs: sanitizer report from log"; }
    before=$(gen_frames_in_order) || fail "$fs: frames before repair not in order"
    n=$(recovered "$img")
    ((n >= 1)) || fail "$fs: nothing found past the checkpoint 0.5 s after it"
    rc=$(fsck_rc --repair "$img")
    ((rc == 1)) || { cat "$WORK/fsck.out" >&2; fail "$fs: fsck --repair exited $rc"; }
    rc=$(fsck_rc "$img")
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs: not clean after repair"; }
    indep_clean "$fs"
    after=$(gen_frames_in_order) || fail "$fs: frames after repair not in order"
    ((after > before)) || fail "$fs: $after frames after repair, $before before"
    echo "$fs: $before frames durable at the checkpoint, $after after re-attaching $n blocks"
done
