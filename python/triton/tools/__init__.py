"""triton.tools: ahead-of-time export of compiled kernels (triton.tools.aot)."""
