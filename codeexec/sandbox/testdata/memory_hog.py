"""Attack: allocate memory until something stops us.

argv[1]: MiB per allocation; argv[2]: MiB to stop at (keeps a broken
sandbox from eating the machine). Prints what happened.
"""
import sys

step, most = int(sys.argv[1]), int(sys.argv[2])
held, total = [], 0
try:
    while total < most:
        held.append(bytearray(step << 20))
        total += step
    print("allocated", total, "MiB: nothing stopped me")
except MemoryError:
    print("MemoryError after", total, "MiB")
