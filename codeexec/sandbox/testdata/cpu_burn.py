"""Attack: burn CPU forever."""
while True:
    pass
