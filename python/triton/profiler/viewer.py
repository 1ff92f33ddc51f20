"""`proton-viewer` compatibility: runs `proton-cli report` with the same options."""
import os
import shutil
import subprocess
import sys


def main(argv=None):
    cli = shutil.which("proton-cli")
    if cli is None:
        here = os.path.dirname(os.path.abspath(__file__))
        cand = os.path.join(here, "..", "..", "..", "build", "bin", "proton-cli")
        cli = cand if os.path.exists(cand) else None
    if cli is None:
        print("proton-viewer: proton-cli not found on PATH", file=sys.stderr)
        return 2
    return subprocess.call([cli, "report"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
