#!/usr/bin/env bash
# CLI round trip: mkfs, mkdir, put (files, trees, stdin, -f), ls (plain, -l, -R, --json),
# cat / get compared with cmp, rm and rm -r, on 512- and 4096-byte-sector images and on a
# GPT-partitioned one; every image must then be clean for fsck.exfat -n, and sleuthkit must
# read the same files.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.exfat python3 fls icat

make_corpus "$WORK/src" 7
mkpattern "$WORK/big.bin" 9M big
printf 'first version\n' >"$WORK/v1.txt"
printf 'second, longer version of the file\n' >"$WORK/v2.txt"

check_json() {   # FILE: valid JSON (python3 -m json.tool)
    python3 -m json.tool "$1" >/dev/null || { cat "$1" >&2; fail "invalid JSON in $1"; }
}

roundtrip() {
    local img=$1 lbl=$2
    shift 2
    local mk=("$@") out=$WORK/out
    log "mkfs ${mk[*]}"
    rm -f "$img"
    sf_ok mkfs -t exfat -s 96M -L "$lbl" "${mk[@]}" "$img" >"$out"
    grep -q "exFAT" "$out" || fail "mkfs summary does not name exFAT"
    grep -q "$lbl" "$out" || fail "mkfs summary does not show the label"

    sf_ok info "$img" >"$out"
    grep -q "^label: *$lbl$" "$out" || { cat "$out" >&2; fail "info: label"; }
    grep -q "^dirty: *no$" "$out" || { cat "$out" >&2; fail "info: dirty flag"; }
    grep -qE '^serial: *[0-9A-F]{4}-[0-9A-F]{4}$' "$out" || fail "info: serial format"
    sf_ok info --json "$img" >"$out.json.info"
    check_json "$out.json.info"
    info_json_has "$img" '^label$' "$lbl"
    info_json_has "$img" '^fs$' exFAT

    # mkdir
    sf_ok mkdir "$img" logs
    sf_ok mkdir -p "$img" deep/er/est
    sf_ok mkdir -p "$img" deep/er           # exists: fine with -p
    sf_err 1 mkdir "$img" logs              # exists without -p
    sf_ok mkdir "$img" empty1 empty2

    # put: a tree, a big file, into a directory, from stdin, overwrite
    sf_put_tree "$img" "$WORK/src" tree/
    sf_ok put "$img" "$WORK/big.bin"
    sf_ok put "$img" "$WORK/v1.txt" logs
    sf_ok put "$img" "$WORK/v1.txt" logs/renamed.txt
    genstream 3M stdin-seed "$WORK/stdin.sum" | sf_ok put "$img" - logs/from-stdin.bin
    sf_err 1 put "$img" "$WORK/v2.txt" logs/v1.txt
    sf_ok put -F "$img" "$WORK/v2.txt" logs/v1.txt

    # read back: get (tree), cat, get to stdout, default destination, into a directory
    sf_verify_tree "$img" "$WORK/src" tree/
    sf cat "$img" big.bin >"$WORK/cat.out" || fail "cat big.bin"
    cmp "$WORK/cat.out" "$WORK/big.bin" || fail "cat big.bin differs"
    [[ $(sf cat "$img" logs/from-stdin.bin | sha256sum | cut -d' ' -f1) == "$(cat "$WORK/stdin.sum")" ]] ||
        fail "file put from stdin differs"
    sf get "$img" logs/v1.txt - >"$WORK/v1.out" || fail "get -"
    cmp "$WORK/v1.out" "$WORK/v2.txt" || fail "put -F did not replace the content"
    mkdir -p "$WORK/gets" && rm -f "$WORK/gets"/*
    (cd "$WORK/gets" && sf_ok get "$img" /logs/renamed.txt) || fail "get to the current directory"
    cmp "$WORK/gets/renamed.txt" "$WORK/v1.txt" || fail "get default destination"
    sf_ok get "$img" big.bin "$WORK/gets"
    cmp "$WORK/gets/big.bin" "$WORK/big.bin" || fail "get into a directory"

    # ls: plain names exactly, sorted
    sf ls "$img" >"$out" || fail "ls"
    printf '%s\n' big.bin deep empty1 empty2 logs tree | diff - "$out" >&2 || fail "ls / names"
    sf ls "$img" logs >"$out" || fail "ls logs"
    printf '%s\n' from-stdin.bin renamed.txt v1.txt | diff - "$out" >&2 || fail "ls logs names"
    sf ls -R "$img" deep >"$out" || fail "ls -R deep"
    printf '%s\n' er er/est | diff - "$out" >&2 || fail "ls -R deep paths"
    sf ls -R "$img" tree >"$out" || fail "ls -R tree"
    (cd "$WORK/src" && find . -mindepth 1 | sed 's|^\./||' | LC_ALL=C sort) |
        diff - <(LC_ALL=C sort "$out") >&2 || fail "ls -R tree differs from the source tree"
    sf ls "$img" tree/dir\ é >"$out" || fail "ls of a non-ASCII directory"
    [[ $(cat "$out") == "$NAME255" ]] || fail "255-character name listed as $(cat "$out")"
    sf ls -l "$img" logs >"$out" || fail "ls -l"
    grep -qE '^file +3145728 +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} +[c-] +from-stdin\.bin$' "$out" ||
        { cat "$out" >&2; fail "ls -l line format"; }
    sf ls -l "$img" >"$out" || fail "ls -l /"
    grep -qE '^dir +[0-9]+ .* logs$' "$out" || { cat "$out" >&2; fail "ls -l directory line"; }
    sf ls -l "$img" big.bin >"$out" || fail "ls -l of a file"
    grep -qE '^file +9437184 .* big\.bin$' "$out" || { cat "$out" >&2; fail "ls -l of a file"; }
    sf ls --json -R "$img" >"$out.json" || fail "ls --json -R"
    check_json "$out.json"
    python3 - "$out.json" "$WORK/src" <<'PY' || fail "ls --json content"
import json, os, sys, datetime
doc = json.load(open(sys.argv[1]))
src = sys.argv[2]
by_path = {e["path"]: e for e in doc}
for e in doc:
    assert set(e) >= {"name", "path", "type", "size", "mtime", "attr"}, e
    assert e["type"] in ("file", "dir"), e
    assert e["path"].endswith("/" + e["name"]), e
    assert e["mtime"].endswith("Z"), e
    t = datetime.datetime.strptime(e["mtime"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert abs((datetime.datetime.utcnow() - t).total_seconds()) < 3600, e
for root, dirs, files in os.walk(src):
    for n in dirs + files:
        p = "/tree/" + os.path.relpath(os.path.join(root, n), src)
        assert p in by_path, p
        e = by_path[p]
        if n in files:
            assert e["type"] == "file" and e["size"] == os.path.getsize(os.path.join(root, n)), e
        else:
            assert e["type"] == "dir", e
assert by_path["/big.bin"]["size"] == 9 << 20
assert by_path["/logs"]["type"] == "dir"
PY
    sf ls --json "$img" empty1 >"$out.json" || fail "ls --json of an empty directory"
    [[ $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out.json") == 0 ]] ||
        fail "ls --json of an empty directory is not []"

    # sleuthkit sees what we wrote (fls/icat take the volume offset in 512-byte units)
    voff=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["volume_offset"])' "$out.json.info")
    tsk_verify "$img" "$WORK/src" tree/ $((voff / 512))

    # rm
    sf_ok rm "$img" logs/renamed.txt
    sf_err 1 cat "$img" logs/renamed.txt
    sf_err 1 rm "$img" logs                 # not empty
    sf_ok rm "$img" empty1                  # empty directory without -r
    sf_ok rm -r "$img" tree deep
    sf_err 1 rm "$img" tree
    sf ls "$img" >"$out" || fail "ls after rm"
    printf '%s\n' big.bin empty2 logs | diff - "$out" >&2 || fail "ls after rm"
    sf_ok info "$img" >"$out"
    grep -q "^dirty: *no$" "$out" || fail "volume left dirty"
    # refill after rm -r: the freed space is usable again
    sf_put_tree "$img" "$WORK/src" again/
    sf_verify_tree "$img" "$WORK/src" again/
}

img=$WORK/rt.img
roundtrip "$img" RT512
run_fsck_exfat "$img"
log "fsck.exfat clean (512-byte sectors)"

roundtrip "$img" RT4K --sector-size 4096 -c 64K
sf_ok info "$img" >"$WORK/info"
grep -q "^sector size: *4096$" "$WORK/info" || fail "4096-byte sectors not reported"
loop_attach "$img" -b 4096
run_fsck_exfat "$LOOP"
loop_detach "$LOOP"
log "fsck.exfat clean (4096-byte sectors)"

roundtrip "$img" RTGPT --partition gpt
sf_ok info --json "$img" >"$WORK/info.json"
off=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["volume_offset"])' "$WORK/info.json")
((off > 0)) || fail "GPT volume offset is 0"
sf_ok ls --partition 1 "$img" >/dev/null
sf_err 1 ls --partition 2 "$img"
size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["volume_size"])' "$WORK/info.json")
# The partition through a loop device at the volume's offset (no udev needed for -P).
loop_attach "$img" -o "$off" --sizelimit "$size"
run_fsck_exfat "$LOOP"
loop_detach "$LOOP"
log "fsck.exfat clean (GPT partition)"
