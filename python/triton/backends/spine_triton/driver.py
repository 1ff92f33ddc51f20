"""CPUDriver — the surface spine-triton scripts touch (reference/spine-triton.md §4.1).

`triton.runtime.driver.set_active(CPUDriver())` is accepted but not required: Tritium
only runs on the CPU. Kernels launch through the C launcher, not through this object.
"""
from __future__ import annotations

import os
import platform
import re
import time

from triton.backends.compiler import AICPUTarget
from triton.backends.driver import DriverBase

# SpacemiT arch ids (env.get_cpu_name_from_arch_id)
_ARCH_IDS = {"0x503C": "spacemit-x60", "0x5064": "spacemit-x100", "0x50C8": "spacemit-x200",
             "0xA03C": "spacemit-a60", "0xA064": "spacemit-a100", "0xA0C8": "spacemit-a200",
             "0xF000": "spacemit-a200m"}


def get_cpu_name_from_arch_id(arch_id: str) -> str:
    key = arch_id.upper().replace("0X", "0x")
    if key not in _ARCH_IDS:
        raise ValueError(f"unknown SpacemiT arch id {arch_id}")
    return _ARCH_IDS[key]


class TimerEvent:
    def __init__(self, enable_timing=True):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3

    def synchronize(self):
        pass


class CPUDeviceInterface:
    Event = TimerEvent

    @staticmethod
    def synchronize(device=None):
        pass

    @staticmethod
    def current_device():
        return "cpu"

    @staticmethod
    def current_stream(device=None):
        return 0

    @staticmethod
    def set_device(d):
        pass

    @staticmethod
    def device_count():
        return 1


class CPUUtils:
    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def get_device_properties(self, device="cpu"):
        n = os.cpu_count() or 1
        return {"max_shared_mem": 1 << 20, "max_num_regs": 65536, "multiprocessor_count": n, "warpSize": 1,
                "sm_clock_rate": 0, "mem_clock_rate": 0, "mem_bus_width": 0}

    def load_binary(self, name, data, shared, device):
        raise NotImplementedError("Tritium loads kernels itself; load_binary is not needed")

    def get_current_stream(self):
        return 0

    def get_arch_id(self):
        return _host_arch_id()

    def get_num_cores(self):
        return os.cpu_count() or 1

    def get_stream_threads(self):
        from triton._C import tritium as _C
        return _C.threads_default()


# /proc/cpuinfo names of SpacemiT cores ("uarch : spacemit,x60" on K1, "model name" on
# some kernels) and the arch id spine-triton's scripts choose micro tiles by. K1's X60
# cores carry the AI extension that spine-triton calls "a60" (0xA03C, its own default),
# K3's X100 cores "a100" (0xA064); that pairing is an inference from the scripts, which
# support only those two ids.
_CPUINFO_ARCH = {"x60": "0xA03C", "a60": "0xA03C", "x100": "0xA064", "a100": "0xA064",
                 "x200": "0xA0C8", "a200": "0xA0C8"}


def _cpuinfo_arch_id(text):
    """The SpacemiT arch id named by a /proc/cpuinfo text, or None."""
    for line in text.splitlines():
        key, _, val = line.partition(":")
        if key.strip().lower() not in ("uarch", "model name", "cpu model"):
            continue
        m = re.search(r"spacemit[^a-z0-9]*(?:\(r\))?[^a-z0-9]*([xa]\d+)", val.strip().lower())
        if m and m.group(1) in _CPUINFO_ARCH:
            return _CPUINFO_ARCH[m.group(1)]
    return None


def _host_arch_id():
    """SPACEMIT_EP_QEMU_SET_CORE_ARCH, else the SpacemiT core named in /proc/cpuinfo,
    else spine-triton's default 0xA03C (x86 hosts: scripts still find their tiles)."""
    v = os.environ.get("SPACEMIT_EP_QEMU_SET_CORE_ARCH")
    if v:
        return v
    try:
        with open("/proc/cpuinfo") as f:
            found = _cpuinfo_arch_id(f.read())
    except OSError:
        found = None
    return found or "0xA03C"


class CPUDriver(DriverBase):
    def __init__(self):
        self.utils = CPUUtils()
        self.binary_ext = "so"
        self.current_arch_id = _host_arch_id()
        self.cpu_arch = get_cpu_name_from_arch_id(self.current_arch_id)
        self.num_cores = os.cpu_count() or 1
        self.num_of_stream_threads = self.utils.get_stream_threads()
        self.force_vector_interleave = 2
        self.rpc_mode = False
        self.launcher_cls = None
        self._iface = None

    @staticmethod
    def is_active():
        return False

    def get_benchmarker(self):
        from triton.testing import do_bench
        return do_bench

    def get_device_capability(self, device=None):
        return ("cpu", 0)

    def get_current_stream(self, device=None):
        return 0

    def get_current_device(self):
        return "cpu"

    def set_current_device(self, device):
        assert device == "cpu"

    def get_current_target(self):
        arch = platform.machine()
        return AICPUTarget("cpu", self.cpu_arch if arch.startswith("riscv") else arch, 0, self.num_cores,
                           self.num_of_stream_threads, self.current_arch_id, self.num_of_stream_threads, 2)

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def assemble_tensormap_to_arg(self, tensormaps_info, args):
        return args

    def get_device_interface(self):
        if self._iface is None:
            self._iface = CPUDeviceInterface()
        return self._iface

    def get_empty_cache_for_benchmark(self):
        import torch
        return torch.empty(int(64 * 1024 * 1024 // 4), dtype=torch.int32)

    def clear_cache(self, cache):
        cache.zero_()

    def map_python_to_cpp_type(self, ty):
        return {"i1": "int32_t", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
                "u32": "uint32_t", "u64": "uint64_t", "fp16": "float", "bf16": "float", "fp32": "float",
                "f32": "float", "fp64": "double"}.get(ty, "void*")
