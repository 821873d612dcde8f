"""What the other scripts share: the slides ppt/presentation.xml lists."""
import os
import re

LIST = os.path.join("ppt", "presentation.xml")
SLIDES = os.path.join("ppt", "slides")


def referenced(root):
    """The slide file names the slide list of the deck unpacked at root names."""
    with open(os.path.join(root, LIST), encoding="utf-8") as f:
        return set(re.findall(r'target="slides/([^"]+)"', f.read()))


def present(root):
    """The slide file names under ppt/slides of the deck unpacked at root."""
    folder = os.path.join(root, SLIDES)
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []
