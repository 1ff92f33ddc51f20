"""Extracts upstream Triton's language tests from a git directory into the build tree.

The project keeps no copy of upstream's tests: `make test-upstream` reads them out of an
upstream checkout's git directory (UPSTREAM_TRITON_GIT, a commit UPSTREAM_TRITON_COMMIT)
with `git show <commit>:<path>`, writes them under build/upstream/<commit>/ in upstream's
own layout (so its conftests apply as upstream's CI applies them), and applies EDITS:
the few textual changes needed to import and run them against Tritium. Each edit names
why; README.md "Upstream's test suite" lists the same edits.
"""
import os
import subprocess
import sys

DEFAULT_GIT = "/work/.mirror/lightseekorg+triton/repo"
DEFAULT_COMMIT = "f4fca2c0"

FILES = [
    "pytest.ini",
    "python/conftest.py",
    "python/test/conftest.py",
    "python/test/unit/language/test_core.py",
    "python/triton/_internal_testing.py",
]

# (file, old text, new text, why). Every old text must occur exactly once.
EDITS = [
    ("python/triton/_internal_testing.py",
     "def is_interpreter():\n    return os.environ.get('TRITON_INTERPRET', '0') == '1'\n",
     "def is_interpreter():\n    return True  # Tritium: the suite's CPU set, compiled (no TRITON_INTERPRET)\n",
     "is_interpreter() answers True, so the suite selects its CPU (interpreter) paths "
     "while every kernel is still compiled by Tritium"),
    ("python/test/unit/language/test_core.py",
     "def patch_kernel(template, to_replace):\n    if is_interpreter():",
     "def patch_kernel(template, to_replace):\n    if False:  # Tritium compiles: take the compiled path",
     "patch_kernel takes upstream's compiled-backend path (JITFunction._unsafe_update_src) "
     "instead of exec'ing source that a compiler cannot read back"),
]


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True).stdout


def resolve(git_dir, commit):
    return git(git_dir, "rev-parse", "--verify", commit + "^{commit}").decode().strip()


def extract(git_dir, commit, dest_root):
    """Writes FILES of `commit` under dest_root/<full hash>/ with EDITS applied; returns
    that directory. Idempotent: an existing complete extraction is rewritten (cheap)."""
    full = resolve(git_dir, commit)
    dest = os.path.join(dest_root, full[:12])
    texts = {f: git(git_dir, "show", f"{full}:{f}").decode() for f in FILES}
    for f, old, new, why in EDITS:
        n = texts[f].count(old)
        if n != 1:
            raise SystemExit(f"upstream edit does not apply to {f} at {full[:12]} ({n} matches): {why}")
        texts[f] = texts[f].replace(old, new)
    for f, text in texts.items():
        path = os.path.join(dest, f)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as fh:
            fh.write(text)
        os.replace(path + ".tmp", path)
    with open(os.path.join(dest, "COMMIT"), "w") as fh:
        fh.write(full + "\n")
    return dest


if __name__ == "__main__":
    g = os.environ.get("UPSTREAM_TRITON_GIT") or DEFAULT_GIT
    c = os.environ.get("UPSTREAM_TRITON_COMMIT") or DEFAULT_COMMIT
    print(extract(g, c, sys.argv[1] if len(sys.argv) > 1 else "build/upstream"))
