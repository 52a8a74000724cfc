#!/usr/bin/env bash
# Acceptance: every image of ../shared/testdata/dosfstools (FAT12/16/32 from the dosfstools
# test suite; see its README). Clean ones (check-*.xxd, label-*.xxd, reference*.xxd) mount
# and read: `info`, `ls -R`, and `cat` of every file, each file identical to what mtools
# reads, labels equal to the .label file (the label as the tools report it; "NO NAME" is
# none). Corrupted ones (check-*.fsck) mount or are refused, without a crash, a hang or a
# sanitizer report; whatever lists is read too. Nothing is written: the CLI opens read-only.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool xxd mcopy

dir=$SF_TESTDATA/dosfstools
[[ -d $dir ]] || fail "no test data at $dir"
export SF_TIMEOUT=60
img=$WORK/x.img

# cat_all IMG: `$SF cat` of every file `ls -R --json` lists, into $WORK/got/PATH; returns
# the number of cat failures. Corrupted images may fail; sf() still catches crashes/hangs.
cat_all() {
    local img=$1 p bad=0
    rm -rf "$WORK/got"
    mkdir -p "$WORK/got"
    sf ls -R --json "$img" >"$WORK/ls.json" || return 1
    while IFS= read -r -d '' p; do
        mkdir -p "$WORK/got/$(dirname "$p")"
        sf cat "$img" "$p" >"$WORK/got/$p" || bad=$((bad + 1))
    done < <(python3 -c '
import json, sys
for e in json.load(open(sys.argv[1])):
    if e["type"] == "file":
        sys.stdout.write(e["path"].lstrip("/") + "\0")' "$WORK/ls.json")
    return "$bad"
}

clean=0 corrupt=0 refused=0
for f in "$dir"/*.xxd "$dir"/*.fsck; do
    name=$(basename "$f")
    base=${name%.*}
    rm -f "$img"
    xxd -r "$f" "$img"
    # A few images are not a whole number of sectors (the dosfstools suite cuts them at a
    # round byte count); pad them as a partition would be, the volume itself is unchanged.
    size=$(stat -c %s "$img")
    ((size % 512 == 0)) || truncate -s $(((size + 511) / 512 * 512)) "$img"
    if [[ $name == *.fsck ]]; then
        corrupt=$((corrupt + 1))
        if sf info "$img" >/dev/null; then
            cat_all "$img" || true
        else
            refused=$((refused + 1))
        fi
        continue
    fi
    clean=$((clean + 1))
    sf_ok info "$img" >/dev/null
    cat_all "$img" || fail "$name: a file could not be read"
    # mtools reads the same bytes
    rm -rf "$WORK/mt"
    mkdir -p "$WORK/mt"
    if timeout 60 mcopy -s -n -i "$img" "::/*" "$WORK/mt/" </dev/null 2>/dev/null; then
        while IFS= read -r -d '' p; do
            p=${p#./}
            [[ -f $WORK/mt/$p ]] || continue       # mtools may spell a name differently
            cmp -s "$WORK/got/$p" "$WORK/mt/$p" || fail "$name: $p differs from what mtools reads"
        done < <(cd "$WORK/got" && find . -type f -print0)
    fi
    if [[ -f $dir/$base.label ]]; then
        want=$(sed 's/ *$//' "$dir/$base.label")
        [[ $want == "NO NAME" ]] && want=
        sf_ok info --json "$img" >"$WORK/info.json"
        got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["label"])' "$WORK/info.json")
        [[ $got == "$want" ]] || fail "$name: label '$got', expected '$want'"
    fi
done
log "$clean clean images read, $corrupt corrupted ones survived ($refused refused at mount)"
((clean >= 20 && corrupt >= 15)) || fail "expected more test images in $dir"
