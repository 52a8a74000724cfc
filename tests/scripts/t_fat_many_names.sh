#!/usr/bin/env bash
# Acceptance (issue 18): 1,116 long names in one directory whose 8.3 basis collides
# ("Long File Name 0001.txt" .. -> LONGFI~1.TXT, LONGF~10.TXT, LONG~100.TXT, LON~1000.TXT),
# created through sf_open with the alias picked during the name's lookup walk (no second
# pass): after deletes, the freed low tails (~5, ~50) go to the next new names, above ~64
# numbering goes on past the highest tail in use. On FAT16 and FAT32 images made by
# mkfs.fat: fsck.fat -n has no remark, mdir lists every long name with a unique alias,
# mcopy reads every file byte-identical, streamfat reads each by its long name and by
# alias.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool mkfs.fat fsck.fat mdir mcopy
export MTOOLS_SKIP_CHECK=1 LC_ALL=C.UTF-8

FMT="coll/Long File Name %04d.txt"
FMTX="coll/Long File Name X%03d.txt"
GONE=(5 50 70 500)

for t in 16 32; do
    log "FAT$t: 1,100 colliding long names, 4 deleted, 20 more"
    img=$WORK/fat$t.img
    rm -f "$img"
    if ((t == 32)); then
        mkfs.fat -F 32 -s 1 -C "$img" 65536 >/dev/null
    else
        mkfs.fat -F 16 -C "$img" 65536 >/dev/null
    fi
    sf_ok mkdir "$img" coll
    # an 8.3 name that looks like a tail of the basis at the wrong place: not ~3 of LONGFILE
    printf 'coll/lo~3.txt\n' >"$WORK/lo3"
    sf_ok put "$img" "$WORK/lo3" "coll/lo~3.txt"
    run_helper create_names "$img" create "$FMT" 1 1100
    for g in "${GONE[@]}"; do
        run_helper create_names "$img" rm "$FMT" "$g" 1
    done
    run_helper create_names "$img" create "$FMTX" 1 20

    # the names expected, one per line
    : >"$WORK/want"
    for i in $(seq 1 1100); do
        [[ " ${GONE[*]} " == *" $i "* ]] && continue
        printf "Long File Name %04d.txt\n" "$i" >>"$WORK/want"
    done
    for i in $(seq 1 20); do printf "Long File Name X%03d.txt\n" "$i" >>"$WORK/want"; done
    sort -o "$WORK/want" "$WORK/want"
    nwant=$(wc -l <"$WORK/want")

    out=$WORK/fsck.$t rc=0
    timeout 300 fsck.fat -n "$img" </dev/null >"$out" 2>&1 || rc=$?
    if ((rc != 0)) || grep -vqE '^fsck\.fat [0-9.]+ \(|: [0-9]+ files, [0-9]+/[0-9]+ clusters$' "$out"; then
        head -50 "$out" >&2
        fail "FAT$t: fsck.fat -n: exit $rc or remarks"
    fi

    timeout 300 mdir -/ -i "$img" ::/coll </dev/null >"$WORK/mdir.$t" || fail "FAT$t: mdir failed"
    # "LONGFI~1 TXT        33 2026-12-01  16:42  Long File Name 0001.txt"; before 10:00 the
    # hour has one digit ("   2:50"): the long name is what follows the fifth field, whatever
    # the clock (t_any_hour runs this under a fake clock)
    grep -E '^LON' "$WORK/mdir.$t" | awk '{ print $1 "." $2 }' | sort >"$WORK/aliases.$t"
    grep -E '^LON' "$WORK/mdir.$t" |
        sed -E 's/^[^ ]+ +[^ ]+ +[0-9]+ +[0-9-]+ +[0-9]{1,2}:[0-9]{2}( ?[AaPp][Mm])?  //' |
        sort >"$WORK/long.$t"
    na=$(wc -l <"$WORK/aliases.$t")
    nu=$(sort -u "$WORK/aliases.$t" | wc -l)
    ((na == nwant && nu == nwant)) ||
        fail "FAT$t: mdir shows $na aliases, $nu unique, $nwant files expected"
    diff "$WORK/want" "$WORK/long.$t" >&2 || fail "FAT$t: mdir's long names differ from the names created"
    [[ $(sf_ok cat "$img" "coll/LONGFI~3.TXT") == "coll/Long File Name 0003.txt" ]] ||
        fail "FAT$t: LONGFI~3.TXT is not the third name (LO~3.TXT taken for a tail?)"
    for a in LONGFI~1.TXT LONGFI~9.TXT LONGF~10.TXT LONGF~64.TXT LONGF~65.TXT LONG~100.TXT LON~1000.TXT LON~1100.TXT LON~1118.TXT; do
        grep -qx "$a" "$WORK/aliases.$t" || fail "FAT$t: alias $a missing"
    done
    for a in LONGF~70.TXT LONG~500.TXT LON~1119.TXT; do
        ! grep -qx "$a" "$WORK/aliases.$t" || fail "FAT$t: alias $a should be free"
    done

    rm -rf "$WORK/out"
    mkdir -p "$WORK/out"
    timeout 300 mcopy -s -n -i "$img" ::/coll "$WORK/out/" </dev/null || fail "FAT$t: mcopy -s failed"
    (cd "$WORK/out/coll" && ls | sort) | diff <( (cat "$WORK/want"; echo "lo~3.txt") | sort) - >&2 ||
        fail "FAT$t: mcopy's files differ"
    # each file holds "coll/NAME\n": all of them at once, in the same order
    (cd "$WORK/out/coll" && cat -- *) >"$WORK/got.$t"
    (cd "$WORK/out/coll" && for n in *; do printf 'coll/%s\n' "$n"; done) >"$WORK/exp.$t"
    cmp "$WORK/exp.$t" "$WORK/got.$t" >&2 || fail "FAT$t: files read by mcopy differ"

    run_helper create_names "$img" check "$FMT" 1 4
    run_helper create_names "$img" check "$FMT" 501 600
    run_helper create_names "$img" check "$FMTX" 1 20
    # the freed ~5 and ~50 went to the first two new names; the last new name is ~1118
    [[ $(sf_ok cat "$img" "coll/LONGFI~5.TXT") == "coll/Long File Name X001.txt" ]] ||
        fail "FAT$t: LONGFI~5.TXT is not the first new name"
    [[ $(sf_ok cat "$img" "coll/longf~50.txt") == "coll/Long File Name X002.txt" ]] ||
        fail "FAT$t: LONGF~50.TXT is not the second new name"
    [[ $(sf_ok cat "$img" "coll/LON~1118.TXT") == "coll/Long File Name X020.txt" ]] ||
        fail "FAT$t: LON~1118.TXT is not the last new name"
done
log "ok"
