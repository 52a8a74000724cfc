#!/bin/bash
# Host output files are replaced only by a complete new one (issue 15, item 1):
# - `export -o FILE` with an input that cannot be opened leaves FILE as it was (before: FILE
#   emptied first) and no temporary file beside it; a good export replaces FILE (through a
#   symbolic link: the file it points to), keeps its permissions, and leaves no temporary
#   file; -o /dev/null still works;
# - `demo -o FILE` refuses a file that is not a previous demo image (before: deleted without
#   asking), replaces it with -f, and replaces a previous demo image (64 MiB exFAT "DEMO").
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf

img=$WORK/u.img
sf_ok mkfs -q -t exfat -s 32M "$img"
sf_ok log --source gen:can,rate=1000 --duration 1 "$img" >/dev/null
out=$WORK/out
mkdir "$out"
echo "precious" >"$out/run.log"
chmod 640 "$out/run.log"
sf_err 1 export -o "$out/run.log" "$img" nope.SFL
[[ $(cat "$out/run.log") == precious ]] || fail "export -o with a missing input changed FILE"
sf_err 1 export -o "$out/run.log" "$WORK/missing.SFL"
[[ $(cat "$out/run.log") == precious ]] || fail "export -o with a missing log file changed FILE"
[[ $(ls -A "$out") == run.log ]] || fail "temporary files left: $(ls -A "$out")"

sf_ok export -o "$out/run.log" "$img" LOG00001.SFL
sf_ok export "$img" LOG00001.SFL >"$WORK/want.log"
cmp -s "$out/run.log" "$WORK/want.log" || fail "export -o did not write the export"
[[ $(stat -c %a "$out/run.log") == 640 ]] || fail "export -o lost FILE's permissions"
ln -s run.log "$out/link.log"
echo "precious" >"$out/run.log"
sf_err 1 export -o "$out/link.log" "$img" nope.SFL
[[ $(cat "$out/run.log") == precious && -L $out/link.log ]] || fail "export -o via a link changed it"
sf_ok export -o "$out/link.log" "$img" LOG00001.SFL
[[ -L $out/link.log ]] || fail "export -o replaced the symbolic link itself"
cmp -s "$out/run.log" "$WORK/want.log" || fail "export -o via a link did not write the file"
[[ $(ls -A "$out" | sort | tr '\n' ' ') == "link.log run.log " ]] || fail "temporary files left: $(ls -A "$out")"
sf_ok export -o /dev/null "$img" LOG00001.SFL
[[ -c /dev/null ]] || fail "export -o /dev/null replaced the device node"
log "export -o: a failed export leaves FILE as it was; a good one replaces it"

cd "$WORK"
echo "not an image" >notes.txt
sf_err 1 demo -o notes.txt
[[ $(cat notes.txt) == "not an image" ]] || fail "demo -o deleted a file that is not a demo image"
grep -q 'not a previous demo image' "$SF_LAST_ERR" || fail "demo -o: the refusal does not say why"
sf_ok mkfs -q -t exfat -s 64M -L DEMO old_demo.img
# (the demo's own checks are t_demo's business: only the replacing is looked at here)
sf demo -o old_demo.img >"$WORK/demo.out" || true
grep -q '^replaced the old old_demo.img$' "$WORK/demo.out" || fail "demo -o refused a previous demo image"
grep -q '^created old_demo.img' "$WORK/demo.out" || fail "demo -o did not make the image"
sf demo -F -o notes.txt >"$WORK/demo.out" || true
grep -q '^created notes.txt' "$WORK/demo.out" || fail "demo -F -o did not replace the file"
log "demo -o: refuses other files, replaces a previous demo image, and anything with -F"
