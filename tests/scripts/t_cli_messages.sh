#!/usr/bin/env bash
# Messages and exit codes (issue 15, item 12): a bad value says what is wrong with it (never
# "zero" for a value that is not 0); mkfs usage errors exit 2 (a cluster size or label no
# file system of the type takes, whatever the target); fsck without --repair says what it would do, with --repair
# what it did; new names ending in a dot or a space are refused (Windows cannot open them)
# by put, mkdir and rename alike; log --duration 0 is a usage error.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3
cd "$WORK"

# usage CMD ARGS... -- WANT: exit 2, message holding WANT, not "zero"
usage() {
    local args=() rc=0 want
    while [[ $1 != -- ]]; do args+=("$1"); shift; done
    want=$2
    timeout 60 "$SF" "${args[@]}" >out 2>err </dev/null || rc=$?
    has_sanitizer_report err && fail "sanitizer report from ${args[*]}"
    ((rc == 2)) || { cat err >&2; fail "streamfat ${args[*]}: exit $rc, expected 2"; }
    grep -q -- "$want" err || { cat err >&2; fail "streamfat ${args[*]}: message lacks '$want'"; }
    ! grep -q 'zero' err || { cat err >&2; fail "streamfat ${args[*]}: says 'zero'"; }
}
usage plan --rate 500MB -- "unknown unit"
usage plan --rate abc -- "expected a number"
usage plan --rate 0MB/s -- "more than 0"
usage plan --rate 100MB/s --capacity 12parsecs -- "unknown unit"
usage bench --size 10parsecs x.img -- "unknown unit"
usage bench --duration 3fortnights x.img -- "unknown unit"
usage mkfs -c 64M -s 1G x.img -- "cluster size"
usage mkfs -t fat32 -c 128K -s 1G x.img -- "FAT takes 512 to 64K"
usage mkfs -t exfat -c 1K -s 1G x.img -- "exFAT takes 4K to 32M"
usage mkfs -L ABCDEFGHIJKL -s 1G x.img -- "longer than 11"
[[ ! -e x.img ]] || fail "a refused mkfs left x.img behind"
usage log --source gen:can --duration 0 x.img -- "more than 0"
usage log --source gen:can --size 1G x.img -- "--mkfs"
# a missing image is about the target, not the command line: exit 1, and the hint names
# the option of the command at hand (log's -s is --source)
sf_err 1 mkfs x.img
grep -q 'give -s SIZE' "$SF_LAST_ERR" || fail "mkfs: the hint does not name -s"
sf_err 1 log --source gen:can --mkfs exfat x.img
grep -q 'give --size SIZE' "$SF_LAST_ERR" || fail "log --mkfs: the hint does not name --size"
[[ ! -e x.img ]] || fail "a refused mkfs left x.img behind"
log "bad values: exit 2 with what is wrong"

# ---- names ending in a dot or a space ----
# rename IMG FROM TO: sf_rename must refuse with SF_EBADNAME (exit 0 then)
cat >rename.c <<'C'
#include "helper_vol.h"
#include <stdio.h>
int main(int argc, char **argv)
{
    struct hvol h;
    if (argc != 4 || hvol_mount(&h, argv[1]))
        return 2;
    int err = sf_rename(&h.vol, argv[2], argv[3]);
    fprintf(stderr, "sf_rename %s -> '%s': %s\n", argv[2], argv[3], sf_strerror(err));
    return (hvol_unmount(&h) || err != SF_EBADNAME) ? 1 : 0;
}
C
flags=()
[[ $SF_BUILD == *asan* ]] && flags=(-fsanitize=address,undefined -fno-omit-frame-pointer)
gcc -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror "${flags[@]}" -I"$SF_SRC/include" \
    -I"$SF_SRC/src" -I"$SF_SRC/tests/helpers" rename.c "$SF_BUILD/libstreamfat.a" -lpthread \
    -o rename || fail "could not build the rename program"
sf_ok mkfs -t exfat -s 64M e.img >/dev/null
sf_ok mkfs -t fat32 -s 64M f.img >/dev/null
printf data >d.txt
for img in e.img f.img; do
    for bad in 'a.' 'a ' 'a..' 'dir/b.'; do
        sf_ok mkdir "$img" dir
        sf_err 1 put "$img" d.txt "$bad"
        grep -q 'end' "$SF_LAST_ERR" || fail "put '$bad': the message does not say why"
        sf_err 1 mkdir "$img" "$bad"
        sf_ok rm -r "$img" dir
    done
    sf_ok put "$img" d.txt ok.txt
    sf_ok put "$img" d.txt 'a.b c'                 # inner dots and spaces are fine
    sf_ok ls "$img" >ls.txt
    printf '%s\n' 'a.b c' ok.txt | diff - <(sort ls.txt) >&2 || fail "$img: ls after refusals"
    timeout 60 "$WORK/rename" "$img" ok.txt 'ok.txt.' || fail "$img: rename to 'ok.txt.' not refused"
    timeout 60 "$WORK/rename" "$img" ok.txt 'ok .txt ' || fail "$img: rename to 'ok .txt ' not refused"
done
log "names ending in a dot or a space refused on exFAT and FAT32"

# ---- fsck: would / did ----
sf_ok mkfs -t fat32 -s 64M g.img >/dev/null
head -c 100000 /dev/zero >a.bin
sf_ok put g.img a.bin A.BIN
python3 "$SF_SRC/tests/scripts/fsck_damage.py" g.img leak >/dev/null
python3 "$SF_SRC/tests/scripts/fsck_damage.py" g.img size "A       BIN" >/dev/null
cp g.img h.img
rc=0; sf fsck g.img >check.txt || rc=$?
((rc == 1)) || fail "fsck of a damaged image: exit $rc"
cat check.txt >&2
grep -q 'would be freed' check.txt || fail "fsck without --repair: no 'would be freed'"
grep -q 'would be cut' check.txt || fail "fsck without --repair: no 'would be cut'"
if grep -E ': (freed|cut)|size cut to' check.txt >&2; then
    fail "fsck without --repair says it did what it did not do"
fi
rc=0; sf fsck --repair h.img >repair.txt || rc=$?
cat repair.txt >&2
grep -q ': freed \[repaired\]' repair.txt || fail "fsck --repair: no 'freed [repaired]'"
grep -q 'size cut to' repair.txt || fail "fsck --repair: no 'size cut to'"
! grep -q 'would' repair.txt || fail "fsck --repair says 'would'"
log "fsck says 'would be' without --repair, what it did with it"
