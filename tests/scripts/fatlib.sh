# Helpers for the FAT acceptance scripts (sourced after lib.sh, not run): fsck.fat with
# nothing to report, mtools reading a tree back, volume offsets of partitioned images.

export MTOOLS_SKIP_CHECK=1

# run_fsck_fat IMG_OR_DEV: fsck.fat -n must exit 0 and say nothing but its version line and
# the "N files, X/Y clusters" summary: any other line is an error or a remark.
run_fsck_fat() {
    local img=$1 out=$WORK/.fsckfat.out rc=0
    timeout 120 fsck.fat -n "$img" </dev/null >"$out" 2>&1 || rc=$?
    if ((rc != 0)) || grep -vqE '^fsck\.fat [0-9.]+ \(|: [0-9]+ files, [0-9]+/[0-9]+ clusters$' "$out"; then
        cat "$out" >&2
        fail "fsck.fat -n $img: exit $rc, or remarks"
    fi
}

# run_fsck_indep FS IMG: the independent checker of FS (exfat, or a FAT type) must find IMG
# clean. deps.sh installs both checkers; a missing one fails the test rather than passing it.
run_fsck_indep() {
    if [[ $1 == exfat ]]; then
        need_tool fsck.exfat
        run_fsck_exfat "$2"
    else
        need_tool fsck.fat
        run_fsck_fat "$2"
    fi
}

# fsck_fat_at IMG BYTE_OFFSET [SECTOR_SIZE]: run_fsck_fat on the volume at an offset (or with
# 4096-byte sectors) through a loop device.
fsck_fat_at() {
    local img=$1 off=$2 ss=${3:-512} opts=()
    if ((off == 0 && ss == 512)); then
        run_fsck_fat "$img"
        return
    fi
    ((off)) && opts+=(-o "$off")
    ((ss != 512)) && opts+=(-b "$ss")
    loop_attach "$img" "${opts[@]}"
    local l=$LOOP
    run_fsck_fat "$l"
    loop_detach "$l"
}

# mtools_verify IMG SRCDIR [PREFIX] [BYTE_OFFSET]: mcopy -s brings the tree PREFIX back; every
# file under SRCDIR must be there identical. Names outside the BMP (emoji) are left out:
# mtools turns their surrogate pairs into '_'.
mtools_verify() {
    local img=$1 src=$2 prefix=${3:-} off=${4:-0} out=$WORK/.mtools.out
    rm -rf "$out"
    mkdir -p "$out"
    timeout 300 mcopy -s -n -i "$img@@$off" "::/$prefix" "$out/" </dev/null ||
        fail "mcopy -s ::/$prefix from $img failed"
    local base=$out
    [[ -n $prefix ]] && base=$out/$(basename "$prefix")
    python3 - "$src" "$base" <<'PY' || fail "mtools: tree differs from $src"
import os, sys, filecmp
src, got = sys.argv[1], sys.argv[2]
n = 0
for d, _, files in os.walk(src):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), src)
        if any(ord(ch) > 0xFFFF for ch in rel):
            continue
        p = os.path.join(got, rel)
        if not os.path.isfile(p) or not filecmp.cmp(os.path.join(src, rel), p, shallow=False):
            print("mtools: %s missing or different" % rel, file=sys.stderr)
            sys.exit(1)
        n += 1
print("== mtools: %d files identical" % n, file=sys.stderr)
PY
    rm -rf "$out"
}

# mtools_put IMG SRCDIR DEST [BYTE_OFFSET]: copy a tree into the image with mtools, as ::/DEST.
mtools_put() {
    local img=$1 src=$2 dest=$3 off=${4:-0}
    timeout 300 mmd -i "$img@@$off" "::/$dest" </dev/null || fail "mmd ::/$dest failed"
    (cd "$src" && timeout 300 mcopy -s -i "$img@@$off" ./* "::/$dest/" </dev/null) ||
        fail "mcopy into ::/$dest failed"
}

# part_offset IMG: byte offset of the first partition (0 for a superfloppy).
part_offset() {
    python3 - "$1" <<'PY'
import json, subprocess, sys
try:
    t = json.loads(subprocess.run(["sfdisk", "-J", sys.argv[1]], capture_output=True,
                                  check=True).stdout)["partitiontable"]
    print(t["partitions"][0]["start"] * t.get("sectorsize", 512))
except Exception:
    print(0)
PY
}
