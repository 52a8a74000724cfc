#!/usr/bin/env bash
# Nothing usable is an error, said in one line (issue 15, item 9):
#   - `log --source file:F` replaying random bytes (seeded), or an empty file, exits 1 with
#     one line naming the file ("no CAN frame in it"); a real candump file still exits 0;
#   - `export --channel nosuch` and an `--id` matching nothing exit 3 with one line naming
#     the channels the log has; a filter that matches exits 0.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3

SEED=${SF_SEED:-1}
IMG=$WORK/v.img
sf_ok mkfs -q -t exfat -s 64M "$IMG" >/dev/null

log "file: with random bytes (seed $SEED) and an empty file"
python3 -c 'import random,sys; r=random.Random(int(sys.argv[1])); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(65536)))' "$SEED" >"$WORK/garbage.bin"
: >"$WORK/empty.log"
for f in garbage.bin empty.log; do
    rc=0
    sf log -q --source "file:$WORK/$f" "$IMG" 2>"$WORK/err" || rc=$?
    ((rc == 1)) || { cat "$WORK/err" >&2; fail "file:$f: exit $rc, expected 1"; }
    # The first ten unreadable lines are reported with their numbers (docs/LOG.md); the
    # verdict is one line, the last.
    [[ $(grep -c "no CAN frame in it" "$WORK/err") -eq 1 && $(wc -l <"$WORK/err") -le 11 ]] &&
        tail -n1 "$WORK/err" | grep -q "$f: no CAN frame in it" ||
        { cat "$WORK/err" >&2; fail "file:$f: not one last line saying there was no frame"; }
done
printf '(1700000000.000001) can0 123#11\n(1700000000.000002) can1 456#2233\n' >"$WORK/ok.log"
sf_ok log -q --source "file:$WORK/ok.log" --fast "$IMG"

log "export filters that select nothing"
sf_ok cat "$IMG" "$(sf_ok ls -R "$IMG" | grep -i '\.SFL$' | tail -n1)" >"$WORK/ok.SFL"
for args in "--channel nosuch" "--id 12345678" "--channel can0 --id 456"; do
    rc=0
    # shellcheck disable=SC2086
    sf export $args "$WORK/ok.SFL" >"$WORK/out" 2>"$WORK/err" || rc=$?
    ((rc == 3)) || { cat "$WORK/err" >&2; fail "export $args: exit $rc, expected 3"; }
    [[ ! -s $WORK/out ]] || fail "export $args: output"
    [[ $(wc -l <"$WORK/err") -eq 1 ]] && grep -q "no record matched.*channels in the log: can0 (0), can1 (1)" "$WORK/err" ||
        { cat "$WORK/err" >&2; fail "export $args: not one line naming the channels"; }
done
sf_ok export --channel can1 "$WORK/ok.SFL" >"$WORK/out"
grep -q ' can1 456#2233' "$WORK/out" || fail "export --channel can1: frame missing"
