#!/usr/bin/env bash
# Every command that writes a host file goes through the one output path (issue 26 item 1,
# cli/common/outfile.c, docs/EXPORT.md "Output files"): an existing output is replaced only
# by a complete result the user wants, and an output that is the input is refused.
#
# The table below ENUMERATES the writers (command x case); each cell runs the command with a
# previous output file in place and checks that file's sha256 afterwards (unchanged, or
# replaced by what the command must write) and that no temporary ".NAME.XXXXXX" is left
# (after SIGKILL one is left, by design: it is checked that it is, and that a later run with
# it still there succeeds and leaves it alone). A source scan fails the test when a call
# that can open a host file for writing appears in cli/, host/ or python/src/ that the
# WRITERS list at the end does not account for: a new writer must join the table.
#
# Cases: notlog (the input is no log), nomatch (the filters select nothing), full (the
# output's directory is a full tmpfs; demo: a file size limit, as demo opens its image with
# O_DIRECT, which tmpfs refuses), kill (SIGKILL while the temporary file is being written),
# self (the output is the input: the same file, or the image read from), ok (a successful
# run replaces the file). The lake's manifest and parts: python/tests/test_lake_output.py.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool sha256sum mount

# command    notlog nomatch full kill self ok   (- : does not apply, reason in NA below)
TABLE="
export_file  y      y       y    y    y    y
export_stdin -      -       -    -    y    -
export_vol   y      y       y    y    y    y
export_all   y      y       y    y    y    y
get          -      -       y    y    y    y
demo         -      -       y    y    -    y
bench_plot   -      -       y    -    y    y
bench_csv    -      -       y    -    y    y
report       y      -       y    -    y    y
"
declare -A NA=(
    [export_stdin]="the same path as export_file but for the input's identity (fstat of standard input): self only"
    [get]="copies any file: no notion of a log, no filters"
    [demo]="no input (it makes its own log; nothing to be 'the input')"
    [bench_plot]="no input log, no filters; the plot is written in one burst after the run (a kill during the run never opens it; a kill during the write is export's kill case on the same out_open)"
    [bench_csv]="as bench_plot"
    [report]="no filters (nothing to match); the page is written in one burst after the scan, as bench's plot (its kill case is export's on the same out_open)"
)
CASES=(notlog nomatch full kill self ok)

sha() { sha256sum "$1" | cut -d' ' -f1; }
# Temporary files beside NAME in DIR.
temps() { find "$1" -maxdepth 1 -name ".$2.*" -printf '%f\n' | sort; }

# ---- inputs -------------------------------------------------------------------------------
IMG=$WORK/c.img
sf_ok mkfs -q -t exfat -s 32M "$IMG"
sf_ok log --source gen:can,rate=1000 --duration 1 "$IMG" >/dev/null
head -c 100000 /dev/urandom >"$WORK/rnd.bin"
sf_ok get "$IMG" LOG00001.SFL "$WORK/log.SFL"
RIMG=$WORK/r.img                              # an image whose only "log" is none
sf_ok mkfs -q -t exfat -s 32M "$RIMG"
sf_ok put "$RIMG" "$WORK/rnd.bin" RND.SFL
BIG=$WORK/big.img                             # big enough for a kill to land mid-write
sf_ok mkfs -q -t exfat -s 256M "$BIG"
sf_ok log --source gen:can,rate=1000000 --duration 2 "$BIG" >/dev/null
sf_ok get "$BIG" LOG00001.SFL "$WORK/big.SFL"
SIM='sim:48M,fast=150MB/s'

# args CMD CASE OUT: ARGS (and STDIN) of the command of a row writing OUT (export_all:
# OUT's directory is DIR, OUT is DIR/LOG00001.log or DIR/RND.log).
args() {
    local cmd=$1 c=$2 out=$3 in=$WORK/log.SFL img=$IMG path=LOG00001.SFL filt=()
    case $c in
    notlog) in=$WORK/rnd.bin img=$RIMG path=RND.SFL ;;
    nomatch) filt=(--channel can7) ;;
    kill) in=$WORK/big.SFL img=$BIG ;;
    esac
    STDIN=/dev/null
    case $cmd in
    export_file) ARGS=(export "${filt[@]}" -o "$out" "$in") ;;
    export_stdin) ARGS=(export "${filt[@]}" -o "$out" -) STDIN=$in ;;
    export_vol) ARGS=(export "${filt[@]}" -o "$out" "$img" "$path") ;;
    export_all) ARGS=(export "${filt[@]}" --all "$img" "$(dirname "$out")") ;;
    get) ARGS=(get "$img" "$path" "$out") ;;
    demo) ARGS=(demo -F -o "$out") ;;
    bench_plot) ARGS=(bench --bs 256K --qd 8 --plot "$out" "$SIM") ;;
    bench_csv) ARGS=(bench --bs 256K --qd 8 --csv "$out" "$SIM") ;;
    report) ARGS=(report -o "$out" "$img") ;;
    esac
}
run() {
    args "$@"
    sf "${ARGS[@]}" <"$STDIN" >/dev/null
}

