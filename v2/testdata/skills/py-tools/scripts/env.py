"""Print the named environment variables."""
import os
import sys

for name in sys.argv[1:]:
    print(f"{name}={os.environ.get(name, '<unset>')}")
