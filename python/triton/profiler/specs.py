"""triton.profiler.specs: peak models (upstream names). CPUs report 0 (unknown)."""


def max_flops(device_type, arch, width, num_sms, clock_rate):
    if device_type == "CPU":
        return 0.0
    raise ValueError(f"Unsupported device type {device_type}")


def max_bps(device_type, arch, bus_width, memory_clock_rate):
    if device_type == "CPU":
        return 0.0
    raise ValueError(f"Unsupported device type {device_type}")
