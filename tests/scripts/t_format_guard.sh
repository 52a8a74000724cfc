#!/usr/bin/env bash
# Never format over data by accident (issue 26, item 2). Every command that formats - mkfs,
# log --mkfs, demo, and bench --fs through its own --destroy guard - against every kind of
# target:
#   - an exFAT volume holding 2 logs, FAT32, FAT16, an MBR-partitioned image with a volume,
#     a GPT-partitioned one, an ext4 superblock, unknown data (seeded random bytes): refused
#     with exit 1 and one line saying what is there (type, label, logs / partitions) and
#     what to do (--force; for a volume, how to log onto it), the image byte-identical
#     afterwards (sha256); with --force each is formatted;
#   - a new file, an empty file, an all-zero image: formatted without --force.
# And the demo replaces its own previous image (run twice), logging onto a refused volume
# without --mkfs adds a log to it.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3 sha256sum

SEED=${SF_SEED:-1}
cd "$WORK"

# ---- the targets ----
log "targets"
sf_ok mkfs -q -t exfat -s 64M -L LOGS exfat.img
sf_ok log -q --source gen:can --max-records 100 exfat.img
sf_ok log -q --source gen:can --max-records 100 exfat.img
sf_ok mkfs -q -t fat32 -c 512 -s 40M -L F32 fat32.img
sf_ok mkfs -q -t fat16 -s 32M fat16.img
sf_ok mkfs -q -t exfat --partition mbr -s 64M -L INMBR mbr.img
sf_ok mkfs -q -t fat32 --partition gpt -c 512 -s 40M gpt.img
truncate -s 64M zero.img
python3 - "$SEED" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
with open("unknown.img", "wb") as f:
    f.write(bytes(r.randrange(256) for _ in range(65536)))
    f.truncate(64 << 20)
with open("ext4.img", "wb") as f:        # an ext2/3/4 superblock's magic, at 1024 + 56
    f.truncate(64 << 20)
    f.seek(1080)
    f.write(b"\x53\xef")
PY
# a partition table wiped with the first MiB (review): the MBR image's volume at 1 MiB, the
# GPT image's backup header in its last sector; formatted without a word before
cp --sparse=always mbr.img lostmbr.img && cp --sparse=always gpt.img lostgpt.img
dd if=/dev/zero of=lostmbr.img bs=1M count=1 conv=notrunc status=none </dev/null
dd if=/dev/zero of=lostgpt.img bs=1M count=1 conv=notrunc status=none </dev/null
for t in exfat fat32 fat16 mbr gpt zero unknown ext4 lostmbr lostgpt; do cp --sparse=always "$t.img" "$t.orig"; done

# What the refusal must say, per target (an extended regular expression).
declare -A says=(
    [exfat]='holds an exFAT volume \(label LOGS, 2 logs\)'
    [fat32]='holds a FAT32 volume \(label F32, 0 logs\)'
    [fat16]='holds a FAT16 volume \(no label, 0 logs\)'
    [mbr]='holds an MBR partition table \(1 partition\) with an exFAT volume \(label INMBR, 0 logs\)'
    [gpt]='holds a GPT partition table \(1 partition\) with a FAT32 volume \(no label, 0 logs\)'
    [unknown]='holds data that is not a FAT or exFAT volume \(the first non-zero byte is at offset [0-9]+\)'
    [ext4]='holds an ext2/3/4 file system'
    [lostmbr]='holds an exFAT boot sector at offset 1048576 \(a volume whose partition table is gone\)'
    [lostgpt]='holds a backup GPT header in its last sector \(the partition table at its start is gone\)'
)
# What a volume's refusal says about logging onto it, per command.
declare -A loghint=([mkfs]="'streamfat log' logs onto it as it is" [log]='without --mkfs the log goes onto it' [demo]='')

# run CMD TARGET [--force]: the formatting command of that entry point.
run() {
    local cmd=$1 img=$2
    shift 2
    case $cmd in
    mkfs) sf mkfs -q -t exfat "$@" "$img" ;;
    log) sf log -q --mkfs exfat --source gen:can --max-records 50 "$@" "$img" ;;
    demo) sf demo -o "$img" "$@" >/dev/null ;;
    esac
}

