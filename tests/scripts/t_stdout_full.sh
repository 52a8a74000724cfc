#!/usr/bin/env bash
# Review of issue 26 item 1 (every command that writes a host file): what a command prints on
# standard output is its output too. Redirected into a file on a full disk (/dev/full), every
# command that prints something on success exits 1 with one line saying that standard output
# could not be written ('log --print-config > cfg.json', 'info --json > v.json', 'ls',
# 'fsck --json', 'plan', every --help exited 0 with the file empty). Commands that check their
# own output (export, cat, get -) keep their message, and no command says it twice.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
[[ -c /dev/full ]] && echo x 2>/dev/null >/dev/full && skip "/dev/full accepts writes here"
[[ -c /dev/full ]] || skip "no /dev/full"
cd "$WORK"

sf_ok log --mkfs exfat --size 64M --source gen:can,rate=1000 --duration 0.2 v.img >/dev/null

# each case: a command line that exits 0 and prints on standard output
cases=(
    "--help" "--version" "help"
    "info v.img" "info --json v.img" "ls v.img" "ls -l -R v.img" "ls --json v.img"
    "fsck v.img" "fsck --json v.img" "cat v.img LOG00001.SFL" "get v.img LOG00001.SFL -"
    "export v.img LOG00001.SFL" "export -f mf4 v.img LOG00001.SFL"
    "plan --rate 1MB/s --capacity 1GB" "plan --json --rate 1MB/s --capacity 1GB"
    "log --print-config --source gen:can x.img"
    "mkfs -s 16M new.img"
)
for c in $(awk '/^COMMANDS/ { on = 1; next } on && /^  [a-z]+ / { print $1 } on && /^$/ && n++ { exit }' <("$SF" --help)); do
    cases+=("$c --help")
done
for c in "${cases[@]}"; do
    rm -f new.img
    read -ra args <<<"$c"
    sf_ok "${args[@]}" >/dev/null                       # the case itself works
    rm -f new.img
    rc=0
    timeout 60 "$SF" "${args[@]}" >/dev/full 2>err || rc=$?
    has_sanitizer_report err && { cat err >&2; fail "sanitizer report: streamfat $c"; }
    ((rc == 1)) || { cat err >&2; fail "streamfat $c >/dev/full exited $rc, expected 1"; }
    grep -q 'write failed' err || { cat err >&2; fail "streamfat $c >/dev/full: no 'write failed' line"; }
    (($(grep -c 'write failed' err) == 1)) || { cat err >&2; fail "streamfat $c >/dev/full: said it twice"; }
done
log "ok: ${#cases[@]} command lines fail on a full standard output"
