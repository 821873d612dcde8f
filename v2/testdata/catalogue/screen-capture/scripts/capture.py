"""Capture the screen (a stand-in)."""
print("captured")
