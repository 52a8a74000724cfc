#!/usr/bin/env bash
# CLI conventions: every subcommand's --help (stdout, exit 0, synopsis); wrong usage is
# exit 2 with "streamfat CMD: ..." and "Try 'streamfat CMD --help'." on stderr; runtime
# errors are exit 1 with one line naming the target; read commands never change a target;
# a file without a file system is named as such.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
cd "$WORK"

cmds=(mkfs info ls cat get put rm mkdir demo log export fsck bench plan)

# ---- help ----
sf_ok --help >"$WORK/help.out"
for c in "${cmds[@]}"; do
    grep -qw "$c" "$WORK/help.out" || fail "streamfat --help does not mention $c"
done
version=$(sed -n 's/^#define SF_VERSION_STRING "\(.*\)"$/\1/p' "$SF_SRC/include/streamfat/sf.h")
[[ $(sf --version) == "streamfat $version" ]] || fail "streamfat --version is not 'streamfat $version'"
for c in "${cmds[@]}"; do
    for h in --help -h; do
        sf_ok "$c" "$h" >"$WORK/help.out"
        [[ ! -s $SF_LAST_ERR ]] || fail "streamfat $c $h wrote to stderr"
        grep -q "^SYNOPSIS" "$WORK/help.out" || fail "streamfat $c $h: no SYNOPSIS"
        grep -q "^  streamfat $c " "$WORK/help.out" || fail "streamfat $c $h: no synopsis line"
        grep -q "^EXIT STATUS" "$WORK/help.out" || fail "streamfat $c $h: no EXIT STATUS"
        grep -q "^EXAMPLES" "$WORK/help.out" || fail "streamfat $c $h: no EXAMPLES"
    done
done

# ---- wrong usage: exit 2, exactly two lines on stderr ----
usage_err() {
    local c=$1 rc=0
    shift
    timeout 60 "$SF" "$c" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
    ((rc == 2)) || { cat "$WORK/err" >&2; fail "streamfat $c $*: exit $rc, expected 2"; }
    [[ ! -s $WORK/out ]] || fail "streamfat $c $*: wrote to stdout on a usage error"
    [[ $(wc -l <"$WORK/err") == 2 ]] || { cat "$WORK/err" >&2; fail "streamfat $c $*: not two lines"; }
    head -n1 "$WORK/err" | matches "^streamfat $c: ." || fail "streamfat $c $*: first line: $(head -n1 "$WORK/err")"
    [[ $(tail -n1 "$WORK/err") == "Try 'streamfat $c --help'." ]] || fail "streamfat $c $*: no 'Try' line"
}
for c in mkfs info ls cat get put rm mkdir log export fsck bench plan; do
    usage_err "$c"                       # nothing at all
    usage_err "$c" --no-such-option x.img
    usage_err "$c" -Z x.img
done
usage_err demo --no-such-option
usage_err demo extra-argument
usage_err info --partition                # missing value
usage_err info --partition abc x.img
usage_err ls --partition -1 x.img
usage_err info a.img b.img
usage_err cat x.img
usage_err get x.img
usage_err put x.img
usage_err put x.img -                    # stdin needs a PATH
usage_err rm x.img
usage_err mkdir x.img
usage_err mkfs -s 12X x.img
usage_err mkfs -s -1M x.img
usage_err mkfs -s 0 x.img
usage_err mkfs -c 3000 x.img
usage_err mkfs -c 0.1K x.img
usage_err mkfs -t ntfs x.img
usage_err mkfs --partition apm x.img
usage_err mkfs --align 3M x.img
usage_err mkfs --sector-size 1024 x.img
usage_err mkfs -s
[[ ! -e x.img ]] || fail "a usage error created x.img"
rc=0; "$SF" >/dev/null 2>"$WORK/err" || rc=$?
((rc == 2)) || fail "streamfat without a command: exit $rc"
rc=0; "$SF" frobnicate >/dev/null 2>"$WORK/err" || rc=$?
((rc == 2)) && grep -q frobnicate "$WORK/err" || fail "unknown command: exit $rc"

