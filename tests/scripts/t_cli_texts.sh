#!/usr/bin/env bash
# Issue 26 item 22: the texts a user reads say what the program does, in one form.
# - the main help and export's NAME line name every export format (MF4 too), not only
#   "candump -L lines"; log's file: source names MF4 and carries no note about test
#   machines (AF_CAN, canpair:);
# - README's exit statuses name every command whose --help documents exit status 3, carry
#   no test count that goes stale, and no document points to an ARCHITECTURE.md that is not
#   in the repository;
# - mkfs and info show a volume without a label alike;
# - every command that cannot open a host file or an image says "PATH: cannot open: no
#   such file or directory" (export of a host file said "No such file or directory");
#   export of a directory says so (was "read failed: I/O error"); export --all into a
#   regular file says it is not a directory (was "no logs");
# - a unit a message offers is taken: latency:500us ("from 10us", was "unknown unit").
# (The demo's burst numbers: t_demo.)
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
cd "$WORK"

log "help texts: every export format, no test-machine notes"
sf_ok --help >main.help
grep -E '^  export ' main.help | matches 'MF4' || { grep export main.help >&2; fail "main help: export without MF4"; }
grep -qE '^  export .*candump -L lines\)' main.help && fail "main help: export decodes only 'candump -L lines'"
sf_ok export --help >export.help
sed -n '/^NAME/,/^$/p' export.help | matches 'MF4' || fail "export NAME line omits MF4"
sf_ok log --help >log.help
sed -n '/^  file:PATH/,/^  can:/p' log.help | matches 'MF4' || fail "log --help: file: omits MF4"
grep -qiE 'AF_CAN|canpair|test machines' log.help && fail "log --help talks about test machines"

log "README: exit status 3 of every command that has it; no test count; no ARCHITECTURE.md"
para=$(awk '/Exit status: 0 success/ { on = 1 } on { print } on && /^$/ { exit }' "$SF_SRC/README.md")
[[ -n $para ]] || fail "README has no exit status paragraph"
for c in $(awk '/^COMMANDS/ { on = 1; next } on && /^  [a-z]+ / { print $1 } on && /^$/ && n++ { exit }' main.help); do
    sf_ok "$c" --help >"$c.help"
    if sed -n '/^EXIT STATUS/,$p' "$c.help" | matches -E '(^|[ ,;])3 '; then
        grep -q "\`$c\` exits 3\|\`$c\` when\|\`$c\`.*3" <<<"$para" ||
            { echo "$para" >&2; fail "README's exit statuses omit $c's 3"; }
    fi
done
grep -nE '\(?[0-9]{2,} tests[,)]' "$SF_SRC/README.md" >&2 && fail "README carries a test count"
grep -ln 'ARCHITECTURE' "$SF_SRC/README.md" "$SF_SRC"/docs/*.md >&2 &&
    fail "a document points to ARCHITECTURE.md, which is not in the repository"

log "mkfs and info: no label shown alike"
sf_ok mkfs -s 8M n.img >mkfs.out
sf_ok info n.img >info.out
ml=$(awk -F': *' '/^ *label:/ { print $2 }' mkfs.out)
il=$(awk -F': *' '/^ *label:/ { print $2 }' info.out)
[[ -n $ml && $ml == "$il" ]] || fail "mkfs shows label '$ml', info '$il'"

log "one form for a file that cannot be opened, in every command"
sf_ok mkfs -q -s 8M img.img
mkdir adir
echo not-a-dir >afile
# CMD ARGS... -- PATH: exit 1 (fsck: 2, its "cannot check"), "streamfat CMD: PATH: cannot
# open: no such file or directory"
open_err() {
    local args=() rc=0 path want=1
    while [[ $1 != -- ]]; do args+=("$1"); shift; done
    path=$2
    [[ ${args[0]} == fsck ]] && want=2
    timeout 60 "$SF" "${args[@]}" >out 2>err </dev/null || rc=$?
    has_sanitizer_report err && fail "sanitizer report from ${args[*]}"
    ((rc == want)) || { cat err >&2; fail "streamfat ${args[*]}: exit $rc, expected $want"; }
    grep -qxF "streamfat ${args[0]}: $path: cannot open: no such file or directory" err ||
        { cat err >&2; fail "streamfat ${args[*]}: not the one 'cannot open' form"; }
}
open_err export nofile -- nofile
open_err export -o x.log nofile -- nofile
open_err put img.img nofile x -- nofile
open_err log --source file:nofile img.img -- nofile
if sf log --source gen:can --print-config x.img >/dev/null; then   # built with cJSON
    open_err log --config nofile.json img.img -- nofile.json
fi
for c in info ls fsck; do open_err "$c" no.img -- no.img; done
open_err cat no.img a -- no.img
open_err get no.img a b -- no.img
open_err export no.img LOG00001.SFL -- no.img
open_err rm no.img a -- no.img
open_err mkdir no.img a -- no.img
open_err log --source gen:can --duration 1 no.img -- no.img
sf_err 1 export adir
grep -qxF "streamfat export: adir: cannot open: is a directory" "$SF_LAST_ERR" ||
    { cat "$SF_LAST_ERR" >&2; fail "export of a directory: not 'is a directory'"; }
# a directory where a host file is read: the same form (review: --config said "JSON syntax
# error on line 1", exit 2; put said "adir: is a directory")
dir_err() {
    sf_err 1 "$@"
    grep -qxF "streamfat $1: adir: cannot open: is a directory" "$SF_LAST_ERR" ||
        { cat "$SF_LAST_ERR" >&2; fail "streamfat $*: not 'adir: cannot open: is a directory'"; }
}
dir_err put img.img adir x
if sf log --source gen:can --print-config x.img >/dev/null; then   # built with cJSON
    dir_err log --config adir --source gen:can img.img
fi
sf_err 1 export -f csv --all img.img afile
grep -q "afile: not a directory" "$SF_LAST_ERR" ||
    { cat "$SF_LAST_ERR" >&2; fail "export --all into a regular file: not 'not a directory'"; }
[[ $(cat afile) == not-a-dir ]] || fail "export --all changed the regular file"

log "the units a message offers are taken: latency:500us, 10us"
sf_err 2 log --source latency:5us img.img
grep -q "from 10us" "$SF_LAST_ERR" || { cat "$SF_LAST_ERR" >&2; fail "latency: the bounds message changed"; }
for p in 500us 10us 1ms; do
    sf_ok log -q --source "latency:$p" --duration 200ms img.img
done
