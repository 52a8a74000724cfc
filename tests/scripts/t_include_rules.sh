#!/usr/bin/env bash
# The include rules of the core (docs/DESIGN.md, "The map"; scripts/check_includes.py):
#   1. the tree obeys them: check_includes.py exits 0 on it;
#   2. no POSIX/Linux/stdio header is included anywhere under src/ or by a core public
#      header (a plain grep, independent of the script);
#   3. the script fails on purpose: in a copy of src/, include/ and host/ (with a stand-in
#      cli/cli.h and drivers/sd/sd.h), each case adds one #include to one core (or driver)
#      file and the script must exit 1 with exactly one violation, naming that file, the
#      added line and the rule: a CLI header, host headers (by path and the host-only public ones), a
#      driver header, <stdio.h>, <unistd.h>, upward includes (fs -> check, stream -> log, tiny -> fs,
#      proto -> fs and log, util -> proto,
#      util -> fs, a public header upward), an include that names no file, and an exception
#      that matches nothing any more; a driver including the CLI, a POSIX header or a
#      private core header; host/ including a private core header, the CLI or a driver
#      (POSIX is fine there); an example including a private core header, a host-only
#      public header, host/, the CLI, another example's file (also from examples/common/) or a
#      file that does not exist; examples/common/ itself is open to every example.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
script=$SF_SRC/scripts/check_includes.py

# ---- 1. the tree --------------------------------------------------------------------------
out=$(timeout 60 python3 "$script" "$SF_SRC" </dev/null 2>&1) || { echo "$out"; fail "the tree breaks the include rules"; }
echo "$out"

# ---- 2. grep: no host header under the core folders ----------------------------------------
host_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*<(unistd|fcntl|pthread|signal|errno|time|stdio|stdlib|liburing|poll|sched|semaphore|dirent|termios|dlfcn|malloc|setjmp|threads|sys/[a-z_/]+|linux/[a-z_/]+|asm/[a-z_/]+|arpa/[a-z_/]+|netinet/[a-z_/]+|net/[a-z_/]+)\.h>'
core_headers=()
for h in "$SF_SRC"/include/streamfat/*.h; do
    case ${h##*/} in filebd.h | aiobd.h | simbd.h) ;; *) core_headers+=("$h") ;; esac
done
if hits=$(grep -rnE "$host_re" "$SF_SRC/src" "${core_headers[@]}"); then
    echo "$hits"
    fail "POSIX/Linux headers included under the core folders (above)"
fi
# ... and the host folder has them (so the grep pattern does match real includes)
grep -rqE "$host_re" "$SF_SRC/host" || fail "the grep pattern finds nothing even in host/"
log "grep: no POSIX/Linux header under src/ or in the core public headers"

# ---- 3. the check fails on purpose ----------------------------------------------------------
tree=$WORK/tree
mkdir -p "$tree"
cp -r "$SF_SRC/src" "$SF_SRC/include" "$SF_SRC/host" "$SF_SRC/drivers" "$SF_SRC/examples" "$tree/"
mkdir -p "$tree/cli" "$tree/drivers/sd"
echo '/* stand-in CLI header */' >"$tree/cli/cli.h"
echo '/* stand-in driver header */' >"$tree/drivers/sd/sd.h"
timeout 60 python3 "$script" "$tree" </dev/null >"$WORK/clean.out" 2>&1 ||
    { cat "$WORK/clean.out"; fail "the copied tree does not pass before any change"; }

ncase=0
# case FILE RULE LINE-TO-ADD: append LINE to FILE (relative to the tree), expect rule RULE
# reported at FILE:<that line>, then restore the file.
case_add() {
    local file=$1 rule=$2 add=$3 n out rc=0
    cp "$tree/$file" "$WORK/orig"
    n=$(($(wc -l <"$tree/$file") + 1))
    printf '%s\n' "$add" >>"$tree/$file"
    expect_one "$file" "$n" "$rule" "$add"
    cp "$WORK/orig" "$tree/$file"
}
# expect_one FILE LINE RULE WHAT: the script must exit 1 with exactly one violation,
# FILE:LINE: rule RULE
expect_one() {
    local file=$1 n=$2 rule=$3 what=$4 rc=0
    timeout 60 python3 "$script" "$tree" </dev/null >"$WORK/out" 2>&1 || rc=$?
    ncase=$((ncase + 1))
    if ((rc != 1)); then
        cat "$WORK/out"
        fail "case '$what' in $file: the script exited $rc, not 1"
    fi
    if ! grep -q "^$file:$n: rule $rule: " "$WORK/out"; then
        cat "$WORK/out"
        fail "case '$what' in $file: no '$file:$n: rule $rule:' message"
    fi
    if (($(grep -c ': rule ' "$WORK/out") != 1)); then
        cat "$WORK/out"
        fail "case '$what' in $file: more than the one violation"
    fi
    echo "rejected as expected: $(grep ': rule ' "$WORK/out")"
}

