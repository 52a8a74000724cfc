#!/usr/bin/env bash
# Acceptance: corrupted exFAT images made by others (exfatprogs' and exfat-rawtools' test
# suites) are mounted or refused cleanly. For every image: `info`, `ls -R`, `ls -R --json`,
# `ls` of every directory and `cat` of every file (as sleuthkit's fls finds them, plus what
# streamfat's own listing shows) must each exit 0 or 1 (1 with a message), within 60 s,
# without a signal and without a sanitizer report. The healthy exfat-rawtools sample must
# list exactly its known tree and every file must equal what sleuthkit's icat reads.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fls icat tar

declare -a problems=()

# robust DESC ARGS...: one CLI run that must end cleanly; problems are collected so that
# one run reports every image that misbehaves.
robust() {
    local desc=$1 rc=0 err=$WORK/.robust.err
    shift
    timeout 60 "$SF" "$@" >"$WORK/.robust.out" 2>"$err" || rc=$?
    if has_sanitizer_report "$err"; then
        problems+=("$desc: sanitizer report: $(grep -m1 -E 'ERROR: |runtime error:' "$err")")
        sed -n 1,30p "$err" >&2
    elif ((rc == 124)); then
        problems+=("$desc: killed by timeout (60 s)")
    elif ((rc > 128)); then
        problems+=("$desc: died from signal $((rc - 128))")
        tail -n 5 "$err" >&2
    elif ((rc != 0 && rc != 1)); then
        problems+=("$desc: exit $rc (want 0 or 1)")
    elif ((rc == 1)) && [[ ! -s $err ]]; then
        problems+=("$desc: exit 1 without a message")
    fi
    return 0
}

# Paths of live regular files and directories that sleuthkit sees (may be empty when
# sleuthkit itself gives up on the image).
tsk_paths() { # IMG TYPE(r|d)
    # fls walks the whole FAT of the 2 TB image for minutes: not on images over 4 GiB
    (($(stat -c %s "$1") <= (4 << 30))) || return 0
    timeout 60 fls -r -p -o 0 "$1" </dev/null 2>/dev/null |
        sed -n "s/^$2\/$2 \([0-9][0-9]*\):\t\(.*\)\$/\2/p" | grep -v '^\$' || true
}

# Regular file paths from streamfat's own recursive JSON listing (best effort: the
# shape is read generously; nothing is returned if it cannot be understood).
sf_json_files() { # JSONFILE
    python3 - "$1" <<'PY' 2>/dev/null || true
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
KIDS = ("entries", "children", "files", "contents", "items")
def is_dir(e):
    for k in ("type", "kind"):
        if str(e.get(k, "")).lower() in ("d", "dir", "directory"):
            return True
    for k in ("is_dir", "dir", "directory"):
        if e.get(k) is True:
            return True
    a = e.get("attr", e.get("attributes"))
    if isinstance(a, int) and a & 0x10:
        return True
    if isinstance(a, str) and "d" in a.lower():
        return True
    return any(isinstance(e.get(k), list) for k in KIDS)
def walk(o, base):
    if isinstance(o, list):
        for x in o:
            walk(x, base)
    elif isinstance(o, dict):
        name = o.get("name")
        path = o.get("path")
        here = base
        if isinstance(name, str) or isinstance(path, str):
            p = path if isinstance(path, str) else (base + "/" + name if base else name)
            p = p.lstrip("/")
            if is_dir(o):
                here = p
            else:
                print(p)
        for k, v in o.items():
            if isinstance(v, (list, dict)):
                walk(v, here)
walk(doc, "")
PY
}

check_image() { # IMG LABEL
    local img=$1 tag=$2 p
    robust "$tag: info" info "$img"
    robust "$tag: info --json" info --json "$img"
    robust "$tag: ls -R" ls -R "$img"
    robust "$tag: ls -l -R" ls -l -R "$img"
    robust "$tag: ls -R --json" ls -R --json "$img"
    cp "$WORK/.robust.out" "$WORK/ls.json"
    robust "$tag: ls /" ls "$img" /
    {
        tsk_paths "$img" r
        sf_json_files "$WORK/ls.json"
    } | sort -u >"$WORK/files.lst"
    while IFS= read -r p; do
        robust "$tag: cat $p" cat "$img" "$p"
    done <"$WORK/files.lst"
    while IFS= read -r p; do
        robust "$tag: ls $p" ls -l "$img" "$p"
    done < <(tsk_paths "$img" d)
}

shopt -s nullglob
n=0
for tarball in "$SF_TESTDATA"/exfatprogs-corrupt/*.tar.xz "$SF_TESTDATA"/exfat-rawtools/*.tar.xz; do
    name=$(basename "$tarball" .tar.xz)
    d=$WORK/img/$name
    mkdir -p "$d"
    tar -xJf "$tarball" -C "$d"
    for img in "$d"/*; do
        [[ -f $img ]] || continue
        log "$name/$(basename "$img")"
        check_image "$img" "$name"
        n=$((n + 1))
    done
done
((n >= 20)) || fail "only $n test images found under $SF_TESTDATA"

log "the healthy exfat-rawtools sample"
img=$WORK/img/sample__exfat.img/exfat.img
[[ -f $img ]] || fail "sample__exfat.img missing"
expect_ls() { # PATH NAMES...: plain ls of PATH lists exactly NAMES
    local path=$1
    shift
    sf_ok ls "$img" "$path" >"$WORK/ls.out"
    printf '%s\n' "$@" | sort >"$WORK/ls.want"
    sort "$WORK/ls.out" >"$WORK/ls.got"
    diff "$WORK/ls.want" "$WORK/ls.got" >&2 || problems+=("sample: ls $path is not the known contents")
}
expect_ls / 0_SIMPLE 1_FILENAME 2_DELETED 3_NOFATCHAIN 4_FATCHAIN
expect_ls 0_SIMPLE FILE.TXT DIR
expect_ls 1_FILENAME 'ABCDEFGHIJKLMNOPQRSTUVWXYZ!' '¼' 'Ō' 'あいうえお'
expect_ls 2_DELETED FILE6.TXT
expect_ls 3_NOFATCHAIN FILE4.TXT
expect_ls 4_FATCHAIN FILE2.TXT FILE3.TXT
rc=0
sf cat "$img" 2_DELETED/FILE5.TXT >/dev/null || rc=$?
((rc == 1)) || problems+=("sample: cat of the deleted 2_DELETED/FILE5.TXT exited $rc, expected 1")
nfiles=0
while IFS=$'\t' read -r ino p; do
    icat -o 0 "$img" "$ino" >"$WORK/icat.out" </dev/null
    if ! sf cat "$img" "$p" >"$WORK/cat.out"; then
        problems+=("sample: cat $p failed")
    elif ! cmp -s "$WORK/cat.out" "$WORK/icat.out"; then
        problems+=("sample: cat $p differs from icat ($(stat -c %s "$WORK/cat.out") vs $(stat -c %s "$WORK/icat.out") bytes)")
    fi
    nfiles=$((nfiles + 1))
done < <(tsk_list "$img")
((nfiles == 9)) || problems+=("sample: sleuthkit found $nfiles live files, expected 9")

if ((${#problems[@]})); then
    printf 'PROBLEM: %s\n' "${problems[@]}" >&2
    fail "${#problems[@]} problems"
fi
