#!/usr/bin/env bash
# Acceptance at scale: 10,000 files in one directory (made by the many_files helper in one
# mount) listed by streamfat and exfat-fuse; a 4 GiB + 64 MiB file (6 GiB with SF_LONG=1)
# streamed from stdin, its checksum read back; a sparse 4 TB image formatted and mounted
# (times printed, not asserted).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.exfat losetup fusermount python3 sha256sum

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f} s')" "$1" "$(now)"; }

log "10,000 files in one directory"
img=$FASTWORK/scale.img         # 10,000 closes = 10,000 flushes: tmpfs
truncate -s 256M "$img"
sf_ok mkfs -t exfat "$img" >/dev/null
t=$(now)
run_helper many_files "$img" 10000 many
log "many_files: $(since "$t")"
# the rest on disk like every other image (the CLI's O_DIRECT path is not tmpfs' business)
cp --sparse=always "$img" "$WORK/scale.img"
rm -f "$img"
img=$WORK/scale.img
t=$(now)
sf_ok ls "$img" many >"$WORK/ls.out"
log "ls of 10,000: $(since "$t")"
n=$(wc -l <"$WORK/ls.out")
((n == 10000)) || fail "streamfat ls many: $n names, expected 10000"
[[ $(head -n1 "$WORK/ls.out") == f00000.txt && $(tail -n1 "$WORK/ls.out") == f09999.txt ]] ||
    fail "streamfat ls many: unexpected first/last names"
for i in 0 4999 9999; do
    f=$(printf 'many/f%05d.txt' "$i")
    [[ $(sf_ok cat "$img" "$f") == "file $i" ]] || fail "cat $f: wrong content"
done
# insertion and removal in the big directory
printf 'late\n' >"$WORK/late.txt"
sf_ok put "$img" "$WORK/late.txt" many/late.txt
sf_ok rm "$img" many/f05000.txt
rc=0; sf cat "$img" many/f05000.txt >/dev/null || rc=$?
((rc == 1)) || fail "cat of a removed file exited $rc, expected 1"
run_fsck_exfat "$img"
fuse_mount "$img" "$WORK/mnt"
n=$(ls -1 "$WORK/mnt/many" | wc -l)
((n == 10000)) || fail "exfat-fuse lists $n names in many/, expected 10000"
[[ $(cat "$WORK/mnt/many/f09999.txt") == "file 9999" ]] || fail "exfat-fuse: many/f09999.txt wrong"
[[ $(cat "$WORK/mnt/many/late.txt") == late ]] || fail "exfat-fuse: many/late.txt wrong"
[[ ! -e $WORK/mnt/many/f05000.txt ]] || fail "exfat-fuse still sees the removed file"
fuse_umount "$WORK/mnt"
rm -f "$img"

big_default=4160M                         # past 4 GiB: byte offsets beyond 32 bits
[[ ${SF_LONG:-0} == 1 ]] && big_default=6G
log "a ${SF_SCALE_BIG:-$big_default} file from stdin"
big=$(to_bytes "${SF_SCALE_BIG:-$big_default}")     # over 4 GiB on purpose; SF_SCALE_BIG to change
truncate -s $((big + (2 << 30))) "$img"
sf_ok mkfs -t exfat "$img" >/dev/null
t=$(now)
genstream "$big" big6 "$WORK/big.sum" | sf_ok put "$img" - big.bin
log "put: $(since "$t")"
sf_ok ls --json "$img" >"$WORK/ls.json"
size=$(python3 -c 'import json,sys; print([e["size"] for e in json.load(open(sys.argv[1])) if e["name"] == "big.bin"][0])' "$WORK/ls.json")
((size == big)) || fail "big.bin is $size bytes, expected $big"
run_fsck_exfat "$img"
t=$(now)
sum=$(sf_ok cat "$img" big.bin | sha256sum | cut -d' ' -f1)
log "cat: $(since "$t")"
[[ $sum == "$(cat "$WORK/big.sum")" ]] || fail "big.bin read back with another checksum"
rm -f "$img"

log "a sparse 4 TB image"
truncate -s 4T "$img"
t=$(now)
sf_ok mkfs -t exfat -s 4T "$img" >/dev/null
log "mkfs 4 TB: $(since "$t"), $(du -h "$img" | cut -f1) allocated"
t=$(now)
sf_ok info "$img" >"$WORK/info.out"
log "info 4 TB: $(since "$t")"
cat "$WORK/info.out" >&2
t=$(now)
printf 'hello\n' >"$WORK/hello.txt"
sf_ok put "$img" "$WORK/hello.txt" hello.txt
log "first put on 4 TB: $(since "$t")"
[[ $(sf_ok cat "$img" hello.txt) == hello ]] || fail "hello.txt on the 4 TB volume"
t=$(now)
run_fsck_exfat "$img"
log "fsck.exfat 4 TB: $(since "$t")"
