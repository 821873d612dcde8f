# Nests argv[1] folders, one in the other (mkdir then chdir, so no path is
# ever longer than a name). The collection walk stops at 64 levels, but the
# workspace's removal (os.RemoveAll, in the agent) holds an open descriptor
# for every level it descends: a tree deeper than the agent's descriptor
# limit fails with EMFILE, is left on disk, and for as long as the removal
# runs every other open of the agent fails too.
import os, sys

n = int(sys.argv[1])
for _ in range(n):
    os.mkdir("d")
    os.chdir("d")
print("depth", n)
