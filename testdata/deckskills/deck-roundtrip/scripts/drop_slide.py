"""Drops a slide from the slide list: python scripts/drop_slide.py DIR SLIDE (slide2.xml).

The slide's file stays: clean.py deletes what the list no longer references.
"""
import os
import sys

from slides import LIST


def main():
    root, slide = sys.argv[1], sys.argv[2]
    path = os.path.join(root, LIST)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    entry = f'<p:sldId target="slides/{slide}"/>'
    if entry not in text:
        sys.exit(f"{slide} is not in the slide list")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text.replace(entry, ""))
    print(f"dropped {slide} from the slide list")


if __name__ == "__main__":
    main()
