"""Print stdin upper-cased, then the arguments."""
import sys

data = sys.stdin.read()
print(data.upper(), end="")
print("args:", " | ".join(sys.argv[1:]))
