# Fills one folder with argv[1] entries with names of 250 bytes: hard links
# (60000 to a file, under ext4's limit), so the disk holds only the folder
# itself (about 260 bytes an entry). The collection walk stops after
# 100,000 entries, but it first reads every name of a folder into memory
# and sorts them, so the agent's heap grows with the folder, past any
# limit of the walk: a few seconds of a script cost the agent hundreds of
# MiB, for each run at the same time.
import os, sys

n = int(sys.argv[1])
os.mkdir("d")
pad = "x" * 240
for i in range(n):
    if i % 60000 == 0:
        src = "d/src%d" % i
        open(src, "w").close()
    os.link(src, "d/%s%09d" % (pad, i))
print("made", n)
