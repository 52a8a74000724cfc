#!/usr/bin/env bash
# Review of issue 26 item 1: the one output path (cli/common/outfile.c) writes beside the
# target and renames, and rename(2) asks only the directory. So, for every command that
# writes a host file through it (export -o, export --all, get, bench --plot/--csv, demo -o):
# - a file the user may not write (mode 0444, as a user other than root) is refused with
#   "PATH: cannot open: permission denied" and stays as it was (it was replaced);
# - a symbolic link whose target does not exist yet creates that target and stays a link
#   (the link itself was replaced by a regular file);
# - a directory as the output says "PATH: cannot open: is a directory" in the one form.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool setpriv
cd "$WORK"
chmod 755 "$WORK"

sf_ok log --mkfs exfat --size 64M --source gen:can,rate=1000 --duration 0.2 v.img >/dev/null
truncate -s 64M b.img

# each writer: a command line with OUT where the output goes
writers=(
    "export -f candump -o OUT v.img LOG00001.SFL"
    "export -f mf4 -o OUT v.img LOG00001.SFL"
    "get v.img LOG00001.SFL OUT"
    "bench --size 4M --plot OUT b.img"
    "bench --size 4M --csv OUT b.img"
    "demo -F -o OUT"
)

log "a symbolic link to a file not there yet: the file is created, the link stays"
for w in "${writers[@]}"; do
    rm -rf out && mkdir out && ln -s made.out out/link
    read -ra args <<<"${w//OUT/out/link}"
    sf_ok "${args[@]}" >/dev/null
    [[ -L out/link ]] || fail "$w: the link out/link was replaced"
    [[ -s out/made.out ]] || fail "$w: the link's target was not written"
done
mkdir -p ex && ln -sf "$WORK/ex/target.csv" ex/LOG00001.csv
sf_ok export -f csv --all v.img ex >/dev/null
[[ -L ex/LOG00001.csv && -s ex/target.csv ]] || fail "export --all replaced a link to a file not there yet"

log "an output in a directory that does not exist: one form"
for w in "${writers[@]}"; do
    read -ra args <<<"${w//OUT/nodir/x.out}"
    sf_err 1 "${args[@]}"
    grep -q "^streamfat [a-z]*: nodir/x.out: cannot open: no such file or directory$" "$SF_LAST_ERR" ||
        fail "$w: not 'nodir/x.out: cannot open: no such file or directory'"
done

log "one file twice: bench --plot F --csv F, put IMG IMG"
echo keep >twice.out
sf_err 2 bench --size 4M --plot twice.out --csv twice.out b.img
grep -q -- "--plot and --csv name the same file twice.out" "$SF_LAST_ERR" || fail "bench --plot F --csv F: not refused"
[[ $(cat twice.out) == keep ]] || fail "bench --plot F --csv F changed F"
cp v.img self.img && ln -sf self.img self.lnk
before=$(sha256sum <self.img)
for src in self.img self.lnk; do
    sf_err 1 put self.img "$src" copy.bin
    grep -q "$src: is the image this command writes into" "$SF_LAST_ERR" || fail "put IMG $src: not refused as the image itself"
done
[[ $(sha256sum <self.img) == "$before" ]] || fail "put IMG IMG changed the image"

log "a directory as the output: one form"
mkdir -p adir
for w in "export -f candump -o adir v.img LOG00001.SFL" "bench --size 4M --plot adir b.img"; do
    read -ra args <<<"$w"
    sf_err 1 "${args[@]}"
    grep -q "^streamfat [a-z]*: adir: cannot open: is a directory$" "$SF_LAST_ERR" ||
        fail "$w: not 'adir: cannot open: is a directory'"
done

log "demo builds its image beside -o under a temporary name: no message names it"
# on tmpfs (O_DIRECT alignment unknown: a note naming the image) and on a full tmpfs (the
# log's write error): the messages name d.img, never ".d.img.XXXXXX" (they did)
if ((EUID == 0)) && need_tool mount 2>/dev/null; then
    for size in 80m 400k; do
        mkdir -p "tm$size"
        mount -t tmpfs -o size=$size tmpfs "tm$size" || skip "cannot mount a tmpfs"
        on_exit umount "$WORK/tm$size"
        rc=0
        (cd "tm$size" && timeout 120 "$SF" demo -o d.img) >/dev/null 2>err || rc=$?
        cat err >&2
        has_sanitizer_report err && fail "sanitizer report: demo on a $size tmpfs"
        grep -q '\.d\.img\.' err && fail "demo on a $size tmpfs: a message names the temporary image"
        [[ $size == 400k ]] && { ((rc == 1)) || fail "demo on a full tmpfs exited $rc"; grep -q 'd\.img' err || fail "demo on a full tmpfs: the message does not name d.img"; }
        umount "tm$size"
    done
fi

log "root replaces another user's file: the file keeps its owner"
if ((EUID == 0)) && id nobody >/dev/null 2>&1; then
    for w in "${writers[@]}"; do
        echo old >owned.out && chown nobody owned.out
        read -ra args <<<"${w//OUT/owned.out}"
        sf_ok "${args[@]}" >/dev/null
        [[ $(stat -c %U owned.out) == nobody ]] || fail "$w: owned.out now belongs to $(stat -c %U owned.out)"
    done
fi

log "a file the user may not write: refused, left as it was"
((EUID == 0)) || skip "needs root to run as another user"
id nobody >/dev/null 2>&1 || skip "no user nobody"
mkdir -p ro && chmod 777 ro && cp v.img b.img ro/ && chown nobody ro/*.img
for w in "${writers[@]}"; do
    echo keep >ro/keep.out && chmod 444 ro/keep.out && chown nobody ro/keep.out
    read -ra args <<<"${w//OUT/keep.out}"
    rc=0
    (cd ro && timeout 120 setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
        env ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$SF" "${args[@]}") >/dev/null 2>err || rc=$?
    cat err >&2
    has_sanitizer_report err && fail "sanitizer report: $w"
    ((rc == 1)) || fail "$w into a 0444 file as nobody exited $rc, expected 1"
    grep -q "keep.out: cannot open: permission denied" err || fail "$w: no 'permission denied' line"
    [[ $(cat ro/keep.out) == keep ]] || fail "$w replaced a file its user may not write"
done
log "ok"
