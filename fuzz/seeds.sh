#!/usr/bin/env bash
# Make the seed corpora of the fuzz targets (fuzz/README.md), at run time: nothing generated
# is kept in the repository.
#
#   fuzz/seeds.sh OUTDIR      (env SF: the streamfat CLI; SF_TESTDATA: ../shared/testdata)
#
# OUTDIR/mount   images: streamfat mkfs exFAT / FAT32 / FAT16 (superfloppy, MBR, GPT, 4096-
#                byte sectors), the same with a few files and directories, mkfs.exfat and
#                mkfs.fat outputs when installed, and the foreign images of SF_TESTDATA.
#                fuzz_mount reads zeros wherever its input says nothing, so each image is
#                stored as its non-zero sectors (see add_image), at most SEED_CAP bytes
#                (default 1 MiB).
# OUTDIR/decode  logs from `streamfat log --source gen:can` (block sizes 512, 4K, 16K, one
#                sealed to fuzz/seal_test.pub with control byte 0x21, one
#                cut short), each with the control byte 0x01 (fix CRCs) in front
# OUTDIR/unpack  the stored payloads of the compressed blocks of `log --compress` logs (512
#                and 4K blocks) behind a control byte 0x00, and their records behind 0x01
#                (fuzz/fuzz_unpack.c); compressed logs in OUTDIR/decode too
# OUTDIR/candump candump -L lines: classic, extended, remote, CAN FD, error frames
# OUTDIR/blf     `streamfat export --format blf` (zlib and stored containers) of a log of
#                those candump frames plus gen:can frames; python-can's BLF files
#                (tests/scripts/import_frames.py) when Debian's python3-can is installed
# OUTDIR/asc     the same log as ASC, python-can's ASC, and a hand-written file with the
#                header and event lines import_asc.c reads
# OUTDIR/mf4     those lines logged and exported as MF4: plain DT and transposed DZ blocks
# OUTDIR/proto   frame sequences for fuzz_proto (its input format): an ISO-TP FF with its CFs
#                and flow control, an SF, a J1939 BAM, an RTS/CTS transfer, a fast packet
#
# SEEDS_QUICK=1 (t_fuzz_smoke): a few of each kind, for a short run on a loaded machine.
set -euo pipefail

out=${1:?usage: seeds.sh OUTDIR}
: "${SF:?set SF to the streamfat CLI}"
SF_TESTDATA=${SF_TESTDATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/testdata}
cap=${SEED_CAP:-1048576}
quick=${SEEDS_QUICK:-0}
mkdir -p "$out/mount" "$out/decode" "$out/candump" "$out/blf" "$out/asc" "$out/mf4" \
    "$out/proto" "$out/unpack"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sf-seeds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Copy image $1 into the mount corpus as $2: its first bytes without the trailing zeros, or
