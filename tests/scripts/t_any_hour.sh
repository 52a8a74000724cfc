#!/usr/bin/env bash
# Issue 26 item 14: make check passes at any hour. The tests that read a date or a time
# printed by another tool (mdir's time column) or by streamfat (ls -l, ls --json), or that
# compare one with the clock, run here under a fake clock (Debian's faketime, an LD_PRELOAD
# library) at 00:30, 09:59 and 23:59:59 on 31 December (the last one runs into the new
# year). t_fat_many_names read mdir's time with [0-9]{2}:[0-9]{2} and failed from 00:00 to
# 09:59 ("   2:50"). No test does calendar arithmetic of its own (t_cli_roundtrip subtracts
# two datetimes in Python), so no 29 February run; unit_time covers the library's leap days.
#
# This file is the one list of those tests (ANY_HOUR) and of the files that name a clock
# or a time but were read and found not to depend on the hour (NOT_HOURLY, with the
# reason). The first step scans tests/, python/tests, fuzz/ and examples/ for time parsing
# and clock use (CLOCK_PATTERN) and fails when a file that matches is on neither list: a
# new test that parses times has to be run here or say why not.
#
# Cost: the wrapped tests once per instant, 3 x about 45 s under ASan on an idle 2-core
# machine (docs/TESTING.md).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool faketime

ANY_HOUR=(
    t_fat_many_names    # mdir's time column ("   2:50" before 10:00) precedes the long name
    t_cli_roundtrip     # ls -l's local time, ls --json's UTC mtime against the clock
    t_readme            # ls -l's year against the clock's (either side of New Year)
)
declare -A NOT_HOURLY=(
    [t_any_hour.sh]="this list"
    [t_fat_names.sh]="mdir's name and size columns only; the time column is not read"
    [t_fat_dirs.sh]="rmdir, not mdir"
    [t_baremetal.sh]="ls -l's size and name fields; the time is one field either way"
    [t_stream_put.sh]="ls -l's size and name fields"
    [t_fsck_recover.sh]="ls -l's size field"
    [t_exfat_corrupt.sh]="ls -l must not crash; its output is not read"
    [t_cli_usage.sh]="the image file's own mtime before and after, set by touch -d"
    [t_log_rotate.sh]="time.time() becomes frame times; only their order and count are read"
    [t_log_sources.sh]="time.time() becomes frame times, compared with themselves"
    [t_exfat_scale.sh]="date +%s.%N measures durations"
    [t_bigendian.sh]="date +%s measures durations"
    [fsck_random.py]="time.time() measures durations"
    [import_frames.py]="datetime.now is pinned (ASCWriter's date line)"
    [mf4_check.py]="fixed start times (fromtimestamp(1700000000))"
    [helper_vol.h]="CLOCK_REALTIME stamps files; nothing compares it"
    [test_rec.c]="fixed SF_CLOCK_REALTIME headers"
    [test_check.c]="fixed SF_CLOCK_REALTIME headers"
    [logcut.c]="fixed SF_CLOCK_REALTIME headers"
    [mklog.c]="fixed SF_CLOCK_REALTIME headers"
    [t_recover_before_checkpoint.sh]="ls -l's size field"
    [j1939_ref.py]="time.time() drives can-j1939's own timers; frames carry fixed times"
    [test_tiny_log.c]="SF_CLOCK_REALTIME names the clock kind of a fixed-time header"
    [t_stdout_full.sh]="ls -l and ls --json write into /dev/full; nothing is read"
    [proto_decode_ref.py]="time.time() drives can-j1939's own timers; frames carry fixed times"
    [test_messages.py]="time.time() drives can-j1939's own timers; frames carry fixed times"
)
# what parsing a printed time or reading the clock looks like in these files
CLOCK_PATTERN='(^|[^r])mdir|\bls (-[a-zA-Z]*l|--json)|mtime|strptime|fromisoformat|date \+|date -u'
CLOCK_PATTERN+='|datetime\.(datetime\.)?(now|utcnow|today)|time\.time\(\)|\[0-9\]\{2\}:|\\d\{2\}:'
CLOCK_PATTERN+='|localtime|gmtime|CLOCK_REALTIME|time\(NULL\)|gettimeofday'

log "every test that parses a time or reads the clock is run here or says why not"
unlisted=()
while IFS= read -r f; do
    b=$(basename "$f")
    [[ " ${ANY_HOUR[*]} " == *" ${b%.sh} "* ]] && continue
    [[ -n ${NOT_HOURLY[$b]:-} ]] && continue
    unlisted+=("$f")
done < <(cd "$SF_SRC" && grep -lE "$CLOCK_PATTERN" tests/scripts/*.sh tests/scripts/*.py \
    tests/unit/*.c tests/helpers/*.c tests/helpers/*.h python/tests/*.py fuzz/*.sh fuzz/*.c \
    examples/*/*.sh 2>/dev/null)
((${#unlisted[@]} == 0)) ||
    fail "parses a time or reads the clock, not in t_any_hour's lists: ${unlisted[*]}"
for t in "${ANY_HOUR[@]}"; do
    [[ -f $SF_SRC/tests/scripts/$t.sh ]] || fail "ANY_HOUR names $t, which does not exist"
done

# faketime: the start instant, then the clock runs on (a frozen clock would stop timeouts);
# the monotonic clock stays real. The ASan runtime refuses a preload that comes before it
# unless told not to check.
export TZ=UTC FAKETIME_DONT_FAKE_MONOTONIC=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
at() { local when=$1; shift; timeout 1200 faketime -f "@$when" "$@"; }

log "faketime works here, under the sanitizers too"
[[ $(at '2026-12-31 00:30:00' date -u +%H:%M </dev/null) == 00:30 ]] || fail "faketime has no effect"
at '2026-12-31 00:30:00' "$SF" --version </dev/null >/dev/null 2>"$WORK/v.err" ||
    { cat "$WORK/v.err" >&2; fail "streamfat does not run under faketime"; }

failed=() skipped=()
for when in '2026-12-31 00:30:00' '2026-12-31 09:59:00' '2026-12-31 23:59:59'; do
    for t in "${ANY_HOUR[@]}"; do
        log "$t at $when"
        rc=0
        at "$when" bash "$SF_SRC/tests/scripts/$t.sh" </dev/null >"$WORK/$t.out" 2>&1 || rc=$?
        if ((rc == 77)); then
            skipped+=("$t")
        elif ((rc != 0)); then
            tail -30 "$WORK/$t.out" >&2
            failed+=("$t@$when")
        fi
    done
done
((${#failed[@]} == 0)) || fail "failed under a fake clock: ${failed[*]}"
((${#skipped[@]} == 0)) || skip "skipped under a fake clock: ${skipped[*]}"
