#!/bin/sh
# check_fault.sh QEMU IMAGE: runs the lx106-sim image that makes an unaligned load and requires
# the board's fault report: QEMU's exit status 70, EXCCAUSE 0x09 (LoadStoreAlignment) on its
# standard error, nothing of what follows the load on its output.
qemu=$1 image=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
timeout 20 "$qemu" -M sim -cpu lx106 -semihosting -display none -monitor none -serial none \
  -kernel "$image" </dev/null >"$out" 2>"$err"
rc=$?
cat "$err"
[ "$rc" -eq 70 ] || { echo "expected exit status 70 (the board's fault report), got $rc"; exit 1; }
grep -q "fault: EXCCAUSE 0x09 at EPC1 0x4020" "$err" || { echo "no LoadStoreAlignment report"; exit 1; }
! grep -q unreached "$out" || { echo "the load did not fault"; exit 1; }
echo "the unaligned load faulted and was reported"
