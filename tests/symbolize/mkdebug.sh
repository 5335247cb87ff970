#!/bin/sh
# SPDX-License-Identifier: MIT
# mkdebug.sh IN OUT.so OUT.debug: split IN's DWARF into OUT.debug and write a
# stripped OUT.so that points to it with .gnu_debuglink (as distributions
# ship -dbg packages).
set -eu
objcopy --only-keep-debug "$1" "$3"
objcopy --strip-debug --add-gnu-debuglink="$3" "$1" "$2"
