#!/usr/bin/env bash
# Nothing usable is an error, said in one line (issue 15, item 9; issue 26, item 4):
#   - `log --source file:F` replaying random bytes (seeded), or an empty file, exits 1 with
#     one line naming the file ("no CAN frame in it"); a real candump file still exits 0;
#   - the same from stdin: random bytes, candump's output without -L (the first unreadable
#     line quoted), empty input (twice), empty input with --raw, and a udp: source nobody
#     sends to (rotating by time): exit 1, one last line, and no file left on the volume
#     (nor a --dir made for the run); files that were there before are untouched, and a
#     run with records keeps its file;
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
# The names on the volume (recursive): a run that logs nothing must leave them as they were.
names() { sf_ok ls -R "$IMG" | sort; }
nlogs() { sf_ok ls -R "$IMG" | grep -ci '\.SFL$' || true; }
sf_ok log -q --source gen:can --max-records 10 "$IMG"       # a log that must stay
names >"$WORK/names.before"
for f in garbage.bin empty.log; do
    rc=0
    sf log -q --source "file:$WORK/$f" "$IMG" 2>"$WORK/err" || rc=$?
    ((rc == 1)) || { cat "$WORK/err" >&2; fail "file:$f: exit $rc, expected 1"; }
    # The first ten unreadable lines are reported with their numbers (docs/LOG.md); the
    # verdict is one line, the last.
    [[ $(grep -c "no CAN frame in it" "$WORK/err") -eq 1 && $(wc -l <"$WORK/err") -le 11 ]] &&
        tail -n1 "$WORK/err" | matches "$f: no CAN frame in it" ||
        { cat "$WORK/err" >&2; fail "file:$f: not one last line saying there was no frame"; }
    names | cmp -s - "$WORK/names.before" || fail "file:$f: a file was left on the volume"
done

log "stdin and udp: with nothing usable exit 1 and leave no file"
# nothing_from WHAT REGEX STDIN LOG-ARGS...: exit 1, the last line matches REGEX, at most
# eleven lines (ten unreadable lines shown, then the verdict), the volume's names unchanged.
nothing_from() {
    local what=$1 re=$2 in=$3 rc=0
    shift 3
    sf log -q "$@" "$IMG" <"$in" 2>"$WORK/err" >/dev/null || rc=$?
    ((rc == 1)) || { cat "$WORK/err" >&2; fail "$what: exit $rc, expected 1"; }
    [[ $(wc -l <"$WORK/err") -le 11 ]] && tail -n1 "$WORK/err" | matches -E "$re" ||
        { cat "$WORK/err" >&2; fail "$what: the last line does not match: $re"; }
    names | cmp -s - "$WORK/names.before" ||
        { names >&2; fail "$what: a file or directory was left on the volume"; }
}
printf '  vcan0  123   [2]  11 22\n  vcan0  124   [1]  33\n' >"$WORK/nol.txt"
: >"$WORK/none"
nothing_from "stdin with random bytes" \
    '^streamfat log: stdin: no CAN frame in it \([0-9]+ unreadable lines, the first: line 1 ".*"\): not candump -L lines' \
    "$WORK/garbage.bin" --source stdin
nothing_from "stdin: candump without -L" \
    '^streamfat log: stdin: no CAN frame in it \(2 unreadable lines, the first: line 1 "  vcan0  123   \[2\]  11 22"\): not candump -L lines \(candump writes them with -L\)$' \
    "$WORK/nol.txt" --source stdin
for run in 1 2; do
    nothing_from "empty stdin, run $run" '^streamfat log: stdin: no CAN frame in it: the input was empty$' \
        "$WORK/none" --source stdin
done
nothing_from "empty stdin, --raw" '^streamfat log: stdin: nothing to log: the source gave no usable byte$' \
    "$WORK/none" --source stdin --raw
nothing_from "empty stdin into a new --dir" '^streamfat log: stdin: no CAN frame in it: the input was empty$' \
    "$WORK/none" --source stdin --dir runs/today
# the summary counts the files left (review: "files": 6 after removing all six)
rc=0
sf log --json --source udp:0 --duration 0.5 --split-time 0.1 "$IMG" </dev/null >"$WORK/json" || rc=$?
((rc == 1)) || fail "udp --json: exit $rc, expected 1"
grep -q '"files": 0,' "$WORK/json" || { cat "$WORK/json" >&2; fail "udp --json: 'files' counts the removed files"; }
nothing_from "udp: nobody sends (rotating every 0.1 s)" \
    '^streamfat log: udp:0: nothing to log: the source gave no usable record$' \
    "$WORK/none" --source udp:0 --duration 0.5 --split-time 0.1
n=$(nlogs)
printf '(1700000000.000001) can0 123#11\n' | sf_ok log -q --source stdin "$IMG"
(($(nlogs) == n + 1)) || fail "a run with one record did not keep its file"
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
