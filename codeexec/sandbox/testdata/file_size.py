"""Attack: write one file until something stops us.

argv[1]: MiB to stop at. Prints "wrote N bytes then ERROR"; the file is
big.bin in the skill root, so it comes back as an output file.
"""
import errno
import sys

most, n, err = int(sys.argv[1]) << 20, 0, "nothing"
chunk = b"x" * (64 << 10)
with open("big.bin", "wb", buffering=0) as f:
    try:
        while n < most:
            n += f.write(chunk)
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
print("wrote", n, "bytes then", err)
