#!/usr/bin/env bash
# Sealed and compressed logs together (issue 29; docs/FORMAT.md "Compressed record blocks"
# and "Sealed files"): log --compress --encrypt-to packs the records into kind-3 blocks and
# then seals each stored payload (its AD holds the final kind and `used`).
#   - the file sets features bits 32 and 33, its record blocks are kind 3, no frame's data
#     is readable in the image; fsck needs no key;
#   - export --key equals the plain log's export, frame for frame; the independent reader
#     (sfl_ref.py: PyNaCl, then its own decompressor) agrees with export;
#   - tampering with a compressed+sealed block (a flipped byte, a block moved to another
#     place) is counted as unauthentic (not malformed: the AEAD check comes first), the
#     rest of the file reads;
#   - without the key, or with another key: the one clear line naming the key id, exit 1.
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
have_ref=0
[[ -x $PY ]] && "$PY" -c 'import nacl' 2>/dev/null && have_ref=1
cd "$WORK"

sf_ok keygen k >out.txt
sf_ok keygen other >/dev/null
KEYID=$(sed -n 's/.*key id \([0-9a-f]*\)$/\1/p' out.txt)

# 20,000 frames on 64 ids, data changing a little from frame to frame: it packs well
python3 - >frames.log <<'EOF'
for i in range(20000):
    print("(%d.%06d) can%d %03X#DEADBEEF%08X" % (1700000000 + i // 1000, i % 1000 * 1000,
                                                 i % 2, 0x100 + i % 64, i // 64))
EOF
sf_ok log --source stdin --chunk 4K --mkfs exfat --size 32M p.img <frames.log >/dev/null
sf_ok log --source stdin --chunk 4K --compress --encrypt-to k.pub --mkfs exfat --size 32M \
    cs.img <frames.log >/dev/null
sf_ok cat p.img LOG00001.SFL >p.sfl
sf_ok cat cs.img LOG00001.SFL >cs.sfl
python3 - cs.sfl <<'EOF' || fail "cs.sfl: not a compressed and sealed file"
import struct, sys
d = open(sys.argv[1], "rb").read()
B = struct.unpack_from("<I", d, 40)[0]
feat = struct.unpack_from("<Q", d, 48 + 24)[0]
kinds = [struct.unpack_from("<H", d, o + 6)[0] for o in range(B, len(d) - B + 1, B)
         if struct.unpack_from("<I", d, o)[0] == 0x424C4653]
print("features %#x, record block kinds %s" % (feat, sorted(set(kinds))), file=sys.stderr)
sys.exit(not (feat >> 32 & 3 == 3 and 3 in kinds and len(kinds) >= 4))
EOF
python3 -c 'import sys; sys.exit(b"\xde\xad\xbe\xef" in open("cs.img", "rb").read())' ||
    fail "a frame's data is readable in the image"
(( $(stat -c %s cs.sfl) * 2 < $(stat -c %s p.sfl) )) ||
    fail "compressed+sealed ($(stat -c %s cs.sfl) bytes) not smaller than half the plain log"
sf_ok fsck cs.img >/dev/null

log "export with the key equals the plain log's"
sf_ok export p.sfl >plain.out
[[ $(wc -l <plain.out) == 20000 ]] || fail "plain log: $(wc -l <plain.out) frames"
sf_ok export --key k.key cs.sfl >cs.out
cmp -s plain.out cs.out || { diff plain.out cs.out | head >&2; fail "compressed+sealed export differs from the plain log's"; }

log "without the key, with another"
rc=0; "$SF" export cs.sfl >none.out 2>none.err || rc=$?
((rc == 1)) && [[ ! -s none.out ]] || fail "export without --key: exit $rc or output"
[[ $(wc -l <none.err) == 1 ]] && matches "sealed to key id $KEYID" none.err ||
    { cat none.err >&2; fail "export without --key: not the one line naming $KEYID"; }
rc=0; "$SF" export --key other.key cs.sfl >other.out 2>other.err || rc=$?
((rc == 1)) && [[ ! -s other.out ]] || fail "export with another key: exit $rc or output"
[[ $(wc -l <other.err) == 1 ]] && matches "sealed to key id $KEYID, not to other.key" other.err ||
    { cat other.err >&2; fail "export with another key: not the one line"; }

# check FILE WANT_VERDICT: export --key's verdict (or clean) and the reference reader's agree
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
    if ((have_ref)); then
        rc=0
        timeout 300 "$PY" "$REF" "$f" ref k.key </dev/null || rc=$?
        ((rc <= 1)) || fail "$f: sfl_ref.py exited $rc"
        [[ $(cat ref.verdict) == "$want" ]] || fail "$f: reference verdict '$(cat ref.verdict)', expected '$want'"
        cmp -s exp.out ref.candump ||
            { diff ref.candump exp.out | head >&2; fail "$f: export and the reference reader differ"; }
    fi
}

log "the independent reader agrees"
if ((have_ref)); then
    check cs.sfl clean
else
    echo "no PyNaCl in $PY (scripts/pyenv.sh): the reference reader's part is not run" >&2
fi

log "tampering"
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
assert struct.unpack_from("<H", d, 2 * B + 6)[0] == 3, "block 2 is not compressed"
if what == "flip":          # a ciphertext byte of compressed block 2
    d[2 * B + 48 + 100] ^= 0x10
    reseal(2)
elif what == "move":        # block 3's bytes at block 2, seq made 2
    d[2 * B:3 * B] = d[3 * B:4 * B]
    struct.pack_into("<Q", d, 2 * B + 16, 2)
    reseal(2)
open(dst, "wb").write(d)
EOF
check cs.sfl clean
total=$(wc -l <exp.out)
for t in flip move; do
    python3 tamper.py cs.sfl "t_$t.sfl" "$t"
    check "t_$t.sfl" "damaged: unauthentic 1"
    n=$(wc -l <exp.out)
    (( n < total && n > total / 2 )) || fail "$t: the rest of the file was not read ($n of $total)"
done
echo "compressed+sealed: $(stat -c %s cs.sfl) bytes (plain $(stat -c %s p.sfl)), tampering counted" >&2
