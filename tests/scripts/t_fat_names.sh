#!/usr/bin/env bash
# Acceptance: FAT names. Long and non-ASCII names (é, ü, 日本, emoji), names of 255 UTF-16
# units (256 refused), a second name differing only in case refused, lower-case 8.3 names
# stored without long-name entries (NT case byte), ~N aliases unique under collisions
# (~1..~9, ~10 and up), lookup by alias. On FAT16 and FAT32 images made by mkfs.fat (512-
# and 4096-byte sectors) and by streamfat mkfs; then fsck.fat -n reports nothing, the
# directory entries are read raw and checked, mtools and sleuthkit read every file
# byte-identical under its long name; files written by mtools (mcopy, mmd) read back
# through streamfat cat/ls. (make check runs three of the five volumes: see the end.)
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool mkfs.fat fsck.fat mdir mcopy mmd fls icat python3
export MTOOLS_SKIP_CHECK=1

rep() { local s=$1 n=$2 out=; for ((i = 0; i < n; i++)); do out+=$s; done; printf %s "$out"; }
A255=$(rep a 251).txt                    # 255 units
A256=$(rep b 252).txt
J255=$(rep 日 255)                        # 255 units, 765 bytes of UTF-8
E255=x$(rep 😀 127)                      # 1 + 127 surrogate pairs = 255 units
E256=$(rep 😀 128)

# fsck_fat_clean IMG: fsck.fat -n exits 0 and says nothing but its version and the summary.
fsck_fat_clean() {
    local img=$1 out=$WORK/.fsck.out rc=0
    timeout 120 fsck.fat -n "$img" </dev/null >"$out" 2>&1 || rc=$?
    if ((rc != 0)) || grep -vqE '^fsck\.fat [0-9.]+ \(|: [0-9]+ files, [0-9]+/[0-9]+ clusters$' "$out"; then
        cat "$out" >&2
        fail "fsck.fat -n $img: exit $rc or remarks"
    fi
}