for cmd in mkfs log demo; do
    for t in exfat fat32 fat16 mbr gpt unknown ext4 lostmbr lostgpt; do
        cp --sparse=always "$t.orig" "$t.img"
        before=$(sha256sum <"$t.img")
        rc=0
        run "$cmd" "$t.img" || rc=$?
        ((rc == 1)) || fail "$cmd on $t: exit $rc, expected 1"
        [[ $(wc -l <"$SF_LAST_ERR") -eq 1 ]] || fail "$cmd on $t: not one line"
        grep -qE "^streamfat $cmd: $t.img: ${says[$t]}" "$SF_LAST_ERR" ||
            fail "$cmd on $t: the line does not say '${says[$t]}'"
        grep -q -- '--force erases it' "$SF_LAST_ERR" || fail "$cmd on $t: no word of --force"
        if [[ $t != unknown && $t != ext4 && $t != lost* && -n ${loghint[$cmd]} ]]; then
            grep -qF -- "${loghint[$cmd]}" "$SF_LAST_ERR" ||
                fail "$cmd on $t: does not say how to log onto the volume"
        fi
        [[ $(sha256sum <"$t.img") == "$before" ]] || fail "$cmd on $t: the refused target changed"
    done
    log "$cmd: every target holding something refused, unchanged"

    # --force formats (the demo only once: it runs for seconds)
    for t in exfat fat32 fat16 mbr gpt unknown ext4 lostmbr lostgpt; do
        [[ $cmd == demo && $t != exfat ]] && continue
        cp --sparse=always "$t.orig" "$t.img"
        run "$cmd" "$t.img" --force || fail "$cmd --force on $t: exit $?"
        sf_ok info "$t.img" >"$WORK/info"
        grep -qi exfat "$WORK/info" || fail "$cmd --force on $t: no exFAT volume after"
        n=$(sf_ok ls "$t.img" | grep -c '\.SFL$' || true)
        want=0
        [[ $cmd == log ]] && want=1
        [[ $cmd == demo ]] && want=$n       # the demo's own count
        ((n == want)) || fail "$cmd --force on $t: $n logs, expected $want"
    done
    log "$cmd --force: formatted"

    # a new file, an empty file, an all-zero image: no --force needed
    for t in new empty zero; do
        rm -f "$t.img"
        [[ $t == empty ]] && : >"$t.img"
        [[ $t == zero ]] && cp --sparse=always zero.orig zero.img
        size=()
        [[ $cmd == mkfs && $t != zero ]] && size=(-s 64M)
        [[ $cmd == log && $t != zero ]] && size=(--size 64M)
        run "$cmd" "$t.img" "${size[@]}" || fail "$cmd on a $t image: exit $?"
        sf_ok info "$t.img" >/dev/null
    done
    log "$cmd: new, empty and all-zero targets formatted"
done

# bench --fs formats the target after its raw pass: its own guard (--destroy, docs/BENCH.md)
# refuses every target holding a volume or partition table before the first write.
for t in exfat fat32 fat16 mbr gpt ext4; do
    cp --sparse=always "$t.orig" "$t.img"
    before=$(sha256sum <"$t.img")
    sf_err 1 bench --fs --size 8M --bs 64K "$t.img"
    grep -q -- '--destroy' "$SF_LAST_ERR" || fail "bench --fs on $t: no word of --destroy"
    [[ $(sha256sum <"$t.img") == "$before" ]] || fail "bench --fs on $t: the refused target changed"
done
sf_ok bench --fs --size 8M --bs 64K --destroy --json exfat.img >/dev/null
sf_ok info exfat.img | matches -i exfat || fail "bench --fs --destroy: no exFAT volume after"
log "bench --fs: refused without --destroy, formats with it"

log "the demo replaces its own image; logging onto a refused volume without --mkfs"
rm -f d.img
sf_ok demo -o d.img >/dev/null
sf_ok demo -o d.img >"$WORK/demo2.out"
grep -q '^demo: OK$' "$WORK/demo2.out" || fail "the second demo on its own image did not end OK"
cp --sparse=always exfat.orig exfat.img
sf_err 1 log -q --mkfs exfat --source gen:can --max-records 50 exfat.img
sf_ok log -q --source gen:can --max-records 50 exfat.img
n=$(sf_ok ls exfat.img | grep -c '\.SFL$')
((n == 3)) || fail "log without --mkfs: $n logs on the volume, expected 3"
