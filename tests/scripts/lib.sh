# Shared helpers for the shell acceptance tests (sourced, not run).
#
# Sections: environment defaults; work directory and cleanup registry; failure and
# logging; running the CLI under test (sanitizer-aware); independent checkers (fsck.exfat,
# exfat-fuse over a loop device, sleuthkit); pattern data; comparing trees; helpers built
# from tests/helpers/*.c.
#
# Every test script does:
#     set -euo pipefail
#     . "$SF_SRC/tests/scripts/lib.sh"
# and gets $WORK (a fresh mktemp -d directory), removed at exit together with every loop
# device and fuse mount made through these helpers, whether the test passed or not.

# ---- environment ------------------------------------------------------------------------
: "${SF_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${SF_BUILD:=$SF_SRC/build}"
: "${SF:=$SF_BUILD/streamfat}"
: "${SF_TESTDATA:=$(cd "$SF_SRC/.." && pwd)/shared/testdata}"
: "${SF_TESTS_BIN:=$SF_BUILD/tests}"
export SF SF_SRC SF_BUILD SF_TESTDATA SF_TESTS_BIN
# Make sanitizer reports fatal and visible even where the build did not set it.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LC_ALL=C.UTF-8

SF_TEST_NAME=$(basename "${0%.sh}")

# ---- work directory and cleanup ---------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sf-$SF_TEST_NAME.XXXXXX")
# $FASTWORK: like $WORK but on tmpfs when there is one, for images that take many small
# synced writes (each sf_close flushes; fsync on a busy disk costs milliseconds). Keep what
# goes there small: it is memory.
if [[ -d /dev/shm && -w /dev/shm ]]; then
    FASTWORK=$(mktemp -d /dev/shm/sf-$SF_TEST_NAME.XXXXXX)
else
    FASTWORK=$WORK
fi
declare -a _SF_CLEANUP=()        # commands run in reverse order at exit
declare -a _SF_MOUNTS=()         # fuse mount points still mounted
declare -a _SF_LOOPS=()          # loop devices still attached
declare -A _SF_MOUNT_LOOP=()     # mount point -> loop device

# Register a command (a string for eval) to run at exit, last registered first.
on_exit() { _SF_CLEANUP+=("$*"); }