# The output file name of a row in DIR (export_all names it after the log).
outname() {
    case $1 in
    export_all) [[ $2 == notlog ]] && echo RND.log || echo LOG00001.log ;;
    demo) echo demo.img ;;
    bench_plot) echo plot.svg ;;
    *) echo out.txt ;;
    esac
}

# What a row's successful run must have written to OUT.
check_written() {
    local cmd=$1 out=$2
    case $cmd in
    export_*) sf_ok export "$IMG" LOG00001.SFL >"$WORK/want"; cmp -s "$out" "$WORK/want" ;;
    get) cmp -s "$out" "$WORK/log.SFL" ;;
    demo) sf_ok info "$out" >"$WORK/info"; grep -q DEMO "$WORK/info" ;;
    bench_plot) grep -q '<svg' "$out" ;;
    bench_csv) head -1 "$out" | matches '^window,' ;;
    report) head -1 "$out" | matches '^<!DOCTYPE html>' ;;
    esac
}

fresh_dir() { rm -rf "$WORK/o"; mkdir "$WORK/o"; echo "$WORK/o"; }

# ---- the cases ----------------------------------------------------------------------------
case_failing() {                # notlog, nomatch: refused, the previous output unchanged
    local cmd=$1 c=$2 want d out rc=0 before
    [[ $c == notlog ]] && want=1 || want=3
    d=$(fresh_dir)
    out=$d/$(outname "$cmd" "$c")
    echo "precious $cmd $c" >"$out"
    before=$(sha "$out")
    run "$cmd" "$c" "$out" || rc=$?
    ((rc == want)) || fail "$cmd $c: exit $rc, expected $want"
    [[ $(sha "$out") == "$before" ]] || fail "$cmd $c: the previous output was changed"
    [[ -z $(temps "$d" "$(basename "$out")") ]] || fail "$cmd $c: temporary file left"
}

