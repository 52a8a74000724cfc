#!/usr/bin/env bash
# Bad input to the commands that write (mkfs, put, rm, mkdir, log, fsck --repair): wrong
# sizes and values, unknown options, a TARGET that is a directory, a target in use (an image
# another process writes to, a block device held O_EXCL or mounted), an image too small for
# the format asked for. Each is refused with a clear error (exit 2 and "Try ..." for usage,
# exit 1 and one line naming the target at run time; fsck: 2) and changes nothing: every
# target's checksum is the same after. t_cli_usage covers --help, the read commands and
# the first usage errors of each command; this test does not repeat them.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool flock sha256sum
cd "$WORK"

printf 'hello\n' >"$WORK/hello.txt"
ex=$WORK/ex.img          # exFAT with a file and a directory
f16=$WORK/f16.img        # FAT16, the same (small: every check hashes the images)
sf_ok mkfs -q -t exfat -s 4M "$ex"
sf_ok mkfs -q -t fat16 -s 4M "$f16"
for img in "$ex" "$f16"; do
    sf_ok mkdir "$img" d
    sf_ok put "$img" "$WORK/hello.txt" d/hello.txt
done
mkdir -p "$WORK/adir/sub"
printf 'x' >"$WORK/adir/sub/file"

guarded=("$ex" "$f16")
declare -A sum=()
snapshot() {
    local g
    for g in "${guarded[@]}"; do sum[$g]=$(sha256sum <"$g"); done
    sum[adir]=$(cd "$WORK/adir" && find . -printf '%p %s %T@\n' | sort | sha256sum)
}
unchanged() {
    local g
    for g in "${guarded[@]}"; do
        [[ $(sha256sum <"$g") == "${sum[$g]}" ]] || fail "streamfat $*: changed $g"
    done
    [[ $(cd "$WORK/adir" && find . -printf '%p %s %T@\n' | sort | sha256sum) == "${sum[adir]}" ]] ||
        fail "streamfat $*: changed the directory adir"
}
snapshot

