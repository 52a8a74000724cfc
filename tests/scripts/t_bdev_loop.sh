# The file device on real block devices (loop devices): geometry from a 4096-byte-sector
# device, sector size overrides, O_DIRECT alignment, and the exclusive open: refused with
# SF_EBUSY while the device is mounted (exFAT by the kernel driver or exfat-fuse, whose
# fuseblk mount claims the device), allowed again after umount.
#
# Needs root and losetup; skips (77) without them.
set -u

fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v losetup >/dev/null || { echo "skip: no losetup"; exit 77; }

tmp=$(mktemp -d) || exit 1
loops=()
mnt=""
cleanup() {
    if [ -n "$mnt" ] && mountpoint -q "$mnt" 2>/dev/null; then
        umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
    fi
    [ -n "${holder:-}" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
    for l in "${loops[@]}"; do
        losetup -d "$l" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The helper comes from the build; build it here if this is run by hand.
probe="${SF_TESTS_BIN:-}/bdev_probe"
if [ ! -x "$probe" ]; then
    src=${SF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
    probe="$tmp/bdev_probe"
    cc -std=c11 -O1 -D_GNU_SOURCE -I"$src/include" -I"$src/src" \
        "$src/tests/helpers/bdev_probe.c" "$src"/src/bdev/*.c "$src"/host/bdev/*.c -o "$probe" || fail "cannot build bdev_probe"
fi

expect() {  # expect WANT PROBE-ARGS...: the probe's output line must contain WANT
    local want=$1; shift
    local out
    out=$("$probe" "$@" 2>&1)
    case "$out" in
        *"$want"*) echo "ok: bdev_probe $* -> $out" ;;
        *) fail "bdev_probe $*: want '$want', got '$out'" ;;
    esac
}

img="$tmp/disk.img"
truncate -s 64M "$img" || fail "truncate"
dev4k=$(losetup -f --show -b 4096 "$img" 2>/dev/null) || { echo "skip: cannot create a loop device"; exit 77; }
loops+=("$dev4k")
dev512=$(losetup -f --show "$img") || fail "losetup (512)"
loops+=("$dev512")

# Geometry
expect "sector_size=4096 sector_count=16384 " "$dev4k"
expect "blockdev=1" "$dev4k"
expect "mem_align=1 " "$dev4k"
expect "SF_EINVAL" "$dev4k" 512                    # smaller than the logical sector
expect "sector_size=4096 sector_count=16384 align_sectors=" "$dev4k" 4096 direct
expect "mem_align=4096 " "$dev4k" direct
expect "sector_size=512 sector_count=131072 " "$dev512"
expect "sector_size=4096 sector_count=16384 " "$dev512" 4096
expect "sector_size=4096 sector_count=16384 " "$img" 4096
expect "blockdev=0" "$img"
expect "SF_ENOENT" "$tmp/missing"

# align_sectors agrees with what the kernel reports
ioopt=$(blockdev --getioopt "$dev4k" 2>/dev/null || echo 0)
iomin=$(blockdev --getiomin "$dev4k" 2>/dev/null || echo 0)
if [ "$ioopt" -ge 4096 ] && [ $((ioopt % 4096)) = 0 ]; then want=$((ioopt / 4096))
elif [ "$iomin" -ge 4096 ] && [ $((iomin % 4096)) = 0 ]; then want=$((iomin / 4096))
else want=1; fi
expect "align_sectors=$want " "$dev4k"

# Exclusive open against a mounted file system
timeout 120 mkfs.exfat "$dev4k" </dev/null >"$tmp/mkfs.log" 2>&1 || { cat "$tmp/mkfs.log"; fail "mkfs.exfat"; }
mnt="$tmp/mnt"
mkdir "$mnt"
mounted=0
if grep -qw exfat /proc/filesystems && timeout 30 mount -t exfat "$dev4k" "$mnt" </dev/null 2>/dev/null; then
    mounted=1; echo "mounted with the kernel exfat driver"
elif command -v mount.exfat-fuse >/dev/null && timeout 30 mount.exfat-fuse "$dev4k" "$mnt" </dev/null >/dev/null 2>&1; then
    mounted=1; echo "mounted with exfat-fuse"
fi

if [ "$mounted" = 1 ]; then
    mountpoint -q "$mnt" || fail "mount reported success but $mnt is not a mount point"
    echo hello >"$mnt/f.txt" || fail "write through the mount"
    expect "SF_EBUSY" "$dev4k"
    expect "SF_EBUSY" "$dev4k" rdonly              # O_EXCL applies to read-only opens too
    umount "$mnt" || fail "umount"
    # a FUSE daemon may take a moment to let go of the device
    for _ in $(seq 50); do
        "$probe" "$dev4k" >/dev/null 2>&1 && break
        sleep 0.1
    done
    expect "sector_size=4096 sector_count=16384 " "$dev4k"
else
    # No exFAT mount possible here: hold the device with another exclusive opener instead.
    command -v python3 >/dev/null || fail "neither an exFAT mount nor python3 to hold the device"
    python3 -c 'import os,sys,time; fd=os.open(sys.argv[1], os.O_RDONLY|os.O_EXCL); print("held", flush=True); time.sleep(60)' \
        "$dev4k" >"$tmp/held" &
    holder=$!
    for _ in $(seq 50); do grep -q held "$tmp/held" && break; sleep 0.1; done
    grep -q held "$tmp/held" || fail "could not hold $dev4k exclusively"
    echo "no exFAT mount available: device held by an O_EXCL opener"
    expect "SF_EBUSY" "$dev4k"
    kill "$holder"; wait "$holder" 2>/dev/null; holder=""
    expect "sector_size=4096 sector_count=16384 " "$dev4k"
fi

# The other loop device on the same image is a different block device: not claimed.
expect "sector_size=512 " "$dev512"

echo "PASS"
exit 0
