"""triton.backends: the CPU backend (names compatible with spine-triton and triton-shared)."""
backends = {}
