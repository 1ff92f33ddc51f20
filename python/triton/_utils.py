"""Shared name tables of the front end (upstream's triton._utils names).

type_canonicalisation_dict maps every spelling of a dtype that scripts and upstream's
test helpers use (torch/numpy names, C names, signature names) to its signature name
("fp32", "i8", "u1", "fp8e4nv", ...); each signature name maps to itself.
"""

_SPELLINGS = {
    "u1": ("bool", "int1", "uint1", "i1"),
    "fp8e4nv": ("float8e4nv", "float8_e4m3fn"), "fp8e5": ("float8e5", "float8_e5m2"),
    "fp8e4b15": ("float8e4b15",), "fp8e4b8": ("float8e4b8", "float8_e4m3fnuz"),
    "fp8e5b16": ("float8e5b16", "float8_e5m2fnuz"),
    "fp16": ("half", "float16"), "bf16": ("bfloat16",), "fp32": ("float", "float32"),
    "fp64": ("double", "float64"),
    "i8": ("int8",), "i16": ("int16",), "i32": ("int", "int32"), "i64": ("int64",),
    "u8": ("uint8",), "u16": ("uint16",), "u32": ("uint32",), "u64": ("uint64",), "void": (),
}

type_canonicalisation_dict = {s: canon for canon, names in _SPELLINGS.items() for s in names + (canon,)}


def canonicalize_dtype(dtype):
    return type_canonicalisation_dict[str(dtype).split(".")[-1]]