_sf_cleanup() {
    local rc=$? i d
    set +e
    for ((i = ${#_SF_CLEANUP[@]} - 1; i >= 0; i--)); do
        eval "${_SF_CLEANUP[i]}" >/dev/null 2>&1
    done
    for d in "${_SF_MOUNTS[@]}"; do
        [[ -n $d ]] && _sf_unmount_dir "$d"
    done
    for d in "${_SF_LOOPS[@]}"; do
        [[ -n $d ]] && losetup -d "$d" >/dev/null 2>&1
    done
    if [[ -n ${SF_KEEP_WORK:-} ]]; then
        echo "work directories kept: $WORK $FASTWORK" >&2
    else
        rm -rf "$WORK" "$FASTWORK"
    fi
    if ((rc == 0)); then
        echo "PASS $SF_TEST_NAME"
    elif ((rc == 77)); then
        echo "SKIP $SF_TEST_NAME"
    else
        echo "FAIL $SF_TEST_NAME (exit $rc)"
    fi
    exit "$rc"
}
trap _sf_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- failure and logging ----------------------------------------------------------------
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
skip() {
    echo "SKIP: $*" >&2
    exit 77
}
log() { echo "== $*" >&2; }

# `... | matches ARGS` is `... | grep -q ARGS` that reads all of its input. grep -q exits
# at its first match; a writer with more to say then dies of SIGPIPE, and under pipefail
# the pipeline fails although the text matched (t_configure_redetect's `nm | grep -q`
# failed so in CI, depending on timing). t_script_pipes keeps `| grep -q` out of scripts.
matches() { grep "$@" >/dev/null; }

need_tool() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || skip "tool $t not installed"
    done
}

# The CLI under test must exist: a missing binary is a failure, not a skip.
need_sf() {
    [[ -x $SF ]] || fail "CLI under test not found: SF=$SF"
}

# ---- running the CLI under test ---------------------------------------------------------
# sf ARGS...: run "$SF ARGS", its stdout passes through; stderr is shown and checked for
# sanitizer reports (a report fails the test even if the exit status is 0). Returns the
# CLI's exit status. Use sf_ok when the command must succeed.
SF_LAST_ERR=$WORK/.sf_stderr
sf() {
    local rc=0
    timeout "${SF_TIMEOUT:-300}" "$SF" "$@" 2>"$SF_LAST_ERR" || rc=$?
    if [[ -s $SF_LAST_ERR ]]; then
        cat "$SF_LAST_ERR" >&2
    fi
    if has_sanitizer_report "$SF_LAST_ERR"; then
        fail "sanitizer report from: streamfat $*"
    fi
    if ((rc == 124)); then
        fail "timeout: streamfat $*"
    fi
    return "$rc"
}
sf_ok() {
    local rc=0
    sf "$@" || rc=$?
    ((rc == 0)) || fail "streamfat $* exited $rc"
}
# sf_err EXPECTED_RC ARGS...: the command must fail with that status and a message.
sf_err() {
    local want=$1 rc=0
    shift
    sf "$@" >/dev/null || rc=$?
    ((rc == want)) || fail "streamfat $* exited $rc, expected $want"
    [[ -s $SF_LAST_ERR ]] || fail "streamfat $* failed without a message on stderr"
}

has_sanitizer_report() {
    grep -qE 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$1" 2>/dev/null
}

# ---- independent checkers ---------------------------------------------------------------
# run_fsck_exfat IMG: fsck.exfat -n must call the volume clean (exit 0); output shown on
# failure. For a partitioned image pass the partition's loop device instead of the file.
run_fsck_exfat() {
    local img=$1 out=$WORK/.fsck.out rc=0
    timeout 120 fsck.exfat -n "$img" </dev/null >"$out" 2>&1 || rc=$?
    if ((rc != 0)); then
        cat "$out" >&2
        fail "fsck.exfat -n $img: exit $rc"
    fi
    # Belt and braces: exit 0 must come with the "clean." verdict and no question asked.
    if ! grep -q ': clean\. directories' "$out" || grep -qE '^ERROR|\(y/N\)' "$out"; then
        cat "$out" >&2
        fail "fsck.exfat -n $img: reports problems"
    fi
}

# The exfat-fuse mount helper: Debian ships mount.exfat-fuse, some systems exfat-fuse.
fuse_bin() {
    local b
    for b in mount.exfat-fuse exfat-fuse; do
        if command -v "$b" >/dev/null 2>&1; then
            command -v "$b"
            return 0
        fi
    done
    return 1
}

# loop_attach IMG [losetup options: -b 4096, -o OFFSET, -P ...]: attach and set $LOOP
# (not printed: the registration must happen in this shell, not in a $(...) subshell).
loop_attach() {
    local img=$1
    shift
    LOOP=$(losetup -f --show "$@" "$img") || fail "losetup $* $img failed"
    _SF_LOOPS+=("$LOOP")
}
loop_detach() {
    local loop=$1 i
    blockdev --flushbufs "$loop" >/dev/null 2>&1 || true
    losetup -d "$loop" || fail "losetup -d $loop failed"
    for i in "${!_SF_LOOPS[@]}"; do
        [[ ${_SF_LOOPS[i]} == "$loop" ]] && _SF_LOOPS[i]=
    done
    return 0
}

# fuse_mount IMG DIR [losetup options]: attach IMG to a loop device (-b 4096 for 4 KiB
# sectors, -o OFFSET, or -P to mount partition 1) and mount it with exfat-fuse on DIR.
fuse_mount() {
    local img=$1 dir=$2 part=0 a loop dev fb i
    shift 2
    for a in "$@"; do [[ $a == -P ]] && part=1; done
    fb=$(fuse_bin) || skip "exfat-fuse not installed"
    loop_attach "$img" "$@"
    loop=$LOOP
    dev=$loop
    if ((part)); then
        dev=${loop}p1
        for ((i = 0; i < 50; i++)); do
            [[ -b $dev ]] && break
            sleep 0.1
        done
        [[ -b $dev ]] || fail "no partition device $dev after losetup -P"
    fi
    mkdir -p "$dir"
    if ! timeout 60 "$fb" "$dev" "$dir" </dev/null >"$WORK/.fuse.out" 2>&1; then
        cat "$WORK/.fuse.out" >&2
        fail "exfat-fuse could not mount $img ($dev)"
    fi
    _SF_MOUNTS+=("$dir")
    _SF_MOUNT_LOOP[$dir]=$loop
}

# Unmount and wait until the daemon has let go of the device, so that everything it wrote
# is in the image file before anyone else reads it.
_sf_unmount_dir() {
    local dir=$1 i loop=${_SF_MOUNT_LOOP[$1]:-}
    sync -f "$dir" 2>/dev/null
    fusermount -u "$dir" 2>/dev/null || umount "$dir" 2>/dev/null || umount -l "$dir" 2>/dev/null
    if [[ -n $loop ]]; then
        for ((i = 0; i < 100; i++)); do
            fuser -s "$loop" "${loop}p1" 2>/dev/null || break
            sleep 0.1
        done
        loop_detach "$loop" 2>/dev/null
    fi
    unset "_SF_MOUNT_LOOP[$dir]"
    for i in "${!_SF_MOUNTS[@]}"; do
        [[ ${_SF_MOUNTS[i]} == "$dir" ]] && _SF_MOUNTS[i]=
    done
    return 0
}
fuse_umount() {
    local dir=$1
    mountpoint -q "$dir" || fail "$dir is not mounted (exfat-fuse died?)"
    _sf_unmount_dir "$dir"
    ! mountpoint -q "$dir" || fail "could not unmount $dir"
}

# Sleuthkit: tsk_list IMG [SECTOR_OFFSET] writes "INODE<TAB>PATH" for every live regular
# file (deleted ones are left out) to stdout.
# fls -r also opens the virtual $OrphanFiles directory, which reads the whole volume looking
# for orphan files: 40 s on an idle machine for a 40 GiB image, minutes when it is busy. The
# orphans are left out of the list anyway, so make check walks the live directories one fls
# at a time (the same lines, without that scan); SF_LONG=1 (make check-long) runs fls -r.
tsk_list() {
    local img=$1 off=${2:-0}
    if [[ ${SF_LONG:-0} == 1 ]]; then
        timeout 600 fls -r -p -o "$off" "$img" </dev/null |
            sed -n 's/^r\/r \([0-9][0-9]*\):\t\(.*\)$/\1\t\2/p' | grep -v $'\t\\$' || true
        return 0
    fi
    _tsk_walk "$img" "$off" "" ""
}
# _tsk_walk IMG SECTOR_OFFSET DIR_INODE PREFIX: the live regular files under the directory
# (the root when DIR_INODE is empty), recursing into its live subdirectories.
_tsk_walk() {
    local img=$1 off=$2 dir=$3 prefix=$4 line
    local re_file=$'^r/r ([0-9]+):\t(.*)$' re_dir=$'^d/d ([0-9]+):\t(.*)$'
    while IFS= read -r line; do
        if [[ $line =~ $re_file ]]; then
            [[ -z $prefix && ${BASH_REMATCH[2]} == '$'* ]] ||
                printf '%s\t%s%s\n' "${BASH_REMATCH[1]}" "$prefix" "${BASH_REMATCH[2]}"
        elif [[ $line =~ $re_dir && ( -n $prefix || ${BASH_REMATCH[2]} != '$'* ) ]]; then
            _tsk_walk "$img" "$off" "${BASH_REMATCH[1]}" "$prefix${BASH_REMATCH[2]}/"
        fi
    done < <(timeout 120 fls -p -o "$off" "$img" ${dir:+"$dir"} </dev/null || true)
}
# tsk_verify IMG SRCDIR [PREFIX] [SECTOR_OFFSET]: every file under SRCDIR must be in the
# image at PREFIX/relative path with identical content (icat).
tsk_verify() {
    local img=$1 src=$2 prefix=${3:-} off=${4:-0} list=$WORK/.tsk.list rel ino n=0
    tsk_list "$img" "$off" >"$list"
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        ino=$(awk -F'\t' -v p="$prefix$rel" '$2 == p { print $1; exit }' "$list")
        [[ -n $ino ]] || { cat "$list" >&2; fail "sleuthkit: $prefix$rel not found in $img"; }
        timeout 120 icat -o "$off" "$img" "$ino" </dev/null >"$WORK/.icat" ||
            fail "icat $img $ino ($prefix$rel) failed"
        cmp -s "$WORK/.icat" "$src/$rel" || fail "sleuthkit: $prefix$rel differs ($(stat -c %s "$WORK/.icat") vs $(stat -c %s "$src/$rel") bytes)"
        n=$((n + 1))
    done < <(cd "$src" && find . -type f -print0)
    rm -f "$WORK/.icat"
    log "sleuthkit: $n files identical"
}

# ---- pattern data -----------------------------------------------------------------------
# mkpattern FILE SIZE SEED: deterministic bytes (SIZE in bytes or with K/M/G suffix).
mkpattern() {
    python3 - "$1" "$(to_bytes "$2")" "$3" <<'EOF'
import sys, random
path, size, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = random.Random(seed)
block = r.randbytes(1 << 20) if size > 0 else b""
with open(path, "wb") as f:
    done = 0
    i = 0
    while done < size:
        # vary each MiB so that misplaced clusters are caught
        chunk = i.to_bytes(8, "little") + block[8:]
        n = min(len(chunk), size - done)
        f.write(chunk[:n])
        done += n
        i += 1
EOF
}
# genstream SIZE SEED SUMFILE: the same kind of data on stdout; its sha256 goes to SUMFILE.
genstream() {
    python3 - "$(to_bytes "$1")" "$2" "$3" <<'EOF'
import sys, random, hashlib
size, seed, sumfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
r = random.Random(seed)
block = bytearray(r.randbytes(4 << 20))
h = hashlib.sha256()
out = sys.stdout.buffer
done = 0
i = 0
while done < size:
    block[0:8] = i.to_bytes(8, "little")
    n = min(len(block), size - done)
    mv = memoryview(block)[:n]
    h.update(mv)
    out.write(mv)
    done += n
    i += 1
out.flush()
open(sumfile, "w").write(h.hexdigest() + "\n")
EOF
}
to_bytes() {
    local s=$1
    case $s in
    *K) echo $((${s%K} << 10)) ;;
    *M) echo $((${s%M} << 20)) ;;
    *G) echo $((${s%G} << 30)) ;;
    *T) echo $((${s%T} << 40)) ;;
    *) echo "$s" ;;
    esac
}