FULL=$WORK/full
mount_full() {
    mkdir -p "$FULL"
    mount -t tmpfs -o size=2m,mode=0755 tmpfs "$FULL" 2>/dev/null ||
        skip "cannot mount a tmpfs (not root, or no mount namespace rights)"
    on_exit "umount '$FULL'"
}
case_full() {
    local cmd=$1 out rc=0 before
    out=$FULL/$(outname "$cmd" full)
    rm -rf "${FULL:?}"/* "$FULL"/.[!.]* 2>/dev/null || true
    echo "precious $cmd full" >"$out"
    before=$(sha "$out")
    if [[ $cmd == demo ]]; then
        # O_DIRECT does not open on tmpfs: the limit is a file size limit in $WORK instead
        local d
        d=$(fresh_dir)
        out=$d/demo.img
        echo "precious demo full" >"$out"
        before=$(sha "$out")
        (trap '' XFSZ; ulimit -f 1024; run demo full "$out") && rc=0 || rc=$?
        [[ -z $(temps "$d" demo.img) ]] || fail "demo full: temporary file left"
    else
        head -c 4M /dev/zero >"$FULL/fill" 2>/dev/null || true     # fills it
        run "$cmd" full "$out" && rc=0 || rc=$?
        [[ -z $(temps "$FULL" "$(basename "$out")") ]] || fail "$cmd full: temporary file left"
    fi
    ((rc != 0)) || fail "$cmd full: exit 0 on a full directory"
    [[ $(sha "$out") == "$before" ]] || fail "$cmd full: the previous output was changed"
}

case_kill() {
    local cmd=$1 d out name pid before left i
    d=$(fresh_dir)
    name=$(outname "$cmd" kill)
    out=$d/$name
    echo "precious $cmd kill" >"$out"
    before=$(sha "$out")
    args "$cmd" kill "$out"
    "$SF" "${ARGS[@]}" <"$STDIN" >/dev/null 2>&1 &
    pid=$!
    # until the temporary file has bytes in it (demo: its sparse image has its size)
    for ((i = 0; i < 20000; i++)); do
        left=$(find "$d" -maxdepth 1 -name ".$name.*" -size +0 -print -quit)
        [[ -n $left ]] && break
        kill -0 "$pid" 2>/dev/null || fail "$cmd kill: it finished before the kill"
        sleep 0.005
    done
    [[ -n $left ]] || fail "$cmd kill: no temporary file appeared"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [[ $(sha "$out") == "$before" ]] || fail "$cmd kill: the previous output was changed"
    [[ -n $(temps "$d" "$name") ]] || fail "$cmd kill: expected the stale temporary file"
    # the stale temporary file does not stop a later run, which leaves it alone
    left=$(temps "$d" "$name")
    run "$cmd" ok "$out" >/dev/null || fail "$cmd: a run after the kill failed"
    check_written "$cmd" "$out" || fail "$cmd: the run after the kill wrote something else"
    [[ $(temps "$d" "$name") == "$left" ]] || fail "$cmd: the run after the kill touched $left"
}

case_self() {
    local cmd=$1 d rc=0 victim before
    d=$(fresh_dir)
    case $cmd in
    export_file | export_stdin)
        victim=$d/self.SFL
        cp "$WORK/log.SFL" "$victim"
        before=$(sha "$victim")
        if [[ $cmd == export_file ]]; then
            sf export -f candump -o "$victim" "$victim" || rc=$?
        else
            sf export -f candump -o "$victim" - <"$victim" || rc=$?
        fi ;;
    export_vol | get | bench_plot | bench_csv | report)
        victim=$d/self.img
        cp "$IMG" "$victim"
        before=$(sha "$victim")
        case $cmd in
        export_vol) sf export -o "$victim" "$victim" LOG00001.SFL || rc=$? ;;
        get) sf get "$victim" LOG00001.SFL "$victim" || rc=$? ;;
        bench_plot) sf bench --size 8M --plot "$victim" "$victim" >/dev/null || rc=$? ;;
        bench_csv) sf bench --size 8M --csv "$victim" "$victim" >/dev/null || rc=$? ;;
        report) sf report -o "$victim" "$victim" || rc=$? ;;
        esac ;;
    export_all)
        victim=$d/self.img
        cp "$IMG" "$victim"
        before=$(sha "$victim")
        mkdir "$d/all"
        ln -s ../self.img "$d/all/LOG00001.log"         # DIR's output names the image
        sf export --all "$victim" "$d/all" >/dev/null || rc=$? ;;
    esac
    ((rc == 1)) || fail "$cmd self: exit $rc, expected 1"
    [[ $(sha "$victim") == "$before" ]] || fail "$cmd self: the input was changed"
    grep -q 'is the \(file this command reads\|target benchmarked\)' "$SF_LAST_ERR" ||
        fail "$cmd self: the refusal does not say why"
    [[ -z $(temps "$d" self.img) && -z $(temps "$d" self.SFL) ]] ||
        fail "$cmd self: temporary file left"
}

case_ok() {
    local cmd=$1 d out before
    d=$(fresh_dir)
    out=$d/$(outname "$cmd" ok)
    echo "previous $cmd" >"$out"
    chmod 640 "$out"
    before=$(sha "$out")
    run "$cmd" ok "$out" >/dev/null || fail "$cmd ok: failed"
    [[ $(sha "$out") != "$before" ]] || fail "$cmd ok: the output was not replaced"
    check_written "$cmd" "$out" || fail "$cmd ok: it wrote something else"
    [[ $(stat -c %a "$out") == 640 ]] || fail "$cmd ok: the file's permissions were lost"
    [[ -z $(temps "$d" "$(basename "$out")") ]] || fail "$cmd ok: temporary file left"
}

# ---- every format of export: not a log and no match --------------------------------------
log "export -o in every format: not a log, no match"
for fmt in candump asc blf csv csv-wide raw mf4; do
    for c in notlog nomatch; do
        d=$(fresh_dir)
        echo "precious $fmt" >"$d/k"
        before=$(sha "$d/k")
        [[ $c == notlog ]] && want=1 ||
            want=3 in_args=(--channel can7 "$IMG" LOG00001.SFL)
        [[ $c == notlog ]] && in_args=("$RIMG" RND.SFL)
        rc=0
        sf export -f "$fmt" -o "$d/k" "${in_args[@]}" || rc=$?
        ((rc == want)) || fail "export -f $fmt $c: exit $rc, expected $want"
        [[ $(sha "$d/k") == "$before" ]] || fail "export -f $fmt $c: the previous output changed"
        [[ -z $(temps "$d" k) ]] || fail "export -f $fmt $c: temporary file left"
    done
done
# a damaged log that still reads is exported (exit 1): the output holds what it could read
d=$(fresh_dir)
cp "$WORK/log.SFL" "$d/dmg.SFL"
printf '\xff\xff\xff\xff' | dd of="$d/dmg.SFL" bs=1 seek=20000 conv=notrunc status=none
echo precious >"$d/k"
rc=0
sf export -o "$d/k" "$d/dmg.SFL" || rc=$?
((rc == 1)) || fail "export of a damaged log: exit $rc, expected 1"
[[ $(wc -l <"$d/k") -gt 100 ]] || fail "export of a damaged log did not write what it read"

# ---- the table ---------------------------------------------------------------------------
mount_full
while read -r cmd cells; do
    [[ -n $cmd ]] || continue
    read -ra flags <<<"$cells"
    for i in "${!CASES[@]}"; do
        c=${CASES[i]}
        if [[ ${flags[i]} != y ]]; then
            log "$cmd $c: does not apply (${NA[$cmd]})"
            continue
        fi
        log "$cmd $c"
        case $c in
        notlog | nomatch) case_failing "$cmd" "$c" ;;
        full) case_full "$cmd" ;;
        kill) case_kill "$cmd" ;;
        self) case_self "$cmd" ;;
        ok) case_ok "$cmd" ;;
        esac
    done
done <<<"$TABLE"

# ---- no writer outside the table ---------------------------------------------------------
# Each call that can open a host file for writing, as "file<TAB>text", must match one of
# these (file, text) pairs; the comment says where the table covers it.
WRITERS=(
    "cli/common/outfile.c	fopen(path, \"w\")"      # out_open: non-regular outputs in place
    "cli/common/outfile.c	mkstemp(o->tmp)"         # out_open: the temporary file
    "cli/common/outfile.c	fdopen(fd, \"w\")"       # out_open
    "cli/commands/cmd_export.c	mkstemp(p)"          # MF4 spool in \$TMPDIR, unlinked (t_export_stdout_seek)
    "cli/commands/cmd_export.c	fdopen(fd, \"w+\")"  # the spool
    "cli/sources/file.c	fopen(s->path, \"r\")"       # reads
    "cli/commands/log_config.c	fopen(path, \"rb\")" # reads
    "cli/commands/cmd_plan.c	fopen(path, \"rb\")"  # reads plan --from-log's log
    "cli/common/keyfile.c	fopen(path, \"r\")"      # reads a key file (keygen writes through out_open)
    "cli/report/report_signals.c	fdopen(p[0], \"r\")" # reads report --dbc's pipe from Python
    "cli/tools/sim_target.c	O_TMPFILE"              # bench's simulated device: anonymous
    "host/bdev/file.c	O_CREAT | O_EXCL"           # mkfs/log --mkfs create a new image only
    "python/src/streamfat/lake.py	tempfile.mkstemp(" # the manifest (test_lake_output.py)
    "python/src/streamfat/lake.py	os.fdopen(fd, \"w\")"
    "python/src/streamfat/lake.py	os.replace(tmp"  # manifest and parts, after fsync
    "python/src/streamfat/lake.py	ParquetWriter(tmp" # hidden parts, renamed by write_part
)
cd "$SF_SRC"
{
    grep -rnE '\b(fopen|freopen|fdopen|creat|mkstemp|mkostemp|tmpfile)\(|\bopen\([^;]*O_(CREAT|TRUNC|WRONLY|RDWR|APPEND|TMPFILE)' \
        cli host --include=*.c --include=*.h || true
    grep -rnE "open\([^)]*['\"](w|a|x|r\+)b?\+?['\"]|ParquetWriter\(|os\.replace\(|mkstemp\(|NamedTemporaryFile|write_dataset\(|to_parquet\(|shutil\.(copy|move)" \
        python/src || true
} >"$WORK/writers"
unknown=0
while IFS= read -r hit; do
    file=${hit%%:*}
    text=${hit#*:*:}
    ok=0
    for w in "${WRITERS[@]}"; do
        [[ $file == "${w%%	*}" && $text == *"${w#*	}"* ]] && { ok=1; break; }
    done
    ((ok)) || { echo "not in the table: $hit" >&2; unknown=1; }
done <"$WORK/writers"
((unknown == 0)) || fail "a host-file writer is not in t_output_class's table (see above)"
log "every writer is in the table"
