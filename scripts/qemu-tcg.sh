#!/usr/bin/env bash
# A QEMU that vmtest can call where /dev/kvm exists but KVM does not work
# (vmtest then still passes -enable-kvm and -cpu host): drops both and
# runs under TCG with the most capable emulated CPU instead.
#   vmtest -q scripts/qemu-tcg.sh -k bzImage CMD
#   qemu_command = "scripts/qemu-tcg.sh" in vmtest.toml
# QEMU_SYSTEM picks the emulator (default qemu-system-x86_64).
args=()
while [ $# -gt 0 ]; do
  case $1 in
    -enable-kvm|--enable-kvm) ;;
    -cpu) shift; [ "$1" = host ] && args+=(-cpu max) || args+=(-cpu "$1") ;;
    -accel) shift; [ "${1%%,*}" = kvm ] || args+=(-accel "$1") ;;
    *) args+=("$1") ;;
  esac
  shift
done
exec "${QEMU_SYSTEM:-qemu-system-x86_64}" -accel tcg "${args[@]}"
