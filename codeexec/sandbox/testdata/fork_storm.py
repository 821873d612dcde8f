"""Attack: fork until something stops us (each child sleeps 30 s).

argv[1]: how many forks to attempt at most (keeps a broken sandbox from
melting the machine). Prints "forked N then ERROR".
"""
import errno
import os
import sys
import time

n, most, err = 0, int(sys.argv[1]), "nothing"
while n < most:
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print("forked", n, "then", err, flush=True)
