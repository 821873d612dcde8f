"""A sibling module: imported by report.py both as a sibling and through the skill package path."""


def title(name: str) -> str:
    return name.strip().title()