# ---- runtime errors: exit 1, one line naming the target ----
runtime_err() {
    local name=$1 rc=0
    shift
    timeout 60 "$SF" "$@" >/dev/null 2>"$WORK/err" </dev/null || rc=$?
    ((rc == 1)) || { cat "$WORK/err" >&2; fail "streamfat $*: exit $rc, expected 1"; }
    [[ $(wc -l <"$WORK/err") == 1 ]] || { cat "$WORK/err" >&2; fail "streamfat $*: not one line"; }
    grep -qF -- "$name" "$WORK/err" || { cat "$WORK/err" >&2; fail "streamfat $*: message does not name $name"; }
    has_sanitizer_report "$WORK/err" && fail "sanitizer report: streamfat $*"
    return 0
}
missing=$WORK/no-such.img
runtime_err "$missing" info "$missing"
runtime_err "$missing" ls "$missing"
runtime_err "$missing" ls -l "$missing" /
runtime_err "$missing" cat "$missing" a
runtime_err "$missing" get "$missing" a "$WORK/a.out"
printf hello >"$WORK/hello.txt"
runtime_err "$missing" put "$missing" "$WORK/hello.txt"
runtime_err "$missing" rm "$missing" a
runtime_err "$missing" mkdir "$missing" a
runtime_err "$missing" mkfs "$missing"          # no -s: not created
[[ ! -e $missing ]] || fail "a failed command created $missing"
[[ ! -e $WORK/a.out ]] || fail "get on a missing target created its destination"

# Files without a file system.
head -c 1048576 /dev/zero >"$WORK/zeros.img"
runtime_err "zeros.img" info "$WORK/zeros.img"
grep -qi "no FAT or exFAT" "$WORK/err" || fail "info on zeros does not say there is no file system"
head -c 1048576 /dev/urandom >"$WORK/random.img"
runtime_err "random.img" ls "$WORK/random.img"
printf 'just some text\n' >"$WORK/text.txt"
runtime_err "text.txt" info "$WORK/text.txt"
runtime_err "$WORK" info "$WORK"                  # a directory

# ---- read commands never change the target ----
img=$WORK/ro.img
sf_ok mkfs -q -t exfat -s 32M -L RO "$img"
sf_ok mkdir "$img" d
sf_ok put "$img" "$WORK/hello.txt" d/hello.txt
touch -d '2001-02-03 04:05:06' "$img"
sum0=$(sha256sum <"$img")
mt0=$(stat -c %Y "$img")
mkdir -p "$WORK/getdir"
sf_ok info "$img" >/dev/null
sf_ok info --json "$img" >/dev/null
sf_ok ls "$img" >/dev/null
sf_ok ls -lR "$img" >/dev/null
sf_ok ls --json -R "$img" / >/dev/null
sf_ok cat "$img" d/hello.txt >/dev/null
sf_ok get "$img" d/hello.txt "$WORK/getdir/"
sf_ok get "$img" d/hello.txt - >/dev/null
runtime_err "nope" cat "$img" d/nope
runtime_err "$img" ls "$img" nope
runtime_err "$img" get "$img" d "$WORK/getdir/d"
[[ ! -e $WORK/getdir/d ]] || fail "failed get left $WORK/getdir/d"
chmod 0444 "$img"
sf_ok ls "$img" d >/dev/null          # works on a read-only file (no write access needed)
chmod 0644 "$img"
[[ $(sha256sum <"$img") == "$sum0" ]] || fail "a read command changed the image bytes"
[[ $(stat -c %Y "$img") == "$mt0" ]] || fail "a read command changed the image mtime"
cmp -s "$WORK/getdir/hello.txt" "$WORK/hello.txt" || fail "get into a directory"

# Write commands refuse what they must and say why.
runtime_err "hello.txt" put "$img" "$WORK/hello.txt" d/hello.txt      # exists, no -F
grep -q -- "-F" "$WORK/err" || fail "put on an existing file does not mention -F"
runtime_err "d" rm "$img" d                                            # not empty
runtime_err "$img" rm "$img" /
runtime_err "d" mkdir "$img" d                                         # exists
runtime_err "x/y" mkdir "$img" x/y                                     # no parent
runtime_err "no-such-src" put "$img" "$WORK/no-such-src"

# mkfs that fails on a new image leaves nothing behind.
runtime_err "tiny.img" mkfs -s 4K "$WORK/tiny.img"
[[ ! -e $WORK/tiny.img ]] || fail "failed mkfs left tiny.img behind"
runtime_err "larger" mkfs --force -s 64M "$img"                                # larger than the file
