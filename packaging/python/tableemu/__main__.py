"""python -m tableemu ARGS: runs the tableemu binary that the wheel
installed, with ARGS (tableemu --help lists them); the same as the
`tableemu` command, for when the scripts directory is not on PATH."""

import sys

from tableemu import _run_binary

if __name__ == "__main__":
    sys.exit(_run_binary(sys.argv[1:]))
