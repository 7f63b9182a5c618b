#!/usr/bin/env python3
# Swaps two paths atomically, again and again, with renameat2(RENAME_EXCHANGE):
# a folder inside a workspace and a symlink to a folder outside it trade places
# thousands of times a second, the race a path-checking ctx.fs must survive.
# Usage: rename-exchange-racer.py A B SECONDS. Prints "ready" once it swaps, and
# "swaps N" when done (so the test knows the race really ran).
import ctypes
import os
import sys
import time

RENAME_EXCHANGE = 2
AT_FDCWD = -100

libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]

a, b, seconds = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), float(sys.argv[3])
swaps = 0
deadline = time.monotonic() + seconds
print("ready", flush=True)
while time.monotonic() < deadline:
    if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2 failed: errno %d" % ctypes.get_errno())
    swaps += 1
# Leave them as they started (an even number of swaps).
if swaps % 2 == 1:
    renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    swaps += 1
print("swaps %d" % swaps, flush=True)
