#!/usr/bin/env bash
# Logger CPU cost in instructions (valgrind --tool=callgrind): deterministic, unlike timings on
# a shared machine. Prints a markdown table on stdout.
#
#   1. framed: `streamfat log --source gen:can --max-records N` (one producer, 16-byte CAN
#      frames, 32-byte records) on an exFAT image in tmpfs. Per record: the generator loop with
#      everything it calls (what one producer thread costs), sf_log_append_can alone, the
#      writer thread (sealing, CRC-32C, requests), CRC-32C alone.
#   (4. gen:can again with --compress: the writer thread and the pack stage per record)
#   (5. sealed: the gen:can run of 1. with --encrypt-to (and --encrypt-aead aes-256-gcm where
#      the CPU has AES-NI): the writer thread and the cipher stage; then sealed and compressed
#      together (--compress --encrypt-to): issue 29's goal is <= 1.5x the writer + producer
#      instructions per record of --compress alone.)
#   2. raw: `streamfat log --raw --source gen:raw --max-bytes M`, per MiB: the generator with
#      the append, sf_log_write_raw alone, the memcpy inside it (the bytes' one copy into the
#      ring: what an ideal producer costs; glibc copies large blocks with `rep movsb`, which
#      callgrind counts as one instruction per byte), the writer thread.
# Instructions in the kernel (the image's pwrite/io_uring on tmpfs) are not counted: user space
# only. Callgrind runs the threads one at a time, so the writer's share per record depends a
# little on how often it found work; the producer's does not.
#
# Environment: SF_BUILD (default build/; configured Release if new), BENCH_CAN_RECORDS (default
# 1000000), BENCH_RAW_MIB (default 256).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SF_BUILD:-$SRC/build}
[[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j 2 --target streamfat >/dev/null
SF=$BUILD/streamfat
N=${BENCH_CAN_RECORDS:-1000000}
MIB=${BENCH_RAW_MIB:-256}
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || {
    echo "log_cpu.sh: needs valgrind (callgrind) installed" >&2
    exit 1
}
SHM=$(mktemp -d /dev/shm/sf-logcpu.XXXXXX)
trap '[[ -n ${BENCH_KEEP:-} ]] || rm -rf "$SHM"' EXIT

# incl OUT FUNCTION: inclusive instructions of FUNCTION in callgrind file OUT (0 if absent)
incl() {
    # from /: inside the source tree callgrind_annotate splits a function into entries by path
    (cd / && callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null) |
        awk -v f="$2" '$0 ~ (":" f " \\[") { gsub(",", "", $1); print $1; found = 1; exit }
                       END { if (!found) { print "log_cpu.sh: no function " f " in the profile" > "/dev/stderr"; print "nan" } }'
}
per() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

run() { # OUT ARGS...: one callgrind run of streamfat log on a fresh image
    local out=$1
    shift
    rm -f "$SHM/g.img"
    "$SF" mkfs -q -t exfat -s 2G "$SHM/g.img"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$SF" log --json "$@" "$SHM/g.img" \
        </dev/null >"$SHM/r.json" 2>"$SHM/vg.txt" || {
        echo "log_cpu.sh: streamfat log $* failed:" >&2
        tail -5 "$SHM/vg.txt" >&2
        exit 1
    }
}

run "$SHM/can.out" --source gen:can --max-records "$N"
# 3. the same with the control stage (docs/BENCHMARKS.md "Control stage"): 64 --filter (128
#    core rules: each matches 11- and 29-bit ids), 32 --prescale (the last keeps every gen:can
#    frame, so all still reach the ring), 8 --signal, a start and a stop on two of them. Not
#    the issue's 192 rules: a --filter cannot be standard-only, and the core holds 64
#    extended rules per channel, so 64 + 64 is the most (tests/helpers/ctl_bench has 192)
ctl=()
for i in $(seq 0 62); do
    if ((i % 2)); then ctl+=(--filter "!$(printf %X $((0x200 + i)))"); else ctl+=(--filter "$(printf %X $((0x200 + i)))/7F0"); fi
done
ctl+=(--filter 100/7F0)
for i in $(seq 0 30); do ctl+=(--prescale "$(printf %X $((0x300 + i))):3"); done
ctl+=(--prescale 100/7F0:1)
for i in $(seq 0 7); do ctl+=(--signal "s$i=$(printf %X $((0x100 + 2 * i))):0:32:le:u:0.5"); done
ctl+=(--start 's0 >= 0' --stop 's1 > 2000000000')
run "$SHM/ctl.out" --source gen:can --max-records "$N" "${ctl[@]}"
run "$SHM/raw.out" --raw --source gen:raw --max-bytes "${MIB}M"
# 4. the same gen:can run with compressed record blocks (issue 29, docs/BENCHMARKS.md
#    "Compressed blocks"): the writer packs every record (src/log/block_pack.c)
run "$SHM/pack.out" --compress --source gen:can --max-records "$N"
# 5. sealed logs (issue 29, docs/LOG.md "Sealed logs"): the same gen:can run with every block
#    sealed, XChaCha20-Poly1305 (the default) and, where libsodium offers it (AES-NI),
#    AES-256-GCM
seal=0
if (cd "$SHM" && "$SF" keygen k >/dev/null 2>&1); then
    seal=1
    run "$SHM/seal.out" --source gen:can --max-records "$N" --encrypt-to "$SHM/k.pub"
    grep -qw aes /proc/cpuinfo && seal=2 &&
        run "$SHM/gcm.out" --source gen:can --max-records "$N" --encrypt-to "$SHM/k.pub" \
            --encrypt-aead aes-256-gcm
    # sealed and compressed: pack first, then the cipher on the packed block (DESIGN29)
    run "$SHM/sealpack.out" --compress --source gen:can --max-records "$N" \
        --encrypt-to "$SHM/k.pub"
fi

echo "| path (callgrind, user-space instructions) | per |"
echo "|---|---:|"
echo "| gen:can producer thread: generator + append, per record | $(per "$(incl "$SHM/can.out" gen_can_main)" "$N") |"
echo "| \`sf_log_append_can\` (reserve, encode, commit), per record | $(per "$(incl "$SHM/can.out" sf_log_append_can)" "$N") |"
echo "| gen:can producer thread with the control stage (128 rules, 32 prescalers, 8 signals), per record | $(per "$(incl "$SHM/ctl.out" gen_can_main)" "$N") |"
echo "| writer thread (take, seal, CRC-32C, submit), per record | $(per "$(incl "$SHM/can.out" log_writer_main)" "$N") |"
echo "| of which CRC-32C, per record | $(per "$(incl "$SHM/can.out" sf_crc32c)" "$N") |"
echo "| writer thread with --compress (take, pack, seal, CRC-32C, submit), per record | $(per "$(incl "$SHM/pack.out" log_writer_main)" "$N") |"
echo "| of which the pack stage (\`sf_pack_add\`), per record | $(per "$(incl "$SHM/pack.out" sf_pack_add)" "$N") |"
echo "| gen:can producer thread with --compress, per record | $(per "$(incl "$SHM/pack.out" gen_can_main)" "$N") |"
echo "| gen:raw producer thread: generator + append, per MiB | $(per "$(incl "$SHM/raw.out" gen_raw_main)" "$MIB") |"
echo "| \`sf_log_write_raw\`, per MiB | $(per "$(incl "$SHM/raw.out" sf_log_write_raw)" "$MIB") |"
echo "| of which the memcpy into the ring, per MiB | $(per "$(incl "$SHM/raw.out" __memcpy_avx_unaligned_erms)" "$MIB") |"
echo "| writer thread, raw, per MiB | $(per "$(incl "$SHM/raw.out" log_writer_main)" "$MIB") |"
if ((seal)); then
    echo "| sealed (XChaCha20-Poly1305): writer thread, per record | $(per "$(incl "$SHM/seal.out" log_writer_main)" "$N") |"
    echo "| of which \`sf_cipher_seal_block\` (libsodium's AEAD, in place), per record | $(per "$(incl "$SHM/seal.out" sf_cipher_seal_block)" "$N") |"
    echo "| sealed + compressed (--compress --encrypt-to): writer thread, per record | $(per "$(incl "$SHM/sealpack.out" log_writer_main)" "$N") |"
    echo "| of which \`sf_cipher_seal_block\`, per record | $(per "$(incl "$SHM/sealpack.out" sf_cipher_seal_block)" "$N") |"
    echo "| sealed + compressed: gen:can producer thread, per record | $(per "$(incl "$SHM/sealpack.out" gen_can_main)" "$N") |"
fi
if ((seal == 2)); then
    echo "| sealed (AES-256-GCM): writer thread, per record | $(per "$(incl "$SHM/gcm.out" log_writer_main)" "$N") |"
    echo "| of which \`sf_cipher_seal_block\`, per record | $(per "$(incl "$SHM/gcm.out" sf_cipher_seal_block)" "$N") |"
fi
