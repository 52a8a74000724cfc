#!/usr/bin/env bash
# Acceptance: FAT directories. Nested mkdir; 3,000 long-named files in one directory (600
# on mkfs.fat's FAT16, 200 on the other volumes, 600 there with SF_LONG=1: the directory
# grows cluster by cluster, aliases run to ~3000), a
# third deleted and more created in the freed entries; the
# FAT16 root directory fills at 512 entries with a clean "no space" error; rmdir of a
# non-empty directory refused; rename within and across directories, of files and of
# directories (their ".." entry read raw from the image must name the new parent, 0 for
# the root); rm. On FAT16 and FAT32 images by mkfs.fat (512- and 4096-byte sectors) and by
# streamfat mkfs; every step ends with fsck.fat -n silent, and mtools, sleuthkit and
# streamfat read back the expected tree.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool mkfs.fat fsck.fat mdir mcopy fls icat python3 gcc
export MTOOLS_SKIP_CHECK=1

# ---- a small program over the public API: many files, rename, first cluster ----
OPS=$WORK/fat_dir_ops
cat >"$WORK/fat_dir_ops.c" <<'EOF'
/* fat_dir_ops IMG mk N FMT   create N files named by FMT (one %d), holding "file %d\n"
 * fat_dir_ops IMG mv FROM TO  sf_rename
 * fat_dir_ops IMG first PATH  print the first cluster (0 for the root) */
#include "helper_vol.h"

int main(int argc, char **argv)
{
    struct hvol h;
    int err = 0;
    if (argc < 4 || hvol_mount(&h, argv[1]))
        return 2;
    if (!strcmp(argv[2], "mk") && argc == 5) {
        long n = strtol(argv[3], NULL, 10);
        for (long i = 0; i < n && !err; i++) {
            char path[1024], text[64];
            struct sf_file f;
            int len = snprintf(text, sizeof text, "file %ld\n", i);
            snprintf(path, sizeof path, argv[4], (int)i);
            if ((err = sf_open(&h.vol, &f, path, SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL))) {
                fprintf(stderr, "create %s (file %ld of %ld): %s\n", path, i, n, sf_strerror(err));
                break;
            }
            if (sf_write(&f, text, (size_t)len) != len)
                err = SF_EIO;
            int e = sf_close(&f);
            err = err ? err : e;
            if (err)
                fprintf(stderr, "write %s: %s\n", path, sf_strerror(err));
        }
    } else if (!strcmp(argv[2], "mv") && argc == 5) {
        if ((err = sf_rename(&h.vol, argv[3], argv[4])))
            fprintf(stderr, "rename %s -> %s: %s\n", argv[3], argv[4], sf_strerror(err));
    } else if (!strcmp(argv[2], "first") && argc == 4) {
        struct sf_stat st;
        if ((err = sf_stat(&h.vol, argv[3], &st)))
            fprintf(stderr, "stat %s: %s\n", argv[3], sf_strerror(err));
        else
            printf("%u\n", *argv[3] ? st.first_cluster : 0);
    } else {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    int e = hvol_unmount(&h);
    return err || e ? 1 : 0;
}
EOF
lib=$SF_BUILD/libstreamfat.a
[[ -f $lib ]] || fail "no $lib"
flags=()
[[ $SF_BUILD == *asan* ]] && flags=(-fsanitize=address,undefined -fno-omit-frame-pointer)
gcc -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror "${flags[@]}" -I"$SF_SRC/include" \
    -I"$SF_SRC/src" -I"$SF_SRC/tests/helpers" "$WORK/fat_dir_ops.c" "$lib" -o "$OPS" ||
    fail "could not build fat_dir_ops"

# ops ARGS...: run it; stderr shown and checked for sanitizer reports; returns its status.
ops() {
    local rc=0
    timeout 600 "$OPS" "$@" 2>"$WORK/.ops.err" || rc=$?
    [[ -s $WORK/.ops.err ]] && cat "$WORK/.ops.err" >&2
    has_sanitizer_report "$WORK/.ops.err" && fail "sanitizer report from fat_dir_ops $*"
    return "$rc"
}
ops_ok() { ops "$@" || fail "fat_dir_ops $* failed"; }

fsck_fat_clean() {
    local img=$1 out=$WORK/.fsck.out rc=0
    timeout 300 fsck.fat -n "$img" </dev/null >"$out" 2>&1 || rc=$?
    if ((rc != 0)) || grep -vqE '^fsck\.fat [0-9.]+ \(|: [0-9]+ files, [0-9]+/[0-9]+ clusters$' "$out"; then
        cat "$out" >&2
        fail "fsck.fat -n $img: exit $rc or remarks"
    fi
}

# dotdot IMG CLUSTER: the first cluster stored in the ".." entry of the directory at
# CLUSTER, read from the image (FAT32 adds the high word).
dotdot() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
img = open(sys.argv[1], "rb")
bs = img.read(512)
bps, spc, rsvd, nfats, rootent, tot16, _, fatsz16 = struct.unpack_from("<HBHBHHBH", bs, 11)
fatsz = fatsz16 or struct.unpack_from("<I", bs, 36)[0]
first_data = rsvd + nfats * fatsz + (rootent * 32 + bps - 1) // bps
img.seek((first_data + (int(sys.argv[2]) - 2) * spc) * bps)
e = img.read(64)
assert e[:11] == b".          " and e[32:43] == b"..         ", "no . and .. entries"
lo, = struct.unpack_from("<H", e, 32 + 26)
hi = struct.unpack_from("<H", e, 32 + 20)[0] if not fatsz16 else 0
self_lo, = struct.unpack_from("<H", e, 26)
self_hi = struct.unpack_from("<H", e, 20)[0] if not fatsz16 else 0
assert self_hi << 16 | self_lo == int(sys.argv[2]), "'.' does not point at its directory"
print(hi << 16 | lo)
PY
}
check_dotdot() {   # IMG DIR PARENT
    local c p d
    c=$(ops "$1" first "$2") || fail "first $2"
    p=$(ops "$1" first "$3") || fail "first $3"
    d=$(dotdot "$1" "$c") || fail "cannot read . and .. of $2"
    [[ $d == "$p" ]] || fail "$2: '..' holds cluster $d, its parent $3 starts at $p"
}

