#!/usr/bin/env bash
# README.md works as written (issue 15, item 10): every command of its ```sh blocks runs, in
# order, in an empty directory, against image files; and its ```c program builds against the
# library and runs on the image the commands left.
#
# What cannot run here is mapped or skipped by the explicit list below (MAP), each with its
# reason, and reported; a command that no rule covers runs as written, and any command that
# fails (or a streamfat in it that fails) fails the test. The rules:
#   make ...            skipped: builds and the whole suite (make check runs this test)
#   --source can:...    skipped: a live SocketCAN bus (the reading loop is tested through
#                       canpair: in t_log_sources)
#   candump -L can0     replaced by `cat candump.txt`: recorded candump -L lines instead of a
#                       live bus
#   /dev/NAME           replaced by NAME.img: an image file (made here: 1 GiB, formatted for
#                       commands that expect a file system, blank for mkfs and bench) stands
#                       in for the device
#   bench --size 8G     --size 64M: the same command on a 64 MiB span (8 GiB of writes is
#                       minutes of I/O on a shared test machine)
# Inputs the commands name are made first: can0.log, samples.bin, drive.blf (exported from a
# scratch log), candump.txt.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3 cc

RUN=$WORK/run
mkdir -p "$RUN" "$WORK/bin"
README=$SF_SRC/README.md

# `streamfat` on PATH: the CLI under test; each exit status goes to $WORK/status, stderr is
# kept for the sanitizer check
cat >"$WORK/bin/streamfat" <<EOF
#!/usr/bin/env bash
rc=0
"$SF" "\$@" 2>"$WORK/.err.\$\$" || rc=\$?
cat "$WORK/.err.\$\$" >&2
cat "$WORK/.err.\$\$" >>"$WORK/stderr.all"
rm -f "$WORK/.err.\$\$"
echo "\$rc streamfat \$*" >>"$WORK/status"
exit \$rc
EOF
chmod +x "$WORK/bin/streamfat"
export PATH=$WORK/bin:$PATH

# ---- the commands, with the mapping applied ----
python3 - "$README" >"$WORK/commands.tsv" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)
# (pattern, action, argument, reason): action skip, or sub (re.sub of pattern by argument)
MAP = [
    (r"^make\b", "skip", None, "make targets: builds and the whole suite"),
    (r"--source can:", "skip", None, "a live SocketCAN bus"),
    (r"candump -L can0", "sub", "cat candump.txt", "recorded candump -L lines for a live bus"),
    (r"^(streamfat bench .*)--size 8G", "sub", r"\1--size 64M", "bench on 64 MiB, not 8 GiB"),
    (r"/dev/(\w+)", "sub", r"\1.img", "an image file for the device"),
]
for b in blocks:
    for line in b.splitlines():
        cmd = re.sub(r"\s+#(\s.*)?$", "", line).strip()
        if not cmd or cmd.startswith("#"):
            continue
        notes, skip = [], None
        for pat, act, arg, why in MAP:
            if not re.search(pat, cmd):
                continue
            if act == "skip":
                skip = why
                break
            cmd = re.sub(pat, arg, cmd)
            notes.append(why)
        if skip:
            print("SKIP\t%s\t%s" % (line.strip(), skip))
        else:
            print("RUN\t%s\t%s" % (cmd, "; ".join(notes)))
PY
nrun=$(grep -c '^RUN' "$WORK/commands.tsv" || true)
nskip=$(grep -c '^SKIP' "$WORK/commands.tsv" || true)
((nrun >= 20)) || { cat "$WORK/commands.tsv" >&2; fail "only $nrun README commands found"; }
grep -m1 '^RUN' "$WORK/commands.tsv" | matches $'^RUN\tstreamfat log --mkfs' ||
    fail "the README's first CLI command is not the log --mkfs one: $(head -n1 "$WORK/commands.tsv")"

# ---- inputs the commands read, and stand-ins for devices ----
cd "$WORK"
python3 - <<'PY'
import random
r = random.Random(15)
with open("candump.txt", "w") as f, open("can0.log", "w") as g:
    t = 1764547200.0
    for k in range(2000):
        t += 0.001
        line = "(%.6f) can0 %03X#%s\n" % (t, 0x100 + k % 16, bytes(r.randrange(256) for _ in range(8)).hex().upper())
        f.write(line)
        g.write(line)
open("samples.bin", "wb").write(r.randbytes(3 << 20))
PY
sf_ok mkfs -q -t exfat -s 64M scratch.img
sf_ok log -q --source gen:can,rate=20000 --max-records 5000 scratch.img
sf_ok export -f blf -o drive.blf scratch.img LOG00001.SFL
mv candump.txt can0.log samples.bin drive.blf "$RUN/"
for dev in $(grep -o '^RUN.*' commands.tsv | grep -o '[A-Za-z0-9_]*\.img' | sort -u); do
    [[ $dev == card.img ]] && continue
    truncate -s 1G "$RUN/$dev"
done
# a device the README logs to without --mkfs holds a file system already
while IFS=$'\t' read -r kind cmd _; do
    if [[ $kind == RUN && $cmd == *"streamfat log "* && $cmd != *--mkfs* ]]; then
        img=$(grep -o '[A-Za-z0-9_]*\.img' <<<"$cmd" | tail -n1)
        [[ -e $RUN/$img && $img != card.img ]] && sf_ok mkfs -q "$RUN/$img"
    fi
done <commands.tsv
log "inputs: $(cd "$RUN" && ls | tr '\n' ' ')"

# ---- run them, in order ----
cd "$RUN"
i=0
while IFS=$'\t' read -r kind cmd why; do
    i=$((i + 1))
    if [[ $kind == SKIP ]]; then
        log "[$i] skipped ($why): $cmd"
        continue
    fi
    log "[$i] \$ $cmd${why:+   ($why)}"
    : >"$WORK/status"
    rc=0
    timeout 600 bash -c "$cmd" </dev/null >"$WORK/out.$i" 2>"$WORK/err.$i" || rc=$?
    head -c 2000 "$WORK/out.$i" >&2
    cat "$WORK/err.$i" >&2
    ((rc == 0)) || fail "README command exited $rc: $cmd"
    while read -r src _; do
        # a streamfat that `head` stopped reading from dies of SIGPIPE: only then 141 is fine
        [[ $src == 0 ]] && continue
        [[ $src == 141 && $cmd == *"| head"* ]] && continue
        fail "README command: streamfat exited $src: $cmd"
    done <"$WORK/status"
    [[ -s $WORK/status ]] || [[ $cmd != *streamfat* ]] || fail "streamfat did not run: $cmd"
done <"$WORK/commands.tsv"
if has_sanitizer_report "$WORK/stderr.all"; then
    fail "sanitizer report from a README command"
fi
log "$nrun README commands ran, $nskip skipped (listed above with the reason)"

# ---- the C program ----
python3 - "$README" >"$WORK/sample.c" <<'PY'
import re, sys
blocks = re.findall(r"^```c\n(.*?)^```", open(sys.argv[1], encoding="utf-8").read(), re.M | re.S)
if len(blocks) != 1:
    sys.exit("expected one ```c block in README.md, found %d" % len(blocks))
print(blocks[0], end="")
PY
flags=()
[[ ${SF_SANITIZED:-0} == 1 || $SF_BUILD == *asan* ]] &&
    flags=(-fsanitize=address,undefined -fno-omit-frame-pointer)
libs=("$SF_BUILD/libstreamfat.a" -lpthread)
pkg-config --exists liburing 2>/dev/null && libs+=($(pkg-config --libs liburing))
timeout 300 cc -std=c11 -Wall -Wextra -Werror -pedantic "${flags[@]}" -I"$SF_SRC/include" \
    "$WORK/sample.c" "${libs[@]}" -o "$WORK/sample" </dev/null ||
    fail "the README's C program does not build"
cd "$RUN"
# the years the program may stamp: UTC or local time, before it runs or after (New Year)
years="$(date -u +%Y) $(date +%Y)"
for n in 1 2; do
    rc=0
    timeout 120 "$WORK/sample" >"$WORK/sample.out" 2>&1 || rc=$?
    cat "$WORK/sample.out" >&2
    has_sanitizer_report "$WORK/sample.out" && fail "sanitizer report from the README's C program"
    ((rc == 0)) || fail "the README's C program exited $rc"
done
sf_ok cat card.img can0.log >"$WORK/can0.got"
printf 'can0 123#DEADBE\ncan0 123#DEADBE\n' | cmp - "$WORK/can0.got" || fail "can0.log does not hold the two frames"
sf_ok ls -l card.img >"$WORK/ls.txt"
year=$(date -u +%Y)
years+=" $year $(date +%Y)"
grep -E "can0\.log" "$WORK/ls.txt" | matches -E "(${years// /|})-" ||
    { cat "$WORK/ls.txt" >&2; fail "can0.log is not dated $years (no clock set?)"; }
sf_ok fsck card.img >/dev/null
# a file without a file system: the program says why (sf_mount_error) and exits 1
truncate -s 1M "$WORK/blank.img"
cd "$WORK" && mv blank.img card.img
rc=0
timeout 60 "$WORK/sample" >"$WORK/sample.out" 2>&1 || rc=$?
cat "$WORK/sample.out" >&2
((rc == 1)) && [[ $(wc -l <"$WORK/sample.out") == 1 ]] ||
    fail "the README's C program on a blank image: exit $rc, expected 1 and one line"
log "the README's C program builds with -Werror -pedantic, appends twice, dates the file $year"