# expect CODE NAME CMD ARGS...: `streamfat CMD ARGS` exits CODE; usage errors (2, except fsck) give two lines
# ("streamfat CMD: ..." and "Try ..."), run-time errors one line naming NAME (the log
# command's summary lines after its error line are allowed); nothing guarded changes.
expect() {
    local code=$1 name=$2 c=$3 rc=0  # c: the command, first of ARGS
    shift 2
    timeout 120 "$SF" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    ((rc == code)) || { cat "$WORK/err" >&2; fail "streamfat $*: exit $rc, expected $code"; }
    has_sanitizer_report "$WORK/err" && fail "sanitizer report: streamfat $*"
    head -n1 "$WORK/err" | matches "^streamfat $c: ." ||
        { cat "$WORK/err" >&2; fail "streamfat $*: first line is not 'streamfat $c: ...'"; }
    head -n1 "$WORK/err" | matches -F -- "$name" ||
        { cat "$WORK/err" >&2; fail "streamfat $*: the error does not name '$name'"; }
    local try=0
    [[ $(wc -l <"$WORK/err") == 2 && $(tail -n1 "$WORK/err") == "Try 'streamfat $c --help'." ]] && try=1
    if ((code == 2)) && [[ $c != fsck ]] || ((try)); then   # fsck's 2 is also "cannot check"
        ((code == 2 && try)) || { cat "$WORK/err" >&2; fail "streamfat $*: not a two-line usage error"; }
    elif [[ $c != log ]]; then
        [[ $(wc -l <"$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "streamfat $*: not one line"; }
    fi
    unchanged "$@"
}

# ---- wrong sizes and values, unknown options (exit 2) ----
for img in "$ex" "$f16"; do
    expect 2 "--ring" log --source gen:can --ring 12Q "$img"
    expect 2 "--split-size" log --source gen:can --split-size -5M "$img"
    expect 2 "--chunk" log --source gen:can --chunk 100 "$img"
    expect 2 "--chunk" log --source gen:can --chunk 3K "$img"
    expect 2 "--qd" log --source gen:can --qd 0 "$img"
    expect 2 "--qd" log --source gen:can --qd 65 "$img"
    expect 2 "--max-bytes" log --source gen:can --max-bytes 1.5.5M "$img"
    expect 2 "--duration" log --source gen:can --duration -1 "$img"
    expect 2 "nope" log --source nope:x "$img"
    expect 2 "--frob" log --frob --source gen:can "$img"
    expect 2 "--bs" put --bs 3Q "$img" "$WORK/hello.txt"
    expect 2 "--frob" put --frob "$img" "$WORK/hello.txt"
    expect 2 "--frob" rm --frob "$img" d/hello.txt
    expect 2 "--frob" mkdir --frob "$img" e
    expect 2 "FATs" mkfs --fats 3 "$img"
    expect 2 "--frob" mkfs --frob "$img"
    expect 2 "--frob" fsck --repair --frob "$img"
done

# ---- a TARGET that is a directory (exit 1; fsck 2) ----
d=$WORK/adir
expect 1 "$d" mkfs -q "$d"
expect 1 "$d" mkfs -q -s 8M "$d"
expect 1 "$d" put "$d" "$WORK/hello.txt"
expect 1 "$d" rm "$d" sub/file
expect 1 "$d" mkdir "$d" x
expect 1 "$d" log --source gen:can --max-records 10 "$d"
expect 1 "$d" log --mkfs exfat --source gen:can --max-records 10 "$d"
expect 2 "$d" fsck --repair "$d"
grep -q "not a regular file or block device" "$WORK/err" || fail "fsck on a directory: $(cat "$WORK/err")"

# ---- an image too small for the format (exit 1, the image is not touched) ----
expect 1 "FAT32" mkfs -q --force -t fat32 "$ex"
expect 1 "FAT16" mkfs -q --force -t fat16 -s 1M "$ex"
expect 1 "FAT32" log --mkfs fat32 --force --source gen:can --max-records 10 "$ex"
small=$WORK/small.img
truncate -s 512K "$small"
guarded+=("$small")
snapshot
expect 1 "small.img" mkfs -q -t exfat "$small"
grep -q "1 MiB" "$WORK/err" || fail "mkfs exfat on 512K does not say the minimum: $(cat "$WORK/err")"
expect 1 "small.img" mkfs -q "$small"
expect 1 "new.img" mkfs -q -t fat32 -s 8M "$WORK/new.img"
[[ ! -e $WORK/new.img ]] || fail "a refused mkfs left new.img behind"

# ---- an image another process writes to (exit 1; fsck 2) ----
# A holder of the image's lock (as every streamfat writer takes it, cli/common/target.c).
# The subshell takes the lock on fd 9 and becomes the sleep that holds it: one process, so
# killing it frees the lock (flock FILE sleep 60 would leave its sleep behind, holding the
# lock and ctest's output pipe, and the test would take 60 s longer).
# wait_until WHAT PID CMD...: run CMD every 0.1 s until it succeeds; fail if PID (what
# should bring it about) ended first or 30 s passed: the checks after it assume it.
wait_until() {
    local what=$1 pid=$2 i
    shift 2
    for ((i = 0; i < 300; i++)); do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null || fail "$what: its process ended first"
        sleep 0.1
    done
    fail "$what: not within 30 s"
}
lock_held() { ! flock -n -x "$1" true 2>/dev/null; }
( exec 9<"$f16" && flock -x 9 && exec sleep 60 ) &
holder=$!
on_exit "kill $holder"
wait_until "the lock on f16.img held" "$holder" lock_held "$f16"
expect 1 "in use" put "$f16" "$WORK/hello.txt" new.txt
expect 1 "in use" rm "$f16" d/hello.txt
expect 1 "in use" mkdir "$f16" e
expect 1 "in use" mkfs -q --force "$f16"
expect 1 "in use" log --source gen:can --max-records 10 "$f16"
expect 2 "in use" fsck --repair "$f16"
sf_ok ls "$f16" d >/dev/null           # readers take no lock
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

# The same with a real writer: put while a logger runs on the image.
lg=$WORK/lg.img
sf_ok mkfs -q -t exfat -s 16M "$lg"
"$SF" log -q --no-direct --source gen:can,rate=200 --duration 60 "$lg" </dev/null 2>"$WORK/log.err" &
logger=$!
on_exit "kill $logger"
# Its first file exists once it holds the lock (ls takes none, so it cannot disturb it).
has_log() { timeout 30 "$SF" ls "$1" 2>/dev/null | matches SFL; }
wait_until "the logger's first file" "$logger" has_log "$lg"
rc=0
"$SF" put "$lg" "$WORK/hello.txt" </dev/null >/dev/null 2>"$WORK/err" || rc=$?
((rc == 1)) && grep -q "in use" "$WORK/err" ||
    { cat "$WORK/err" >&2; fail "put while log runs: exit $rc, not refused as in use"; }
kill -TERM "$logger"                   # ends a run cleanly (docs: Ctrl-C / SIGTERM)
wait "$logger" || { cat "$WORK/log.err" >&2; fail "the logger failed"; }
sf_ok fsck "$lg" >/dev/null            # the logger's volume is intact
sf_ok put "$lg" "$WORK/hello.txt"      # and takes writes once the logger is gone

# ---- a block device held by another opener (O_EXCL) or mounted by the kernel ----
if [[ $(id -u) == 0 ]] && command -v losetup >/dev/null && losetup -f >/dev/null 2>&1; then
    dimg=$WORK/dev.img
    sf_ok mkfs -q -t fat32 -s 34M -c 512 "$dimg"
    sf_ok put "$dimg" "$WORK/hello.txt"
    loop_attach "$dimg"
    dev=$LOOP
    dsum=$(sha256sum <"$dev")
    python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(60)' "$dev" >"$WORK/held" 2>&1 &
    excl=$!
    on_exit "kill $excl"
    wait_until "$dev held with O_EXCL" "$excl" grep -q held "$WORK/held"
    expect 1 "busy" put "$dev" "$WORK/hello.txt" new.txt
    expect 1 "busy" rm "$dev" hello.txt
    expect 1 "busy" mkdir "$dev" e
    expect 1 "busy" mkfs -q --force "$dev"
    expect 1 "busy" log --source gen:can --max-records 10 "$dev"
    expect 2 "busy" fsck --repair "$dev"
    kill "$excl" 2>/dev/null || true
    wait "$excl" 2>/dev/null || true
    [[ $(sha256sum <"$dev") == "$dsum" ]] || fail "a refused command changed $dev"
    # A kernel mount holds the device the same way; not every machine can mount FAT.
    mkdir -p "$WORK/mnt"
    if mount -o ro -t vfat "$dev" "$WORK/mnt" 2>/dev/null; then
        on_exit "umount $WORK/mnt"
        expect 1 "busy" put "$dev" "$WORK/hello.txt" new.txt
        expect 1 "busy" mkfs -q --force "$dev"
        umount "$WORK/mnt"
        [[ $(sha256sum <"$dev") == "$dsum" ]] || fail "a refused command changed mounted $dev"
    else
        log "kernel cannot mount vfat here: the mounted case runs on exFAT through exfat-fuse below"
    fi
    # An exFAT volume mounted through exfat-fuse (a FUSE block mount holds the device too).
    if fuse_bin >/dev/null; then
        ximg=$WORK/xdev.img
        sf_ok mkfs -q -t exfat -s 64M "$ximg"
        sf_ok put "$ximg" "$WORK/hello.txt"
        fuse_mount "$ximg" "$WORK/xmnt"
        xdev=${_SF_MOUNT_LOOP[$WORK/xmnt]}
        [[ -f $WORK/xmnt/hello.txt ]] || fail "exfat-fuse does not show hello.txt"
        xsum=$(sha256sum <"$xdev")
        expect 1 "busy" put "$xdev" "$WORK/hello.txt" new.txt
        expect 1 "busy" rm "$xdev" hello.txt
        expect 1 "busy" mkfs -q --force -t exfat "$xdev"
        expect 1 "busy" log --source gen:can --max-records 10 "$xdev"
        expect 2 "busy" fsck --repair "$xdev"
        [[ $(sha256sum <"$xdev") == "$xsum" ]] || fail "a refused command changed mounted $xdev"
        fuse_umount "$WORK/xmnt"
        log "exFAT mounted through exfat-fuse on $xdev: every writing command refused, device unchanged"
    else
        log "exfat-fuse not installed: mounted-device case not run"
    fi
else
    log "no loop devices (not root?): block device cases not run"
fi
log "bad input: ok"
