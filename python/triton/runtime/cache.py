"""triton.runtime.cache: upstream's cache helpers that other tools import.

Tritium's kernel cache is the C one (runtime/, TRITON_CACHE_DIR); this module offers
upstream's names around it: `triton_key()` (the compiler's identity, which torch's
inductor folds into its own cache keys), `default_cache_dir()`, `_base32`/`_base64`
(how upstream turns a hash into a directory name) and a small FileCacheManager for
tools that keep their own files next to the kernels.
"""
from __future__ import annotations

import base64
import os
import tempfile


def default_cache_dir():
    return os.path.join(os.path.expanduser("~"), ".triton", "cache")


def _cache_root():
    return os.environ.get("TRITON_CACHE_DIR") or default_cache_dir()


def triton_key():
    """The version plus the compiler build's fingerprint: changes whenever the native
    libraries change, as upstream's key changes with its sources."""
    import triton
    from triton.compiler.compiler import _compiler_fingerprint
    return f"{triton.__version__}-{_compiler_fingerprint()}"


def _base32(key):
    return base64.b32encode(bytes.fromhex(key)).decode("utf-8").rstrip("=")


def _base64(key):
    return base64.urlsafe_b64encode(bytes.fromhex(key)).decode("utf-8").rstrip("=")


class CacheManager:
    def __init__(self, key, override=False, dump=False):
        pass


class FileCacheManager(CacheManager):
    """One directory per key under TRITON_CACHE_DIR; writes are atomic (temp + rename)."""

    def __init__(self, key, override=False, dump=False):
        self.key = key
        self.cache_dir = os.path.join(_cache_root(), "files", key)
        os.makedirs(self.cache_dir, exist_ok=True)

    def _make_path(self, filename):
        return os.path.join(self.cache_dir, filename)

    def has_file(self, filename):
        return os.path.exists(self._make_path(filename))

    def get_file(self, filename):
        p = self._make_path(filename)
        return p if os.path.exists(p) else None

    def get_group(self, filename):
        return None

    def put_group(self, filename, group):
        return None

    def put(self, data, filename, binary=True):
        binary = isinstance(data, bytes)
        if not binary:
            data = str(data)
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, prefix=".tmp-")
        with os.fdopen(fd, "wb" if binary else "w") as f:
            f.write(data)
        p = self._make_path(filename)
        os.replace(tmp, p)
        return p


def get_cache_manager(key):
    return FileCacheManager(key)


def get_override_manager(key):
    return FileCacheManager(key, override=True)


def get_dump_manager(key):
    return FileCacheManager(key, dump=True)
