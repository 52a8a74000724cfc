#!/usr/bin/env bash
# No value is accepted silently (issue 26, item 21): every numeric, size and duration option
# of every command, with a value out of its range (zero where zero means nothing, below the
# lower bound, above the upper one, not a multiple of what it must be), is refused with its
# exit status and one line naming the range - never rounded, clamped or read as "off":
#   log  --split-size 0 / 1 (was: off / a file per checkpoint), --split-time 0, --ring 1K
#        (was: 256K), --ring 100K (was: 128K), --sync-interval 0 (was: 1s), --pre 0, --post 0,
#        the same through --config FILE.json, and the options that were already checked;
#   bench --size 1G on a 64 MiB image (was: 64 MiB measured), and its other options;
#   mkfs, put, export, plan: their numeric options.
# The table: expected exit status, a regular expression the first line of stderr must
# match, then the command. Nothing may be created (x.img never exists).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf

cd "$WORK"
truncate -s 64M img64
sf_ok mkfs -q -t exfat -s 64M vol.img
printf '{"split-size": 0}\n' >split0.json
printf '{"ring": "1K"}\n' >ring1k.json

ring='out of range: a multiple of the block size \(--chunk 64 KiB\) from 4 blocks \(256 KiB\) to 2G'
while IFS='|' read -r want re args; do
    [[ -z $want || $want == \#* ]] && continue
    read -ra argv <<<"$args"
    rc=0
    timeout 60 "$SF" "${argv[@]}" </dev/null >/dev/null 2>err || rc=$?
    has_sanitizer_report err && { cat err >&2; fail "$args: sanitizer"; }
    ((rc == want)) || { cat err >&2; fail "streamfat $args: exit $rc, expected $want"; }
    re=${re//@RING@/$ring}
    head -n1 err | matches -E -- "$re" || { cat err >&2; fail "streamfat $args: not '$re'"; }
    [[ ! -e x.img ]] || fail "streamfat $args: created x.img"
    n=$((${n:-0} + 1))
done <<'TABLE'
# ---- log: sizes and durations that were accepted silently ----
2|--split-size 0 out of range: at least 2 blocks \(128 KiB with --chunk 64 KiB\)|log --source gen:can --split-size 0 x.img
2|--split-size 1 out of range: at least 2 blocks \(128 KiB|log --source gen:can --split-size 1 x.img
2|--split-size 1K out of range: at least 2 blocks \(8 KiB with --chunk 4 KiB\)|log --source gen:can --chunk 4K --split-size 1K x.img
2|--split-time 0 out of range: at least 100ms|log --source gen:can --split-time 0 x.img
2|--split-time 10ms out of range: at least 100ms|log --source gen:can --split-time 10ms x.img
2|--ring 1K @RING@$|log --source gen:can --ring 1K x.img
2|--ring 100K @RING@$|log --source gen:can --ring 100K x.img
2|--ring 3G @RING@$|log --source gen:can --ring 3G x.img
2|--ring 2G @RING@ less one block$|log --source gen:raw --raw --ring 2G x.img
2|--sync-interval 0 out of range: a duration above 0 \(default 1s\) or a size of at least one block \(64 KiB\)|log --source gen:can --sync-interval 0 x.img
2|--sync-interval 1K out of range|log --source gen:can --sync-interval 1K x.img
2|--pre 0 out of range: a duration above 0 or a size of at least one block|log --source gen:can --pre 0 x.img
2|--pre 1K out of range|log --source gen:can --pre 1K x.img
2|--post 0: must be more than 0|log --source gen:can --pre 1s --post 0 x.img
# ---- log: the same through --config ----
2|--split-size 0 out of range|log --config split0.json --source gen:can x.img
2|--ring 1K @RING@$|log --config ring1k.json --source gen:can x.img
# ---- log: already checked (kept so) ----
2|--duration must be more than 0|log --source gen:can --duration 0 x.img
2|invalid --qd '0' \(1..64\)|log --source gen:can --qd 0 x.img
2|invalid --qd '65' \(1..64\)|log --source gen:can --qd 65 x.img
2|--chunk must be a power of two from 512 to 1M|log --source gen:can --chunk 3K x.img
2|--chunk must be a power of two from 512 to 1M|log --source gen:can --chunk 2M x.img
2|invalid --max-records '0'|log --source gen:can --max-records 0 x.img
2|--max-bytes must be more than 0|log --source gen:can --max-bytes 0 x.img
2|--size must be more than 0|log --source gen:can --mkfs exfat --size 0 x.img
2|gen:can: bad option 'rate=0' \(rate=1..100000000, channels=1..256\)|log --source gen:can,rate=0 x.img
2|gen:can: bad option 'channels=257'|log --source gen:can,channels=257 x.img
2|udp: expects a port 0..65535|log --source udp:70000 x.img
2|latency: expects a period from 10us to 10s|log --source latency:20s x.img
# ---- bench ----
1|--size 1 GiB is more than the target holds \(64 MiB\): give at most that, or --full|bench --size 1G img64
2|--qd must be 1..64|bench --qd 0 x.img
2|--qd must be 1..64|bench --qd 65 x.img
2|--bs must be a multiple of 512 from 512 to 64M|bench --bs 100 x.img
2|--bs must be a multiple of 512 from 512 to 64M|bench --bs 128M x.img
2|invalid --size '0': must be more than 0|bench --size 0 x.img
2|invalid --duration '0': must be more than 0|bench --duration 0 x.img
# ---- mkfs ----
2|size must not be 0|mkfs -s 0 x.img
2|cluster size '3000' is not a power of two|mkfs -s 64M -c 3000 x.img
2|exFAT takes 4K to 32M|mkfs -t exfat -s 64M -c 1K x.img
2|FAT takes 512 to 64K|mkfs -t fat32 -s 64M -c 128K x.img
2|alignment '3M' is not a power of two|mkfs -s 64M --align 3M x.img
1|alignment must be a power of two from one sector to 1 GiB|mkfs -s 64M --align 2G x.img
2|sector size must be 512 or 4096|mkfs -s 64M --sector-size 1024 x.img
2|the number of FATs must be 1 or 2|mkfs -t fat32 -s 64M --fats 3 x.img
# ---- put, export, plan ----
2|invalid --bs '1K': a multiple of 4K from 4K to 64M|put --bs 1K vol.img img64 /x
2|invalid --qd '0'|put --qd 0 vol.img img64 /x
2|--blf-compress '10': expects 0 \(stored\) to 9|export -f blf --blf-compress 10 vol.img LOG00001.SFL
2|--mf4-compress '10': expects 0 \(plain\) to 9|export -f mf4 --mf4-compress 10 vol.img LOG00001.SFL
2|invalid --pe-cycles '0'|plan --rate 100MB/s --capacity 64G --pe-cycles 0
2|invalid --waf '0.5' \(a number, at least 1\)|plan --rate 100MB/s --capacity 64G --waf 0.5
2|invalid --capacity '0': must be more than 0|plan --rate 100MB/s --capacity 0
TABLE
log "$n out-of-range values refused, each with its range"

# A JSON number is read as written (review of item 21): {"split-time": 0.1} is the bound
# itself and accepted; 0.0999 is refused naming 0.0999 (both were refused as "finer than a
# nanosecond", shown as 0.10000000000000001); a fraction of a second in "duration" too.
for v in 0.1 0.25 1.1 2.000000001; do
    printf '{"split-time": %s, "duration": %s}\n' "$v" "$v" >frac.json
    sf_ok log --config frac.json --print-config --source gen:can x.img >pc.json
    grep -q "\"split-time\":[[:space:]]*\"$v\"" pc.json || { cat pc.json >&2; fail "--config split-time $v: not read as $v"; }
    grep -q "\"duration\":[[:space:]]*\"$v\"" pc.json || { cat pc.json >&2; fail "--config duration $v: not read as $v"; }
done
printf '{"split-time": 0.0999}\n' >below.json
sf_err 2 log --config below.json --source gen:can x.img
grep -q -- "--split-time 0.0999 out of range: at least 100ms" "$SF_LAST_ERR" || fail "--config split-time 0.0999: not refused with its range"
[[ ! -e x.img ]] || fail "x.img was created"
