# The live-bus examples of README.md and docs/LOG.md run as written (issue 27: "docs/LOG.md
# ... with examples that the README test runs in the VM"); t_readme on the host skips them,
# having no bus. mkimage.sh extracts them (tests/vm/doc_examples.py: every `streamfat log
# --source can:` command, its target replaced by d.img, a volume made first). Each runs on
# the kvaser cards while can2 puts traffic on the bus: a 7DF frame (the README's trigger),
# a 3A0 frame with speed 10.24 (LOG.md's --start 'speed > 5'), random frames, a marker.
# Where the example sends or polls, the logger's first 7DF request must reach can2 first.
# Then SIGINT: the example must exit 0 with no sanitizer report and leave a log that
# exports cleanly with at least one frame.
[ -s /vm/doc_examples.txt ] || fail "no examples extracted"
n=0
while IFS= read -r cmd; do
    n=$((n + 1))
    info "[$n] $cmd"
    rm -f d.img
    streamfat mkfs -q -t exfat -s 64M d.img > mkfs.out 2>&1 || { cat mkfs.out; fail "mkfs failed"; }
    candump_bg ref.log can2
    wait_listeners can2 1
    before=$(awk '$1 == "can0" { n++ } END { print n + 0 }' /proc/net/can/rcvlist_all)
    # an example that seals (--encrypt-to NAME.pub) follows `streamfat keygen NAME` in the
    # docs: make the key pair as they do; its log is exported with NAME.key
    key=""
    pub=$(echo "$cmd" | sed -n 's/.*--encrypt-to \([^ ]*\)\.pub.*/\1/p')
    if [ -n "$pub" ]; then
        rm -f "$pub.pub" "$pub.key"
        streamfat keygen "$pub" > keygen.out 2>&1 || { cat keygen.out; fail "[$n] keygen $pub failed"; }
        key="--key $pub.key"
    fi
    sh -c "exec $cmd" > ex.out 2> ex.err < /dev/null &
    EP=$!
    # listening on can0, or gone (an example that refuses to start fails below with its words)
    wait_until 60 sh -c "! kill -0 $EP 2>/dev/null || [ \$(awk '\$1 == \"can0\" { n++ } END { print n + 0 }' /proc/net/can/rcvlist_all) -gt $before ]"
    kill -0 "$EP" 2>/dev/null || { rc=0; wait "$EP" || rc=$?; cat ex.out ex.err; fail "[$n] exited $rc at its start: $cmd"; }
    cansend can2 7DF#01AA
    cansend can2 3A0#0400000000000000
    cangen can2 -n 100 -g 1 -p 10 -L 8
    case $cmd in
    *--send*|*--poll*)
        wait_until 60 sh -c "awk '\$2 == \"can2\" && \$3 ~ /^7DF#/ && \$3 != \"7DF#01AA\" { ok = 1 } END { exit !ok }' ref.log" ;;
    esac
    marker can2 7C2
    wait_seen ref.log can2 7C2
    kill -INT "$EP" 2>/dev/null
    rc=0
    wait "$EP" || rc=$?
    kill "$CP" 2>/dev/null
    wait "$CP" 2>/dev/null
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' ex.err; then
        cat ex.err
        fail "[$n] sanitizer report"
    fi
    [ "$rc" = 0 ] || { cat ex.out ex.err; fail "[$n] exited $rc: $cmd"; }
    streamfat export $key d.img LOG00001.SFL > got.log 2> export.err ||
        { cat export.err; streamfat ls d.img; fail "[$n] its log does not export cleanly"; }
    frames=$(grep -c . got.log)
    [ "$frames" -ge 1 ] || fail "[$n] no frame logged"
    info "[$n] exit 0, $frames frames logged"
done < /vm/doc_examples.txt
[ "$n" -ge 4 ] || fail "only $n examples"
