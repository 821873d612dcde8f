"""Deletes the slides the slide list no longer references: python scripts/clean.py DIR."""
import os
import sys

from slides import SLIDES, present, referenced


def main():
    root = sys.argv[1]
    keep = referenced(root)
    for name in present(root):
        if name not in keep:
            os.remove(os.path.join(root, SLIDES, name))
            print(f"removed ppt/slides/{name}")


if __name__ == "__main__":
    main()
