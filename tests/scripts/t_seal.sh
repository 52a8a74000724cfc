#!/usr/bin/env bash
# Sealed logs (issue 29, docs/FORMAT.md "Sealed files", docs/LOG.md "Sealed logs"):
#   - keygen: NAME.pub and NAME.key (mode 0600), never over an existing file; bad usage;
#   - log --encrypt-to (and in --config, --print-config): files sealed, rotation gives each
#     its own key; no CAN payload readable in the image; refused with --raw, with a secret
#     key file, with a file that is no key;
#   - fsck and fsck --repair need no key (the image after a kill -9 repairs clean);
#   - export without --key, with another key: one line naming the key id wanted, exit 1,
#     nothing exported; with the key: every frame, clean, and the independent reader
#     (sfl_ref.py, PyNaCl) agrees frame for frame;
#   - tampering: a flipped ciphertext byte, a swapped pair, a block moved to another place,
#     a block from another file (its id patched), a cut inside a block, a replaced sealed
#     key -> detected, counted (unauthentic, out-of-sequence, invalid, truncated), the rest
#     read, and the reference reader gives the same verdict and frames; a cut at a block
#     boundary reads as a power-cut file (clean, fewer frames).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3
"$SF" keygen --help >/dev/null 2>&1 || fail "no keygen command"
if "$SF" keygen "$WORK/probe" 2>&1 | matches 'lacks'; then
    skip "this build has no libsodium (scripts/deps.sh installs libsodium-dev)"
fi
rm -f "$WORK"/probe.*
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
REF=$SF_SRC/tests/scripts/sfl_ref.py
have_nacl=0
[[ -x $PY ]] && "$PY" -c 'import nacl' 2>/dev/null && have_nacl=1
cd "$WORK"

log "keygen"
sf_ok keygen k >out.txt
matches -E '^k\.pub: public key, key id [0-9a-f]{16}$' out.txt || fail "keygen: no key id line"
[[ $(stat -c %a k.key) == 600 ]] || fail "k.key: mode $(stat -c %a k.key), not 600"
matches -E '^streamfat-public-key [0-9a-f]{64}$' k.pub || fail "k.pub: not one key line"
matches -E '^streamfat-secret-key [0-9a-f]{64}$' k.key || fail "k.key: not one key line"
cp k.key k.key.orig
sf_err 1 keygen k
matches 'exists; not replaced' "$SF_LAST_ERR" || fail "keygen over k: not refused by name"
cmp -s k.key k.key.orig || fail "keygen replaced k.key"
echo x >only.pub
sf_err 1 keygen only
[[ ! -e only.key ]] || fail "keygen left only.key behind after refusing only.pub"
sf_err 2 keygen
sf_err 2 keygen a b
sf_ok keygen other >/dev/null
KEYID=$(sed -n 's/.*key id \([0-9a-f]*\)$/\1/p' out.txt)

log "log --encrypt-to"
sf_err 1 log --source gen:can --max-records 10 --encrypt-to k.key --mkfs exfat --size 32M x.img
matches 'is a secret key file' "$SF_LAST_ERR" || fail "--encrypt-to a .key: not said"
sf_err 1 log --source gen:can --max-records 10 --encrypt-to out.txt --mkfs exfat --size 32M x.img
matches 'not a streamfat public key file' "$SF_LAST_ERR" || fail "--encrypt-to junk: not said"
sf_err 2 log --source stdin --raw --encrypt-to k.pub --mkfs exfat --size 32M x.img
# 4 KiB blocks, 3 files: rotation re-keys; the frames' data is a known pattern
python3 - >frames.log <<'EOF'
for i in range(3000):
    print("(%d.%06d) can%d %03X#DEADBEEF%08X" % (1700000000 + i // 1000, i % 1000 * 1000,
                                                 i % 2, 0x100 + i % 64, i))
EOF
sf_ok log --source stdin --chunk 4K --split-size 32K --encrypt-to k.pub --mkfs exfat \
    --size 32M v.img <frames.log >/dev/null
