"""Every script in examples/ runs standalone (its own process, as `python examples/<name>.py`),
checks itself against torch and prints one PASS line."""
import os
import re

import pytest

from conftest import REPO, check_ok

EXAMPLES = sorted(f for f in os.listdir(os.path.join(REPO, "examples")) if re.match(r"\d\d_.*\.py$", f))


def test_expected_examples_exist():
    assert {"01_vector_add.py", "02_activations.py", "03_scaled_residual_add.py"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs(name, run_py, session_cache_dir):
    proc = check_ok(run_py(os.path.join(REPO, "examples", name), session_cache_dir, cwd=REPO))
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("PASS")]
    assert len(lines) == 1, proc.stdout
    assert lines[0].startswith(f"PASS {name[:-3]}:")
