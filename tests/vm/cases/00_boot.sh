# The machine is what the other cases expect: the cards, vcan, the CAN modules, the tools.
for n in can0 can1 can2 vcan0; do
    [ -e /sys/class/net/$n ] || fail "no $n"
done
for m in can_raw can_isotp can_j1939 can_bcm can_gw kvaser_pci vcan; do
    grep -q "^$m " /proc/modules || fail "module $m not loaded"
done
streamfat --version >/dev/null || fail "streamfat does not run"
candump -L can1 > c1 & cp=$!
wait_listeners can1 1
cansend can0 123#11223344
wait_until 30 grep -q '123#11223344' c1
kill $cp
info "kernel $(uname -r)"
