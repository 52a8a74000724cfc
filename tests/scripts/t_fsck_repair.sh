#!/usr/bin/env bash
# Acceptance (issue 6, fsck): damage made on purpose, found and repaired. For exFAT and
# FAT32, a volume with three files written by streamfat is damaged in one way at a time by
# fsck_damage.py (leaked cluster, cross-link, loop, size beyond the allocation, entry set or
# long-name checksum, dirty flag, boot checksum / backup boot sector). For each:
#   - `streamfat fsck` exits 1 and names the right kind of problem (the undamaged volume: 0);
#   - `streamfat fsck --repair` exits 1; a second `fsck` exits 0; the independent checker
#     (fsck.exfat -n / fsck.fat -n) calls it clean;
#   - the files the damage did not touch read back identical; a file cut by the repair
#     holds a prefix of what was written.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
export SF_TIMEOUT=120
dmg=$SF_SRC/tests/scripts/fsck_damage.py
base=$FASTWORK/base.img
img=$FASTWORK/d.img

head -c 20000 /dev/urandom >"$WORK/a.bin"       # 5 clusters of 4 KiB (exFAT)
head -c 9000 /dev/urandom >"$WORK/b.bin"
head -c 5000 /dev/urandom >"$WORK/c.bin"

fsck_rc() {
    local rc=0
    sf fsck "$@" >"$WORK/fsck.out" || rc=$?
    echo "$rc"
}
indep_clean() {
    if [[ $1 == exfat ]]; then run_fsck_exfat "$img"; else run_fsck_fat "$img"; fi
}
# same PATH FILE: the file on the volume equals FILE.
same() {
    sf cat "$img" "$1" >"$WORK/got" || fail "cat $1 failed"
    cmp -s "$WORK/got" "$2" || fail "$1 differs from what was written"
}
# prefix PATH FILE: the file on the volume is a prefix of FILE, or FILE followed by the
# rest of its last cluster.
prefix() {
    sf cat "$img" "$1" >"$WORK/got" || fail "cat $1 failed"
    local n m
    n=$(stat -c %s "$WORK/got")
    m=$(stat -c %s "$2")
    ((n <= m)) || n=$m
    cmp -s -n "$n" "$WORK/got" "$2" || fail "$1 is not a prefix of what was written"
}

for fs in exfat fat32; do
    rm -f "$base"
    # 4 KiB clusters on exFAT; FAT32 needs 65,525 clusters: 1 KiB ones on 80 MiB
    if [[ $fs == exfat ]]; then csz=4K size=64M; else csz=1K size=80M; fi
    sf_ok mkfs -q -t "$fs" -c "$csz" -s "$size" "$base" >/dev/null
    if [[ $fs == exfat ]]; then
        A=a.bin B=b.bin C=longname_file.bin
    else
        A="A       BIN" B="B       BIN" C="LONGNA~1BIN"
    fi
    sf_ok put "$base" "$WORK/a.bin" /a.bin
    sf_ok put "$base" "$WORK/b.bin" /b.bin
    sf_ok put "$base" "$WORK/c.bin" /longname_file.bin
    rc=$(fsck_rc "$base")
    ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs: the undamaged volume is not clean"; }

    # case: op, args, kind fsck must name, files intact after repair, files cut (prefix)
    while IFS='|' read -r op args kind intact cut; do
        log "$fs: $op $args"
        cp "$base" "$img"
        eval "python3 \"\$dmg\" \"\$img\" $op $args" >&2 || fail "$fs: damage $op failed"
        rc=$(fsck_rc "$img")
        ((rc == 1)) || { cat "$WORK/fsck.out" >&2; fail "$fs $op: fsck exited $rc, expected 1"; }
        grep -q "^$kind: " "$WORK/fsck.out" || { cat "$WORK/fsck.out" >&2; fail "$fs $op: no '$kind' finding"; }
        rc=$(fsck_rc --repair "$img")
        ((rc == 1)) || { cat "$WORK/fsck.out" >&2; fail "$fs $op: fsck --repair exited $rc"; }
        rc=$(fsck_rc "$img")
        ((rc == 0)) || { cat "$WORK/fsck.out" >&2; fail "$fs $op: not clean after repair ($rc)"; }
        indep_clean "$fs"
        for f in $intact; do same "/$f" "$WORK/${f/longname_file/c}"; done
        for f in $cut; do prefix "/$f" "$WORK/${f/longname_file/c}"; done
    done <<EOF
leak||leak|a.bin b.bin longname_file.bin|
crosslink|"$A" "$B"|cross-link|a.bin longname_file.bin|b.bin
loop|"$A"|loop|b.bin longname_file.bin|a.bin
size|"$C"|size|a.bin b.bin|longname_file.bin
csum|"$C"|entry|a.bin b.bin|
dirty||dirty|a.bin b.bin longname_file.bin|
bootsum||boot|a.bin b.bin longname_file.bin|
EOF
done