# verify_all IMG: fsck.fat silent; streamfat, mtools and sleuthkit all read $WORK/src
# (sleuthkit reads big/ by name only, and every 50th file: icat takes 0.1 s a file).
verify_all() {
    local img=$1 rel
    fsck_fat_clean "$img"
    sf_ok ls -R "$img" | sort >"$WORK/ls.sf"
    (cd "$WORK/src" && find . -mindepth 1 | sed 's|^\./||') | sort >"$WORK/ls.want"
    diff "$WORK/ls.want" "$WORK/ls.sf" >&2 || fail "streamfat ls -R differs from the model"
    rm -rf "$WORK/mt"
    mkdir "$WORK/mt"
    mcopy -s -n -i "$img" "::/*" "$WORK/mt/" </dev/null >/dev/null || fail "mcopy -s failed"
    diff -r "$WORK/src" "$WORK/mt" >&2 || fail "mtools reads another tree"
    log "mtools: tree identical"
    rm -rf "$WORK/tsk"
    mkdir "$WORK/tsk"
    cp -r "$WORK/src/." "$WORK/tsk/"
    if [[ -d $WORK/tsk/big ]]; then
        ls "$WORK/tsk/big" | sort >"$WORK/big.want"
        tsk_list "$img" | awk -F'\t' 'index($2, "big/") == 1 { print substr($2, 5) }' | sort >"$WORK/big.tsk"
        diff "$WORK/big.want" "$WORK/big.tsk" >&2 || fail "sleuthkit lists other names in big/"
        (cd "$WORK/tsk/big" && ls | awk 'NR % 50 != 1' | xargs -r -d '\n' rm --)
    fi
    tsk_verify "$img" "$WORK/tsk"
}

# The alias of the Nth "Log file with a long name" (LOGFIL~1, LOGFI~10, LOGF~100, LOG~1000).
alias_of() {
    local n=$1
    if ((n < 10)); then echo "LOGFIL~$n"; elif ((n < 100)); then echo "LOGFI~$n";
    elif ((n < 1000)); then echo "LOGF~$n"; else echo "LOG~$n"; fi
}