# the sparse form of fuzz/fuzz_mount.c (its non-zero 512-byte sectors as extents, holes
# skipped with SEEK_DATA): the first when it holds everything and is smaller. At most $cap
# bytes (the extents nearest the start are kept).
add_image() {
    python3 - "$1" "$out/mount/$2" "$cap" <<'EOF'
import os, struct, sys
src, dst, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
limit = 1 << 30                      # look no further than 1 GiB into the image
with open(src, 'rb') as f:
    raw = f.read(cap).rstrip(b'\0')
fd = os.open(src, os.O_RDONLY)
ext, total, pos, run = [], 8, 0, None
while pos < limit and total < cap:
    try:
        pos = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break                        # no data past pos
    hole = os.lseek(fd, pos, os.SEEK_HOLE)
    pos -= pos % 512
    os.lseek(fd, pos, os.SEEK_SET)
    while pos < min(hole, limit) and total < cap:
        sec = os.read(fd, 512)
        if len(sec) < 512:
            pos = limit
            break
        if sec.count(0) != 512:
            if run is not None and run[0] + len(run[1]) // 512 == pos // 512 \
                    and len(run[1]) < 65535 * 512:
                run[1].extend(sec)
            else:
                run = [pos // 512, bytearray(sec)]
                ext.append(run)
                total += 6
            total += 512
        pos += 512
os.close(fd)
sparse = bytearray(b'SFZSPARS')
for unit, data in ext:
    if unit >= 1 << 32 or len(sparse) + 6 + len(data) > cap:
        break
    sparse += struct.pack('<IH', unit, len(data) // 512) + data
# raw is complete when no data lies past its end (else it lost the far metadata)
end = max((u * 512 + len(d) for u, d in ext), default=0)
best = raw if end <= -(-len(raw) // 512) * 512 and len(raw) <= len(sparse) else bytes(sparse)
if len(best) > 8:
    with open(dst, 'wb') as f:
        f.write(best)
EOF
}

# Our own formats: type size cluster [options...]
i=0
while read -r t size clus opts; do
    i=$((i + 1))
    [[ $quick = 1 && ( $opts = *partition* || $opts = *sector* ) ]] && continue
    img=$tmp/own$i.img
    # shellcheck disable=SC2086
    "$SF" mkfs -q -t "$t" -s "$size" -c "$clus" --align 4K $opts -L FUZZ "$img" </dev/null
    add_image "$img" "own$i-$t-empty"
    "$SF" mkdir -p "$img" /a/b/c LOGS </dev/null >/dev/null
    printf 'hello\n' > "$tmp/small.txt"
    head -c 9000 /dev/zero | tr '\0' 'x' > "$tmp/multi.bin"
    "$SF" put "$img" "$tmp/small.txt" /a/b/small.txt </dev/null >/dev/null
    "$SF" put "$img" "$tmp/multi.bin" /LOGS/multi.bin </dev/null >/dev/null
    "$SF" put "$img" "$tmp/small.txt" "/A long name with ünïcode.txt" </dev/null >/dev/null
    add_image "$img" "own$i-$t-files"
    rm -f "$img"
done <<'EOF'
exfat 1M 4K
exfat 2M 4K --partition mbr
exfat 2M 4K --partition gpt
exfat 2M 4K --sector-size 4096
fat16 3M 512
fat16 3M 512 --partition gpt
fat32 34M 512 --fats 1
EOF

if [[ $quick != 1 ]] && command -v mkfs.exfat >/dev/null 2>&1; then
    truncate -s 8M "$tmp/m.img"
    mkfs.exfat -c 4K "$tmp/m.img" </dev/null >/dev/null 2>&1 && add_image "$tmp/m.img" mkfs.exfat
    rm -f "$tmp/m.img"
fi
if [[ $quick != 1 ]] && command -v mkfs.fat >/dev/null 2>&1; then
    for f in 12 16 32; do
        truncate -s 40M "$tmp/m.img"
        mkfs.fat -F $f -s 1 "$tmp/m.img" </dev/null >/dev/null 2>&1 &&
            add_image "$tmp/m.img" "mkfs.fat$f"
        rm -f "$tmp/m.img"
    done
fi

if [[ -d $SF_TESTDATA ]]; then
    for tarball in "$SF_TESTDATA"/exfatprogs-corrupt/*.tar.xz "$SF_TESTDATA"/exfat-rawtools/*.tar.xz; do
        [[ -f $tarball ]] || continue
        name=$(basename "$tarball" .tar.xz)
        [[ $quick = 1 && ! $name =~ ^(sample|error|bad_dentries|loop_chain)__ ]] && continue
        mkdir -p "$tmp/x"
        tar -xf "$tarball" -C "$tmp/x"
        for img in "$tmp"/x/*.img; do
            [[ -f $img ]] && add_image "$img" "td-$name"
        done
        rm -rf "$tmp/x"
    done
    for dump in "$SF_TESTDATA"/dosfstools/*.fsck "$SF_TESTDATA"/dosfstools/*.xxd; do
        [[ -f $dump ]] || continue
        [[ $quick = 1 && ! $dump =~ (circular_chain|dot_entries|fat12_first_cluster|xp_label1)\.(fsck|xxd)$ ]] &&
            continue
        [[ $dump = *.xxd && -f ${dump%.xxd}.fsck ]] && continue   # the same image, repaired
        rm -f "$tmp/d.img"
        xxd -r "$dump" "$tmp/d.img" 2>/dev/null && add_image "$tmp/d.img" "td-$(basename "$dump")"
    done
    rm -f "$tmp/d.img"
fi

# Logs. The CLI writes them onto a volume; export --raw style reading is not needed: the
# fuzz target takes the file's bytes, copied out with `streamfat cat`.
n=0
chunks=(512 4K 16K)
[[ $quick = 1 ]] && chunks=(512)
for chunk in "${chunks[@]}"; do
    img=$tmp/log.img
    "$SF" mkfs -q -t exfat -s 8M -c 4K --align 4K "$img" </dev/null
    "$SF" log -q --source gen:can,channels=2 --chunk "$chunk" --max-records 300 \
        --no-direct "$img" </dev/null >/dev/null
    for f in $("$SF" ls "$img" / </dev/null | awk '/\.SFL/ {print $NF}'); do
        n=$((n + 1))
        { printf '\001'; "$SF" cat "$img" "/$f" </dev/null; } > "$out/decode/log$n-$chunk"
        size=$(stat -c %s "$out/decode/log$n-$chunk")
        if ((size > 65537)); then        # keep the fuzzer's inputs small
            truncate -s 65537 "$out/decode/log$n-$chunk"
        fi
    done
    rm -f "$img"
done
# Compressed logs (issue 29): whole, for fuzz_decode, and their stored payloads (kind-3
# blocks: u16 kind at 6, u32 used at 32) for fuzz_unpack.
for chunk in 512 4K; do
    img=$tmp/log.img
    "$SF" mkfs -q -t exfat -s 8M -c 4K --align 4K "$img" </dev/null
    "$SF" log -q --compress --source gen:can,channels=2 --chunk "$chunk" --max-records 400 \
        --no-direct "$img" </dev/null >/dev/null
    f=$("$SF" ls "$img" / </dev/null | awk '/\.SFL/ {print $NF; exit}')
    { printf '\001'; "$SF" cat "$img" "/$f" </dev/null; } | head -c 65537 > "$out/decode/packed-$chunk"
    python3 - "$out/decode/packed-$chunk" "$out/unpack/packed-$chunk" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()[1:]
b = struct.unpack_from("<I", d, 40)[0]
for i, o in enumerate(range(b, len(d) - b + 1, b)):
    kind, used = struct.unpack_from("<H", d, o + 6)[0], struct.unpack_from("<I", d, o + 32)[0]
    if kind == 3 and i < 4:
        open("%s-%d" % (sys.argv[2], i), "wb").write(b"\0" + d[o + 48:o + 48 + used])
PY
    rm -f "$img"
done
{ printf '\001'; head -c 4000 "$out/decode/log1-512" | tail -c +513; } > "$out/unpack/records" 2>/dev/null || true

# Sealed logs (issue 29): sealed to fuzz/seal_test.pub, whose secret key fuzz_decode holds;
# control byte 0x21: fix CRCs, open with that key (the decrypting reader).
if "$SF" keygen --help >/dev/null 2>&1; then
    img=$tmp/seal.img
    "$SF" mkfs -q -t exfat -s 8M -c 4K --align 4K "$img" </dev/null
    if "$SF" log -q --source gen:can,channels=2 --chunk 512 --max-records 200 --no-direct \
            --encrypt-to "$(dirname "$0")/seal_test.pub" "$img" </dev/null >/dev/null 2>&1; then
        { printf '\041'; "$SF" cat "$img" /LOG00001.SFL </dev/null; } > "$out/decode/sealed-512"
    fi
    rm -f "$img"
    # compressed and sealed: kind-3 blocks sealed after packing (open, then unpack)
    "$SF" mkfs -q -t exfat -s 8M -c 4K --align 4K "$img" </dev/null
    if "$SF" log -q --compress --source gen:can,channels=2 --chunk 512 --max-records 400 \
            --no-direct --encrypt-to "$(dirname "$0")/seal_test.pub" "$img" </dev/null >/dev/null 2>&1; then
        { printf '\041'; "$SF" cat "$img" /LOG00001.SFL </dev/null; } > "$out/decode/sealed-packed-512"
    fi
    rm -f "$img"
fi
# one cut inside a block
if [[ -f $out/decode/log1-512 ]]; then
    head -c 1300 "$out/decode/log1-512" > "$out/decode/log-cut"
fi

cat > "$out/candump/lines" <<'EOF'
(1700000000.123456) can0 123#DEADBEEF
(1700000000.123457) can1 1ABCDEF0#0011223344556677
(1700000000.2) vcan0 7FF#R
(1700000000.3) can0 12345678#R4
(1700000001.000000) can0 123##1001122334455667788990011
(1700000001.000001) can0 123##3
(1700000002.5) can0 20000080#0000000000000000
# a comment
can0 321#11.22.33
123#4455_9
EOF
printf '(1.000000) can0 1#\n' > "$out/candump/short"

# BLF and ASC, exported from a log of the candump frames above plus a few gen:can frames.
grep '^(' "$out/candump/lines" > "$tmp/frames.log"
img=$tmp/imp.img
"$SF" mkfs -q -t exfat -s 8M -c 4K --align 4K "$img" </dev/null
"$SF" log -q --source "file:$tmp/frames.log" --no-direct "$img" </dev/null >/dev/null
"$SF" log -q --source gen:can,channels=2 --max-records 40 --no-direct "$img" </dev/null >/dev/null
n=0
for f in $("$SF" ls "$img" / </dev/null | awk '/\.SFL/ {print $NF}'); do
    n=$((n + 1))
    "$SF" export --format blf -o "$out/blf/export$n.blf" "$img" "/$f" </dev/null 2>/dev/null
    "$SF" export --format blf --blf-compress 0 -o "$out/blf/stored$n.blf" "$img" "/$f" \
        </dev/null 2>/dev/null
    "$SF" export --format asc -o "$out/asc/export$n.asc" "$img" "/$f" </dev/null 2>/dev/null
done
rm -f "$img"
if [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import can' 2>/dev/null; then
    fr=$(cd "$(dirname "$0")/.." && pwd)/tests/scripts/import_frames.py
    TZ=UTC /usr/bin/python3 "$fr" gen-vector "$tmp/v.blf" </dev/null >/dev/null 2>&1 &&
        head -c 65536 "$tmp/v.blf" > "$out/blf/python-vector.blf"
    TZ=UTC /usr/bin/python3 "$fr" gen-blf "$tmp/p.blf" 0 1000 </dev/null >/dev/null 2>&1 &&
        head -c 16384 "$tmp/p.blf" > "$out/blf/python-stored.blf"
    TZ=UTC /usr/bin/python3 "$fr" gen-asc "$tmp/p.asc" </dev/null >/dev/null 2>&1 &&
        head -c 8192 "$tmp/p.asc" | sed '$d' > "$out/asc/python.asc"
fi
cat > "$out/asc/lines.asc" <<'EOF'
date Thu Nov 30 01:02:03.456 pm 2026
base dec  timestamps relative
internal events logged
// a comment
Begin Triggerblock Thu Nov 30 13:02:03.456 2026
   0.000000 Start of measurement
   0.001000 1  291             Rx   d 8 1 2 3 4 5 6 7 8  Length = 0 BitCount = 0 ID = 291
   0.002000 2  123456x         Tx   d 2 255 0
   0.003000 1  17              Rx   r 4
   0.004000 1  ErrorFrame
   0.005000 CANFD   1 Rx        100x  name  1 0 9 12 1 2 3 4 5 6 7 8 9 10 11 12   0 0 3000 0 0 0 0 0
   0.006000 CANFD   2 Tx ErrorFrame
End TriggerBlock
EOF

# MF4: the candump lines above replayed into a log and exported both ways.
img=$tmp/mf4.img
"$SF" mkfs -q -t exfat -s 8M "$img" </dev/null
if "$SF" log -q --source "file:$out/candump/lines" --fast "$img" </dev/null >/dev/null 2>&1; then
    for level in 0 1; do
        "$SF" export -f mf4 --mf4-compress $level -o "$out/mf4/lines$level.mf4" "$img" \
            LOG00001.SFL </dev/null 2>/dev/null || true
    done
fi
rm -f "$img"

# fuzz_proto: (id choice, ms step, length, data) frames after a control byte (fuzz_proto.c).
python3 - "$out/proto" <<'PY'
import os, sys
d = sys.argv[1]
def fr(sel, step, data):
    return bytes([sel, step, len(data)]) + bytes(data)
isotp = fr(2, 1, [0x10, 20] + list(range(6))) + fr(1, 1, [0x30, 0, 0]) + \
    fr(2, 1, [0x21] + list(range(6, 13))) + fr(2, 1, [0x22] + list(range(13, 20))) + \
    fr(1, 1, [0x02, 0x10, 0x03])
bam = fr(9, 1, [32, 20, 0, 3, 0xFF, 0xCA, 0xFE, 0]) + \
    b"".join(fr(10, 50, [k] + [k] * 7) for k in (1, 2, 3))
rts = fr(11, 1, [16, 20, 0, 3, 2, 0, 0xD9, 0]) + fr(13, 1, [17, 2, 1, 0xFF, 0xFF, 0, 0xD9, 0]) + \
    fr(12, 1, [1] + [1] * 7) + fr(12, 1, [2] + [2] * 7) + \
    fr(13, 1, [17, 1, 3, 0xFF, 0xFF, 0, 0xD9, 0]) + fr(12, 1, [3] + [3] * 7)
fast = fr(14, 1, [0x40, 20] + [1] * 6) + fr(14, 1, [0x41] + [2] * 7) + fr(14, 1, [0x42] + [3] * 7)
# ETP of 1,786 bytes as Linux sends it: RTS, CTS, DPO, 255 ETP.DT, CTS, DPO, 1 ETP.DT
etp = fr(16, 1, [20, 0xFA, 6, 0, 0, 0, 0xEF, 0]) + fr(18, 1, [21, 255, 1, 0, 0, 0, 0xEF, 0]) + \
    fr(16, 1, [22, 255, 0, 0, 0, 0, 0xEF, 0]) + \
    b"".join(fr(17, 1, [k] + [k] * 7) for k in range(1, 256)) + \
    fr(18, 1, [21, 1, 0, 1, 0, 0, 0xEF, 0]) + fr(16, 1, [22, 1, 255, 0, 0, 0, 0xEF, 0]) + \
    fr(17, 1, [1] + [9] * 7)
for name, body in (("isotp", isotp), ("bam", bam), ("rts", rts), ("fast", fast),
                   ("etp", etp), ("all", isotp + bam + rts + fast)):
    for ctl in ((0x1F, 0x5F) if name == "etp" else (0x07, 0x5F)):
        with open(os.path.join(d, "%s-%02x" % (name, ctl)), "wb") as fh:
            fh.write(bytes([ctl]) + body)
PY
