# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that work on either kernel base. Checks
# FLOWJIT_BASE (6.1, the default, or 6.12) and sets
#
#   base   6.1 or 6.12
#   sfx    what the base's build directories and files carry after their
#          names: "" on 6.1 ($B/linux, $B/guest, $B/initramfs.cpio.gz),
#          -6.12 on 6.12 ($B/linux-6.12, $B/guest-6.12, ...)
#
# shellcheck shell=bash
base=${FLOWJIT_BASE:-6.1}
case $base in
6.1) sfx= ;;
6.12) sfx=-6.12 ;;
*)
	echo "${0##*/}: FLOWJIT_BASE is 6.1 or 6.12, not '$base'" >&2
	exit 1
	;;
esac