check_volume() {
    local img=$1 big=$2 i
    rm -rf "$WORK/src"
    mkdir -p "$WORK/src"

    log "nested directories"
    sf_ok mkdir -p "$img" "a/b/c/d long name/e"
    mkdir -p "$WORK/src/a/b/c/d long name/e" "$WORK/src/x dir"
    sf_ok mkdir "$img" "x dir"
    local f
    for f in "a/one.txt" "a/b/Two Long.txt" "a/b/c/three.bin" "a/b/c/d long name/e/four é.dat"; do
        mkpattern "$WORK/src/$f" $((${#f} * 997)) "dirs.$f"
        sf_ok put "$img" "$WORK/src/$f" "$f"
    done
    sf_err 1 mkdir "$img" "a/b"
    sf_err 1 mkdir "$img" "A/B"
    check_dotdot "$img" "a" ""
    check_dotdot "$img" "a/b/c/d long name" "a/b/c"
    verify_all "$img"

    log "rmdir of a non-empty directory is refused"
    sf_err 1 rm "$img" "a/b/c/d long name"
    grep -qi 'not empty' "$SF_LAST_ERR" || fail "rm of a non-empty directory: message does not say so"
    sf_ok rm "$img" "a/b/c/d long name/e/four é.dat"
    sf_ok rm "$img" "a/b/c/d long name/e"
    rm -r "$WORK/src/a/b/c/d long name/e"

    log "$big long-named files in one directory"
    sf_ok mkdir "$img" big
    mkdir "$WORK/src/big"
    ops_ok "$img" mk "$big" "big/Log file with a long name %04d.csv"
    for ((i = 0; i < big; i++)); do
        printf 'file %d\n' "$i" >"$WORK/src/big/$(printf 'Log file with a long name %04d.csv' "$i")"
    done
    sf_ok cat "$img" "big/LOGFIL~1.CSV" >"$WORK/out"
    [[ $(cat "$WORK/out") == "file 0" ]] || fail "big/LOGFIL~1.CSV is not the first file"
    sf_ok cat "$img" "big/$(alias_of "$big").CSV" >"$WORK/out"
    [[ $(cat "$WORK/out") == "file $((big - 1))" ]] || fail "big/$(alias_of "$big").CSV is not the last file"
    log "delete every third, create 200 more"
    local del=()
    for ((i = 0; i < big; i += 3)); do
        f=$(printf 'big/Log file with a long name %04d.csv' "$i")
        del+=("$f")
        rm "$WORK/src/$f"
    done
    sf_ok rm "$img" "${del[@]}"
    ops_ok "$img" mk 200 "big/Another long-named file %d.txt"
    for ((i = 0; i < 200; i++)); do
        printf 'file %d\n' "$i" >"$WORK/src/big/Another long-named file $i.txt"
    done
    verify_all "$img"

    log "rename"
    ops_ok "$img" mv "a/b/Two Long.txt" "a/b/renamed to a longer name.txt"
    mv "$WORK/src/a/b/Two Long.txt" "$WORK/src/a/b/renamed to a longer name.txt"
    ops_ok "$img" mv "a/b/renamed to a longer name.txt" "x dir/moved.txt"
    mv "$WORK/src/a/b/renamed to a longer name.txt" "$WORK/src/x dir/moved.txt"
    ops_ok "$img" mv "x dir/moved.txt" "x dir/MOVED.TXT"          # only the case changes
    mv "$WORK/src/x dir/moved.txt" "$WORK/src/x dir/MOVED.TXT"
    ops_ok "$img" mv "a/b/c" "x dir/c moved"                      # a directory, with content
    mv "$WORK/src/a/b/c" "$WORK/src/x dir/c moved"
    check_dotdot "$img" "x dir/c moved" "x dir"
    check_dotdot "$img" "x dir/c moved/d long name" "x dir/c moved"
    ops_ok "$img" mv "a/b" "b at the root"                        # to the root: ".." = 0
    mv "$WORK/src/a/b" "$WORK/src/b at the root"
    check_dotdot "$img" "b at the root" ""
    ops_ok "$img" mv "x dir/c moved" "a/c back"
    mv "$WORK/src/x dir/c moved" "$WORK/src/a/c back"
    check_dotdot "$img" "a/c back" "a"
    ops_ok "$img" mv "a/one.txt" "big/one.txt"                    # into the big directory
    mv "$WORK/src/a/one.txt" "$WORK/src/big/one.txt"
    ops "$img" mv "a" "a/c back/inside" && fail "a directory moved into itself"
    ops "$img" mv "big/one.txt" "x dir/MOVED.TXT" && fail "rename onto an existing name succeeded"
    ops "$img" mv "big/one.txt" "x dir/moved.txt" && fail "rename onto a name differing in case succeeded"
    verify_all "$img"

    log "rm -r"
    sf_ok rm -r "$img" big "b at the root"
    rm -r "$WORK/src/big" "$WORK/src/b at the root"
    verify_all "$img"
}

img=$WORK/dirs.img
for t in 16 32; do
    log "FAT$t by mkfs.fat"
    rm -f "$img"
    truncate -s 64M "$img"
    mkfs.fat -F "$t" "$img" >/dev/null
    check_volume "$img" $((t == 32 ? 3000 : 600))    # 3000 x 4 entries: 375 KiB of directory
done
# The other volumes: 200 files (aliases to ~199, a directory of 25 KiB) in make check.
other=200
[[ ${SF_LONG:-0} == 1 ]] && other=600
log "FAT32 by mkfs.fat, 4096-byte sectors, 4 KiB clusters"
rm -f "$img"
truncate -s 600M "$img"
mkfs.fat -F 32 -S 4096 -s 1 "$img" >/dev/null
check_volume "$img" "$other"
for t in fat16 fat32; do
    log "$t by streamfat mkfs"
    rm -f "$img"
    sf_ok mkfs -t "$t" -s 300M "$img"
    check_volume "$img" "$other"
done

log "FAT16 root directory: 512 entries, then a clean error"
rm -f "$img"
truncate -s 32M "$img"
mkfs.fat -F 16 -r 512 "$img" >/dev/null
rc=0
ops "$img" mk 600 "r%03d.txt" || rc=$?
((rc == 1)) || fail "filling the FAT16 root: exit $rc, expected a failure"
grep -qi 'no space' "$WORK/.ops.err" || fail "filling the FAT16 root: not a \"no space\" error"
grep -q 'r512.txt' "$WORK/.ops.err" || fail "filling the FAT16 root: failed elsewhere than at file 512"
[[ $(sf ls "$img" | wc -l) == 512 ]] || fail "the FAT16 root does not hold 512 files"
ops "$img" mk 1 "another long name.txt" && fail "a long name fitted in a full root"
sf_ok rm "$img" r000.txt r001.txt
ops_ok "$img" mk 1 "x long %d.txt"                    # 1 LFN + 1: the two freed entries
fsck_fat_clean "$img"
