#!/usr/bin/env bash
# streamfat log --name (issue 15, item 11): the help shows the pattern as it must be typed
# (% not %%), the help's own example works when copied (files 1, 2, 3 with distinct names),
# and a pattern that cannot give the next file a new name, or gives a name FAT/exFAT cannot
# hold, is refused at start: exit 2, one line (and the 'Try' line), no file written.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
cd "$WORK"

sf_ok log --help >help.txt
if grep -n '%%' help.txt >&2; then
    fail "log --help prints %% (copied into a shell it names a file literally so)"
fi
pat=$(sed -n "s/.*e\.g\. '\([^']*\)'.*/\1/p" help.txt)
[[ $pat == *%n* ]] || fail "log --help: no --name example with %n found (got '$pat')"
log "the help's example: $pat"

sf_ok mkfs -t exfat -s 64M card.img >/dev/null
sf_ok log --source gen:can,rate=2000 --duration 1.5 --chunk 4K --split-size 16K --name "$pat" -q card.img
sf_ok ls card.img >ls.txt
n=$(grep -c '\.SFL$' ls.txt || true)
((n >= 3)) || { cat ls.txt >&2; fail "the help's --name example made $n files, expected 3 or more"; }
[[ $(sort -u ls.txt | wc -l) == $(wc -l <ls.txt) ]] || fail "duplicate names"
! grep -q '%' ls.txt || fail "a file name holds a %: $(cat ls.txt)"

# refused at start, before anything is written
refused() {
    local p=$1 want=$2 rc=0
    timeout 60 "$SF" log --source gen:can --duration 1 --name "$p" card.img >out 2>err || rc=$?
    ((rc == 2)) || { cat err >&2; fail "--name '$p': exit $rc, expected 2"; }
    [[ $(wc -l <err) == 2 ]] || { cat err >&2; fail "--name '$p': not one line and 'Try'"; }
    grep -q -- "$want" err || { cat err >&2; fail "--name '$p': message lacks '$want'"; }
    has_sanitizer_report err && fail "sanitizer report"
    return 0
}
before=$(sha256sum <card.img)
refused 'CAN_%Y%m%d.SFL' 'same name'            # no %n: the second file would collide
refused 'CAN_%%Y%%m_%%n.SFL' 'same name'        # the old help, copied: %%n is a literal n
refused 'CAN_%H:%M_%n.SFL' "cannot hold ':'"    # Windows-forbidden character
refused 'run/%n.SFL' "cannot hold '/'"
refused 'CAN_%n.' 'end in a dot'
refused 'CAN_%n ' 'end in a dot or a space'
[[ $(sha256sum <card.img) == "$before" ]] || fail "a refused --name changed the image"
log "the help's example makes $n files; 6 bad patterns refused at start"
