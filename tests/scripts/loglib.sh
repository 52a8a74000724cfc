# Helpers shared by the t_log_*.sh tests (sourced after lib.sh).

# log_json OUT ARGS...: run `$SF log --json ARGS`, stdout to OUT; returns the exit status.
log_json() {
    local out=$1 rc=0
    shift
    sf log --json "$@" >"$out" || rc=$?
    return "$rc"
}
# jget FILE KEY: a value from a JSON object file.
jget() {
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(v)' "$1" "$2"
}
# jcheck FILE PYEXPR: evaluate PYEXPR with the object as j; fail if false.
jcheck() {
    python3 - "$1" "$2" <<'PY' || { cat "$1" >&2; fail "JSON check failed: $2"; }
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
# decode IMG ARGS...: tests/helpers/decode_check, its JSON summary to $WORK/dec.json.
decode() {
    local img=$1 exe rc=0
    shift
    exe=$(helper decode_check)
    timeout 300 "$exe" "$img" "$@" >"$WORK/dec.json" 2>"$WORK/dec.err" || rc=$?
    [[ -s $WORK/dec.err ]] && cat "$WORK/dec.err" >&2
    has_sanitizer_report "$WORK/dec.err" && fail "sanitizer report from decode_check"
    ((rc == 0)) || { cat "$WORK/dec.json" >&2; fail "decode_check $img $* exited $rc"; }
    return 0
}
have_export() {
    "$SF" export --help >/dev/null 2>&1
}
# udp_wait_port ERRFILE PID: wait until a `log --source udp:0` run (PID, its stderr going to
# ERRFILE) has bound its socket and announced the port ("udp: listening on HOST:PORT");
# sets UDP_PORT. Fails if the run ends first or 30 s pass: nothing is sent blindly.
udp_wait_port() {
    local err=$1 pid=$2 i
    UDP_PORT=
    for ((i = 0; i < 600; i++)); do
        # (|| true: the background run may not have created ERRFILE yet; sed then fails)
        UDP_PORT=$(sed -n 's/.*udp: listening on [0-9.]*:\([0-9][0-9]*\)$/\1/p' "$err" 2>/dev/null || true)
        [[ -n $UDP_PORT ]] && return 0
        if ! kill -0 "$pid" 2>/dev/null; then
            cat "$err" >&2
            fail "the udp: log ended before it announced its port"
        fi
        sleep 0.05
    done
    cat "$err" >&2
    fail "the udp: log announced no port within 30 s"
}