case_add src/fs/vol.c cli '#include "../../cli/cli.h"'
case_add src/log/writer.c cli '#include "../../cli/cli.h"'
case_add src/fs/vol.c host '#include "../../host/bdev/aiobd_int.h"'
case_add src/bdev/ram.c host '#include "streamfat/filebd.h"'
case_add include/streamfat/stream.h host '#include "simbd.h"'
case_add src/bdev/bdev.c driver '#include "../../drivers/sd/sd.h"'
case_add src/util/utf.c libc '#include <stdio.h>'
case_add src/fs/dir.c libc '#include <unistd.h>'
case_add src/stream/stream.c libc '#include <pthread.h>'
case_add src/check/check.c libc '#include <sys/stat.h>'
case_add src/fs/vol.c layer '#include "check/check_int.h"'
case_add src/stream/stream.c layer '#include "streamfat/log.h"'
case_add src/util/le.h layer '#include "fs/fs.h"'
case_add src/bdev/ram.c layer '#include "streamfat/vol.h"'
case_add include/streamfat/vol.h layer '#include "stream.h"'
case_add src/log/rec.c layer '#include "log_impl.h"'
case_add src/tiny/tiny_fat.c layer '#include "fs/fs.h"'   # the tiny logger never reaches the volume layer
case_add src/proto/isotp.c layer '#include "streamfat/vol.h"'   # the reassembly: util and rec only
case_add src/proto/j1939.c layer '#include "log/log_impl.h"'
case_add src/proto/fast.c libc '#include <stdlib.h>'
case_add src/util/le.h layer '#include "streamfat/proto.h"'   # nothing below reaches it
case_add src/fs/vol.c resolve '#include "fs/no_such_header.h"'
case_add drivers/sd/sd.h cli '#include "../../cli/cli.h"'
case_add drivers/sd/sd.h libc '#include <unistd.h>'
case_add drivers/sd/sd.h layer '#include "fs/fs.h"'
case_add host/bdev/sim.c private '#include "fs/fs.h"'
case_add host/bdev/file.c private '#include "../../src/util/le.h"'
case_add host/bdev/uring.c cli '#include "../../cli/cli.h"'
case_add host/bdev/file.c driver '#include "../../drivers/sd/sd.h"'
case_add host/bdev/aiobd_int.h resolve '#include "no_such_header.h"'
case_add examples/baremetal/main.c private '#include "fs/fs.h"'
case_add examples/baremetal/main.c host '#include "streamfat/filebd.h"'
case_add examples/nvme/main.c host '#include "../../host/bdev/aiobd_int.h"'
case_add examples/nvme/board.c cli '#include "../../cli/cli.h"'
case_add examples/nvme/main.c example '#include "../baremetal/board.h"'
case_add examples/baremetal/main.c example '#include "../sd-spi/board.h"'
case_add examples/common/report.c example '#include "../nvme/board.h"'   # common is no back door
case_add examples/baremetal/board.h resolve '#include "no_such_header.h"'
# ... while POSIX in host/, and drivers and libc headers in an example, are fine
cp "$tree/host/bdev/sim.c" "$WORK/orig"
printf '#include <pthread.h>\n#include <sys/stat.h>\n#include "streamfat/aiobd.h"\n' >>"$tree/host/bdev/sim.c"
cp "$tree/examples/nvme/main.c" "$WORK/orig2"
printf '#include <stdio.h>\n#include "sd_spi.h"\n#include "streamfat/check.h"\n#include "report.h"\n#include "../common/semihost.h"\n' >>"$tree/examples/nvme/main.c"
timeout 60 python3 "$script" "$tree" </dev/null >"$WORK/out" 2>&1 ||
    { cat "$WORK/out"; fail "POSIX in host/, or a driver or examples/common/ in an example, was refused"; }
cp "$WORK/orig" "$tree/host/bdev/sim.c"
cp "$WORK/orig2" "$tree/examples/nvme/main.c"

# an exception that no longer matches (log_struct.h without its stdatomic.h) is reported too
cp "$tree/include/streamfat/log_struct.h" "$WORK/orig"
sed -i '/#include <stdatomic.h>/d' "$tree/include/streamfat/log_struct.h"
expect_one include/streamfat/log_struct.h 1 stale-exception 'dropped exception'
cp "$WORK/orig" "$tree/include/streamfat/log_struct.h"

log "the include check rejected all $ncase deliberate violations, each with file, line and rule"