mapfile -t logs < <(sf_ok ls v.img | grep -i '\.SFL$')
((${#logs[@]} >= 3)) || fail "expected rotation into 3 files or more, got ${#logs[@]}"
python3 -c 'import sys; sys.exit(b"\xde\xad\xbe\xef" in open("v.img", "rb").read())' ||
    fail "a frame's data is readable in the image"
matches -a 'can0' v.img || fail "the header block's channel names should stay readable"
# --config and --print-config know the option
printf '{"source": "gen:can", "encrypt-to": "k.pub", "max-records": 5}\n' >cfg.json
sf_ok log --config cfg.json --print-config c.img >pc.json
matches -E '"encrypt-to":[[:space:]]*"k.pub"' pc.json || { cat pc.json >&2; fail "--print-config lacks encrypt-to"; }
sf_ok log --config cfg.json --mkfs exfat --size 32M c.img >/dev/null
sf_ok export --key k.key c.img LOG00001.SFL >c.out
[[ $(wc -l <c.out) == 5 ]] || fail "--config's sealed log: $(wc -l <c.out) frames, not 5"

# AES-256-GCM (where this CPU has AES-NI: libsodium offers it only there)
sf_err 2 log --source gen:can --max-records 5 --encrypt-aead aes-256-gcm --mkfs exfat --size 32M x.img
sf_err 2 log --source gen:can --max-records 5 --encrypt-to k.pub --encrypt-aead rot13 --mkfs exfat --size 32M x.img
have_aes=0
matches -w aes /proc/cpuinfo && have_aes=1
if ((have_aes)); then
    sf_ok log --source stdin --chunk 4K --encrypt-to k.pub --encrypt-aead aes-256-gcm \
        --mkfs exfat --size 32M g.img <frames.log >/dev/null
    sf_ok cat g.img LOG00001.SFL >gcm.sfl
    [[ $(od -An -tu1 -j $((48 + 32 + 16)) -N1 gcm.sfl | tr -d ' ') == 2 ]] ||
        fail "--encrypt-aead aes-256-gcm: the CIPHER record does not name AEAD 2"
    sf_ok export --key k.key gcm.sfl >gcm.out
    cut -d' ' -f2- frames.log | diff -q - <(cut -d' ' -f2- gcm.out) >/dev/null ||
        fail "aes-256-gcm: frames differ from the input"
else
    echo "no AES-NI here: the aes-256-gcm case is not run" >&2
fi

log "fsck needs no key"
sf_ok fsck v.img >/dev/null

log "export without and with the key"
for f in "${logs[@]}"; do
    sf_ok cat v.img "$f" >"$f"
done
first=${logs[0]}
rc=0; "$SF" export "$first" >none.out 2>none.err || rc=$?
((rc == 1)) || fail "export without --key exited $rc"
[[ ! -s none.out ]] || fail "export without --key wrote frames"
[[ $(wc -l <none.err) == 1 ]] || { cat none.err >&2; fail "export without --key: not one line"; }
matches "sealed to key id $KEYID: give its secret key with --key FILE" none.err ||
    { cat none.err >&2; fail "export without --key: the line does not name key id $KEYID"; }
rc=0; "$SF" export --key other.key "$first" >other.out 2>other.err || rc=$?
((rc == 1)) && [[ ! -s other.out ]] || fail "export with another key: exit $rc or output"
[[ $(wc -l <other.err) == 1 ]] && matches "sealed to key id $KEYID, not to other.key" other.err ||
    { cat other.err >&2; fail "export with another key: not the one line"; }
sf_err 1 export --key k.pub "$first"
matches 'is a public key file' "$SF_LAST_ERR" || fail "--key k.pub: not said"
: >all.out
for f in "${logs[@]}"; do
    sf_ok export --key k.key "$f" >>all.out
done
cut -d' ' -f2- frames.log >want.txt
cut -d' ' -f2- all.out | diff -q - want.txt >/dev/null ||
    { cut -d' ' -f2- all.out | diff - want.txt | head >&2; fail "sealed logs: frames differ from the input"; }
sf_ok export --key k.key --all v.img outdir >/dev/null
[[ $(cat outdir/*.log | wc -l) == 3000 ]] || fail "export --all --key: not 3000 frames"

# check FILE WANT_VERDICT: export --key's verdict line (or clean, exit 0) and the reference
# reader's agree with WANT_VERDICT, frame for frame.
check() {
    local f=$1 want=$2 rc=0 line
    "$SF" export --key k.key "$f" >exp.out 2>exp.err || rc=$?
    has_sanitizer_report exp.err && { cat exp.err >&2; fail "$f: sanitizer report"; }
    line=$(grep -o 'damaged: .*' exp.err | tail -n1 || true)
    if [[ $want == clean ]]; then
        ((rc == 0)) && [[ -z $line ]] || { cat exp.err >&2; fail "$f: export not clean (exit $rc)"; }
    else
        ((rc == 1)) && [[ $line == "$want" ]] ||
            { cat exp.err >&2; fail "$f: export '$line' (exit $rc), expected '$want'"; }
    fi
    if ((have_nacl)); then
        rc=0
        timeout 300 "$PY" "$REF" "$f" ref k.key </dev/null || rc=$?
        ((rc <= 1)) || fail "$f: sfl_ref.py exited $rc"
        [[ $(cat ref.verdict) == "$want" ]] || fail "$f: reference verdict '$(cat ref.verdict)', expected '$want'"
        cmp -s exp.out ref.candump ||
            { diff ref.candump exp.out | head >&2; fail "$f: export and the reference reader differ"; }
    fi
}
frames_of() { wc -l <exp.out; }

log "the independent reader agrees"
if ((have_nacl)); then
    for f in "${logs[@]}"; do check "$f" clean; done
    "$PY" "$REF" "$first" ref </dev/null && fail "sfl_ref.py without the key: exit 0"
    [[ $(cat ref.verdict) == "sealed: key id $KEYID" ]] || fail "sfl_ref.py without the key: '$(cat ref.verdict)'"
else
    echo "no PyNaCl in $PY (scripts/pyenv.sh): the reference reader's part is not run" >&2
fi

if ((have_nacl && have_aes)) && "$PY" -c 'import cryptography' 2>/dev/null; then
    check gcm.sfl clean
fi

log "tampering"
# tamper.py IN OUT WHAT [ARG]: a changed copy, CRC made right again where it says so
cat >tamper.py <<'EOF'
import struct, sys
src, dst, what = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
B = struct.unpack_from("<I", d, 40)[0]
def crc32c(data, crc=0xFFFFFFFF):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc
def reseal(n):
    o = n * B
    used = struct.unpack_from("<I", d, o + 32)[0]
    c = crc32c(d[o + 48:o + 48 + used], crc32c(d[o:o + 44])) ^ 0xFFFFFFFF
    struct.pack_into("<I", d, o + 44, c)
if what == "flip":          # a ciphertext byte of block 2
    d[2 * B + 48 + 100] ^= 0x10
    reseal(2)
elif what == "swap":        # blocks 2 and 3
    d[2 * B:3 * B], d[3 * B:4 * B] = d[3 * B:4 * B], d[2 * B:3 * B]
elif what == "move":        # block 3's bytes at block 2, seq made 2
    d[2 * B:3 * B] = d[3 * B:4 * B]
    struct.pack_into("<Q", d, 2 * B + 16, 2)
    reseal(2)
elif what == "foreign":     # block 2 of another file, with this file's id
    other = open(sys.argv[4], "rb").read()
    d[2 * B:3 * B] = other[2 * B:3 * B]
    d[2 * B + 8:2 * B + 16] = d[8:16]
    reseal(2)
elif what == "cut-inside":  # the file ends inside block 2's stored bytes
    del d[2 * B + 1000:]
elif what == "cut-boundary":
    del d[3 * B:]
elif what == "key":         # the header's sealed key replaced by another file's
    other = open(sys.argv[4], "rb").read()
    o = 48 + 32 + 16 + 16    # header, its 32 bytes, the CIPHER record's header, aead + key id
    d[o:o + 80] = other[o:o + 80]
    reseal(0)
open(dst, "wb").write(d)
EOF
second=${logs[1]}
check "$first" clean
total=$(frames_of)
python3 tamper.py "$first" t_flip.sfl flip
check t_flip.sfl "damaged: unauthentic 1"
(( $(frames_of) < total && $(frames_of) > 0 )) || fail "flip: the rest of the file was not read"
python3 tamper.py "$first" t_swap.sfl swap
check t_swap.sfl "damaged: out-of-sequence 2"
python3 tamper.py "$first" t_move.sfl move
check t_move.sfl "damaged: unauthentic 1"
python3 tamper.py "$first" t_foreign.sfl foreign "$second"
check t_foreign.sfl "damaged: unauthentic 1"
python3 tamper.py "$first" t_cut.sfl cut-inside
check t_cut.sfl "damaged: invalid 1, truncated 1"
python3 tamper.py "$first" t_cutb.sfl cut-boundary
check t_cutb.sfl clean
(( $(frames_of) < total )) || fail "cut at a block boundary: not fewer frames"
python3 tamper.py "$first" t_key.sfl key "$second"
nblk=$(( $(stat -c %s "$first") / 4096 - 1 ))
check t_key.sfl "damaged: unauthentic $nblk"
[[ $(frames_of) == 0 ]] || fail "replaced key: frames exported"
echo "sealed logs: ${#logs[@]} files, tampering detected" >&2
