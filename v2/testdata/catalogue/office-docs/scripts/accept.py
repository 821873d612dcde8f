"""Accept every tracked change (a stand-in)."""
import sys

print("accepted", *sys.argv[1:])