# rawdir IMG: the root directory's 8.3 entries as read from the image, one per line:
# "SHORTNAME<TAB>NTRES<TAB>LONGNAME" (SHORTNAME the 11 bytes as stored, LONGNAME "-" when
# no valid long-name run precedes the entry). Independent of streamfat's code.
rawdir() {
    python3 - "$1" <<'PY'
import struct, sys
img = open(sys.argv[1], "rb")
bs = img.read(512)
bps, spc, rsvd, nfats, rootent, tot16, _, fatsz16 = struct.unpack_from("<HBHBHHBH", bs, 11)
fatsz = fatsz16 or struct.unpack_from("<I", bs, 36)[0]
def rd(sector, n=1):
    img.seek(sector * bps)
    return img.read(n * bps)
first_data = rsvd + nfats * fatsz + (rootent * 32 + bps - 1) // bps
if fatsz16:
    data = rd(rsvd + nfats * fatsz, (rootent * 32 + bps - 1) // bps)
else:
    c, data = struct.unpack_from("<I", bs, 44)[0], b""
    while 2 <= c < 0x0FFFFFF8:
        data += rd(first_data + (c - 2) * spc, spc)
        c = struct.unpack_from("<I", rd(rsvd + c * 4 // bps), c * 4 % bps)[0] & 0x0FFFFFFF
def chk(name):
    s = 0
    for b in name:
        s = (((s & 1) << 7) + (s >> 1) + b) & 0xFF
    return s
run = []
for i in range(0, len(data), 32):
    e = data[i:i + 32]
    if e[0] == 0:
        break
    if e[0] == 0xE5:
        run = []
        continue
    if e[11] & 0x3F == 0x0F:
        run.append(e)
        continue
    lfn = "-"
    n = len(run)
    if (run and run[0][0] == 0x40 | n and all(r[0] & 0x3F == n - k for k, r in enumerate(run))
            and all(r[13] == chk(e[:11]) for r in run)):
        u = b"".join(r[1:11] + r[14:26] + r[28:32] for r in reversed(run))
        lfn = u.decode("utf-16-le", "surrogatepass").split("\0")[0]
    run = []
    if e[11] & 0x08 or e[:11] in (b".          ", b"..         "):
        continue
    print("%s\t%02x\t%s" % (e[:11].decode("latin-1"), e[12], lfn))
PY
}

check_volume() {
    local img=$1 n i rc
    rm -rf "$WORK/src"
    mkdir -p "$WORK/src"
    log "long, non-ASCII and lower-case 8.3 names"
    local names=("Hello World.txt" "café.txt" "über ü.dat" "日本語.txt" "smile 😀.log"
                 "a+b,c;d=e[f].x" ".hidden" "multi.dot.name.tar.gz"
                 "lower.txt" "UPPER.TXT" "base.TXT" "BASE2.txt" "Mixed.Txt" "$A255")
    i=0
    for n in "${names[@]}"; do
        i=$((i + 1))
        mkpattern "$WORK/src/$n" $((i * 1237)) "fatnames.$i"
        sf_ok put "$img" "$WORK/src/$n" "$n"
    done
    # a new name ending in a dot: refused (Windows strips the dot and cannot open it)
    printf x >"$WORK/dot"
    sf_err 1 put "$img" "$WORK/dot" "trailing dot."
    sf_ok cat "$img" "HELLO WORLD.TXT" >"$WORK/out"
    cmp -s "$WORK/out" "$WORK/src/Hello World.txt" || fail "case-insensitive lookup failed"
    sf_ok cat "$img" "HELLOW~1.TXT" >"$WORK/out"
    cmp -s "$WORK/out" "$WORK/src/Hello World.txt" || fail "lookup by the alias HELLOW~1.TXT failed"
    sf_ok cat "$img" "CAFÉ.TXT" >"$WORK/out"
    cmp -s "$WORK/out" "$WORK/src/café.txt" || fail "CAFÉ.TXT does not find café.txt"

    log "a name differing only in case is refused"
    mkpattern "$WORK/other" 999 other
    for n in "HELLO WORLD.TXT" "LOWER.TXT" "Lower.txt" "hellow~1.txt"; do
        rc=0; sf put "$img" "$WORK/other" "$n" || rc=$?
        ((rc == 1)) || fail "put $n over an existing name exited $rc, expected 1"
    done
    rc=0; sf mkdir "$img" "hello world.txt" || rc=$?
    ((rc == 1)) || fail "mkdir over an existing file name exited $rc"
    cmp -s <(sf cat "$img" lower.txt) "$WORK/src/lower.txt" || fail "refused put changed lower.txt"

    log "255 units accepted, 256 refused"
    sf_ok mkdir "$img" long
    mkpattern "$WORK/long.j" 20 long.j
    mkpattern "$WORK/long.e" 30 long.e
    sf_ok put "$img" "$WORK/long.j" "long/$J255"
    sf_ok put "$img" "$WORK/long.e" "long/$E255"
    cmp -s <(sf cat "$img" "long/$J255") "$WORK/long.j" || fail "255 x 日 reads back wrong"
    cmp -s <(sf cat "$img" "long/$E255") "$WORK/long.e" || fail "x + 127 emoji reads back wrong"
    for n in "$A256" "$E256"; do
        sf_err 1 put "$img" "$WORK/other" "$n"
        sf_err 1 mkdir "$img" "$n"
    done

    log "~N aliases under collisions"
    mkdir -p "$WORK/src/coll"
    sf_ok mkdir "$img" coll
    for i in $(seq 1 23); do
        n="Long File Name $i.txt"
        mkpattern "$WORK/src/coll/$n" $((i * 101)) "coll.$i"
        sf_ok put "$img" "$WORK/src/coll/$n" "coll/$n"
    done
    # a free ~N is reused after a delete, and the next new name takes it
    sf_ok rm "$img" "coll/Long File Name 5.txt"
    rm "$WORK/src/coll/Long File Name 5.txt"
    mkpattern "$WORK/src/coll/Long File Name again.txt" 77 again
    sf_ok put "$img" "$WORK/src/coll/Long File Name again.txt" "coll/Long File Name again.txt"
    sf_ok cat "$img" "coll/LONGFI~5.TXT" >"$WORK/out"
    cmp -s "$WORK/out" "$WORK/src/coll/Long File Name again.txt" ||
        fail "the freed alias LONGFI~5.TXT was not given to the next name"
    sf_ok cat "$img" "coll/LONGF~10.TXT" >"$WORK/out"
    cmp -s "$WORK/out" "$WORK/src/coll/Long File Name 10.txt" || fail "coll/LONGF~10.TXT is not the 10th"
    mdir -/ -i "$img" ::/coll >"$WORK/mdir.coll" || fail "mdir ::/coll failed"
    local aliases
    aliases=$(awk '/^LONG/ { print $1 }' "$WORK/mdir.coll" | sort)
    [[ $(echo "$aliases" | wc -l) == 23 && $(echo "$aliases" | sort -u | wc -l) == 23 ]] ||
        { cat "$WORK/mdir.coll" >&2; fail "mdir: 23 unique aliases expected in coll/"; }
    for i in $(seq 1 9) $(seq 10 23); do
        if ((i < 10)); then n="LONGFI~$i"; else n="LONGF~$i"; fi
        grep -qx "$n" <<<"$aliases" || { cat "$WORK/mdir.coll" >&2; fail "alias $n missing"; }
    done

    log "raw entries: NT case byte, no long names for 8.3 names, aliases"
    rawdir "$img" >"$WORK/raw"
    want() {   # SHORT NTRES LONG
        grep -qxF "$1"$'\t'"$2"$'\t'"$3" "$WORK/raw" ||
            { cat "$WORK/raw" >&2; fail "raw root entry \"$1\" $2 \"$3\" not found"; }
    }
    want "LOWER   TXT" 18 -
    want "UPPER   TXT" 00 -
    want "BASE    TXT" 08 -
    want "BASE2   TXT" 10 -
    want "MIXED   TXT" 00 "Mixed.Txt"         # fits 8.3 up to case: no tail needed
    want "HELLOW~1TXT" 00 "Hello World.txt"
    want "CAF_~1  TXT" 00 "café.txt"
    want "A_B_C_~1X  " 00 "a+b,c;d=e[f].x"
    want "HIDDEN~1   " 00 ".hidden"
    want "MULTI~1 GZ " 00 "multi.dot.name.tar.gz"
    want "SMILE_~1LOG" 00 "smile 😀.log"
    want "_BER_~1 DAT" 00 "über ü.dat"
    want "AAAAAA~1TXT" 00 "$A255"
    [[ $(cut -f1 "$WORK/raw" | sort | uniq -d) == "" ]] || fail "duplicate short names in the root"

    fsck_fat_clean "$img"
    log "mtools reads every file under its long name"
    local rel
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        [[ $rel == *😀* ]] && continue      # mtools does not decode surrogate pairs
        rm -f "$WORK/mt.out"
        # mtools reads * ? [ ] in its arguments as wildcards: escape them
        mcopy -n -i "$img" "::/$(sed 's/[][*?\\]/\\&/g' <<<"$rel")" "$WORK/mt.out" </dev/null ||
            fail "mcopy ::/$rel failed"
        cmp -s "$WORK/mt.out" "$WORK/src/$rel" || fail "mtools: $rel differs"
    done < <(cd "$WORK/src" && find . -type f -print0)
    mdir -/ -i "$img" :: >"$WORK/mdir.out" || fail "mdir failed"
    grep -qF "Hello World.txt" "$WORK/mdir.out" || fail "mdir does not show the long name"
    grep -qE '^lower +txt +[0-9]' "$WORK/mdir.out" || { cat "$WORK/mdir.out" >&2; fail "mdir: lower.txt not shown lower case"; }
    grep -E '^lower +txt ' "$WORK/mdir.out" | matches 'lower\.txt$' &&
        fail "mdir shows a long name for lower.txt (none must be written)"
    for n in "$J255"; do
        rm -f "$WORK/mt.out"
        mcopy -n -i "$img" "::/long/$n" "$WORK/mt.out" </dev/null || fail "mcopy of long/(255 x 日) failed"
        cmp -s "$WORK/mt.out" "$WORK/long.j" || fail "mtools: long/(255 x 日) differs"
    done
    # sleuthkit cuts long names at 247 units: the 255-unit ones are matched by their start
    mv "$WORK/src/$A255" "$WORK/a255"
    tsk_verify "$img" "$WORK/src"
    mv "$WORK/a255" "$WORK/src/$A255"
    tsk_list "$img" >"$WORK/tsk.lst"
    for n in J E A; do
        local v=${n}255 ino f p
        case $n in J) p=long/; f=$WORK/long.j ;; E) p=long/; f=$WORK/long.e ;; A) p=; f=$WORK/src/$A255 ;; esac
        ino=$(awk -F'\t' -v p="$p${!v:0:100}" 'index($2, p) == 1 { print $1 }' "$WORK/tsk.lst")
        [[ -n $ino && $ino != *$'\n'* ]] || fail "sleuthkit does not find $p\$$v (one entry)"
        icat "$img" "$ino" </dev/null | cmp -s - "$f" || fail "sleuthkit reads $p\$$v wrong"
    done

    log "files written by mtools read back through streamfat"
    mkdir -p "$WORK/mt/Sub Dir é"
    mkpattern "$WORK/mt/A long name from mtools.bin" 70000 mt.1
    mkpattern "$WORK/mt/Sub Dir é/inner café file.txt" 1500 mt.2
    mkpattern "$WORK/mt/short.txt" 10 mt.3
    mmd -i "$img" "::/Sub Dir é" </dev/null || fail "mmd failed"
    mcopy -i "$img" "$WORK/mt/A long name from mtools.bin" "$WORK/mt/short.txt" :: </dev/null || fail "mcopy failed"
    mcopy -i "$img" "$WORK/mt/Sub Dir é/inner café file.txt" "::/Sub Dir é/" </dev/null || fail "mcopy failed"
    sf_verify_tree "$img" "$WORK/mt"
    sf_ok ls "$img" "Sub Dir é" >"$WORK/ls.out"
    grep -qx "inner café file.txt" "$WORK/ls.out" || { cat "$WORK/ls.out" >&2; fail "ls does not list the mtools file"; }
    sf_ok ls "$img" >"$WORK/ls.out"
    for n in "A long name from mtools.bin" "Sub Dir é" "${names[@]}"; do
        grep -qxF "$n" "$WORK/ls.out" || { cat "$WORK/ls.out" >&2; fail "ls does not list $n"; }
    done
    fsck_fat_clean "$img"
}

# make check: FAT16 by mkfs.fat, FAT32 by mkfs.fat with 4096-byte sectors, FAT32 by
# streamfat mkfs (each file system, each sector size and each formatter once);
# SF_LONG=1 adds FAT32 by mkfs.fat with 512-byte sectors and FAT16 by streamfat mkfs.
long=${SF_LONG:-0}
img=$WORK/names.img
for t in 16 32; do
    [[ $t == 32 && $long != 1 ]] && continue
    log "FAT$t by mkfs.fat"
    rm -f "$img"
    truncate -s 64M "$img"
    mkfs.fat -F "$t" "$img" >/dev/null
    check_volume "$img"
done
log "FAT32 by mkfs.fat, 4096-byte sectors"
rm -f "$img"
truncate -s 300M "$img"
mkfs.fat -F 32 -S 4096 "$img" >/dev/null
check_volume "$img"
for t in fat16 fat32; do
    [[ $t == fat16 && $long != 1 ]] && continue
    log "$t by streamfat mkfs"
    rm -f "$img"
    sf_ok mkfs -t "$t" -s 300M "$img"
    check_volume "$img"
done