# ---- comparing trees --------------------------------------------------------------------
# verify_tree DIR SRCDIR: every file under SRCDIR is in DIR (e.g. a fuse mount) identical.
verify_tree() {
    local dir=$1 src=$2 rel n=0
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        [[ -f $dir/$rel ]] || fail "$dir/$rel missing"
        cmp -s "$dir/$rel" "$src/$rel" || fail "$dir/$rel differs from $src/$rel"
        n=$((n + 1))
    done < <(cd "$src" && find . -type f -print0)
    log "$n files identical under $dir"
}
# sf_verify_tree TARGET SRCDIR [PREFIX]: every file under SRCDIR read back by `$SF get`
# from PREFIX/relative path is identical.
sf_verify_tree() {
    local img=$1 src=$2 prefix=${3:-} rel n=0 out=$WORK/.sfget
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        rm -f "$out"
        sf_ok get "$img" "$prefix$rel" "$out"
        cmp -s "$out" "$src/$rel" || fail "streamfat get $prefix$rel differs ($(stat -c %s "$out") vs $(stat -c %s "$src/$rel") bytes)"
        n=$((n + 1))
    done < <(cd "$src" && find . -type f -print0)
    rm -f "$out"
    log "streamfat get: $n files identical"
}
# sf_put_tree TARGET SRCDIR [PREFIX]: `$SF mkdir -p` every directory and `$SF put` every file.
sf_put_tree() {
    local img=$1 src=$2 prefix=${3:-} rel
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        [[ -n $rel && $rel != . ]] && sf_ok mkdir -p "$img" "$prefix$rel"
    done < <(cd "$src" && find . -mindepth 1 -type d -print0)
    while IFS= read -r -d '' rel; do
        rel=${rel#./}
        sf_ok put "$img" "$src/$rel" "$prefix$rel"
    done < <(cd "$src" && find . -type f -print0)
}

# A test corpus: empty, 1 byte, odd sizes, 5 MiB, nested dirs, non-ASCII and long names.
NAME255=$(printf 'n%.0s' {1..251}).txt
make_corpus() {
    local d=$1 seed=${2:-1}
    mkdir -p "$d/a/b/c" "$d/日本" "$d/dir é"
    : >"$d/empty"
    printf x >"$d/one"
    mkpattern "$d/odd511" 511 "$seed.1"
    mkpattern "$d/odd4097" 4097 "$seed.2"
    mkpattern "$d/odd_131073.bin" 131073 "$seed.3"
    mkpattern "$d/big5m.bin" 5M "$seed.4"
    mkpattern "$d/a/b/c/deep.dat" 100003 "$seed.5"
    mkpattern "$d/café.txt" 1234 "$seed.6"
    mkpattern "$d/über ü.txt" 77 "$seed.7"
    mkpattern "$d/日本/日本語.txt" 3000 "$seed.8"
    mkpattern "$d/smile 😀.log" 999 "$seed.9"
    mkpattern "$d/dir é/$NAME255" 4096 "$seed.10"
}

# ---- helper programs --------------------------------------------------------------------
# helper NAME: path of the tests/helpers/NAME.c executable; built by hand into $WORK when
# the build has not made it (linking build's libstreamfat.a).
helper() {
    local name=$1 exe lib flags=()
    for exe in "$SF_TESTS_BIN/$name" "$SF_BUILD/$name" "$SF_BUILD/tests/$name" "$SF_BUILD/tests/helpers/$name"; do
        if [[ -x $exe ]]; then
            echo "$exe"
            return 0
        fi
    done
    exe=$WORK/$name
    [[ -x $exe ]] && { echo "$exe"; return 0; }
    lib=$(find "$SF_BUILD" -name 'libstreamfat*.a' 2>/dev/null | head -n1)
    [[ -n $lib ]] || fail "helper $name not built and no libstreamfat.a under $SF_BUILD"
    [[ $SF_BUILD == *asan* ]] && flags=(-fsanitize=address,undefined -fno-omit-frame-pointer)
    gcc -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror "${flags[@]}" \
        -I"$SF_SRC/include" -I"$SF_SRC/src" "$SF_SRC/tests/helpers/$name.c" "$lib" \
        -o "$exe" >&2 || fail "could not build helper $name"
    echo "$exe"
}
# run_helper NAME ARGS...: run it, sanitizer-checked like sf.
run_helper() {
    local exe rc=0 err=$WORK/.helper.err
    exe=$(helper "$1")
    shift
    timeout "${SF_TIMEOUT:-300}" "$exe" "$@" 2>"$err" || rc=$?
    [[ -s $err ]] && cat "$err" >&2
    has_sanitizer_report "$err" && fail "sanitizer report from $(basename "$exe") $*"
    ((rc == 0)) || fail "$(basename "$exe") $* exited $rc"
}

# info_json_has TARGET KEY_REGEX VALUE: `$SF info --json TARGET` holds, at any depth, a key
# matching KEY_REGEX whose value is VALUE (numbers compared as numbers).
info_json_has() {
    local img=$1 key=$2 val=$3
    sf_ok info --json "$img" >"$WORK/.info.json"
    python3 - "$WORK/.info.json" "$key" "$val" <<'PY' || { cat "$WORK/.info.json" >&2; fail "streamfat info --json $img: no key ~ /$key/ = $val"; }
import json, re, sys
doc = json.load(open(sys.argv[1]))
key, val = re.compile(sys.argv[2]), sys.argv[3]
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if key.search(k) and not isinstance(v, (dict, list)) and str(v) == val:
                return True
            if walk(v):
                return True
    elif isinstance(o, list):
        return any(walk(x) for x in o)
    return False
sys.exit(0 if walk(doc) else 1)
PY
}
