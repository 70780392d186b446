"""Build the CPU kernel library (engine/csrc) with the system's C++ compiler.

`python -m engine.quant.build` compiles it (a few seconds with g++ -O3) and prints the time;
`make run` and `make test` call it, and the engine calls `library_path(build=True)` at start-up
when the file is missing. The output name carries a hash of the sources, the flags and the
compiler's version, so a changed source or another compiler never loads a stale build.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CSRC = Path(__file__).resolve().parent.parent / "csrc"
BUILD_DIR = CSRC / "build"
SOURCES = ("llama_cpu.cpp", "kernels_scalar.cpp", "thread_pool.cpp")
AVX2_SOURCE = "kernels_avx2.cpp"
HEADERS = ("cpu_kernels.h", "thread_pool.h")
COMMON_FLAGS = ("-O3", "-std=c++17", "-fPIC", "-pthread", "-fno-math-errno")
AVX2_FLAGS = ("-mavx2", "-mfma", "-mf16c")
# GCC's pre-allocation scheduler, register-pressure aware: without it the unrolled kernels spill
# most of their accumulators (measured: 20% slower at 16 rows).
GCC_SCHED_FLAGS = ("-fschedule-insns", "-fsched-pressure")


class BuildError(RuntimeError):
    """The library could not be compiled (no compiler, or the compiler failed)."""


def compiler() -> str | None:
    """The C++ compiler to use: $CXX, else g++, else c++ (None when there is none)."""
    for name in (os.environ.get("CXX"), "g++", "c++"):
        if name and shutil.which(name):
            return name
    return None


def _is_x86() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def _version(cxx: str) -> str:
    try:
        return subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return cxx


def _avx2_flags(cxx: str) -> tuple[str, ...]:
    if not _is_x86():
        return ("-DCRESCENT_NO_AVX2",)
    is_gcc = "Free Software Foundation" in _version(cxx) and "clang" not in _version(cxx)
    return AVX2_FLAGS + (GCC_SCHED_FLAGS if is_gcc else ())


def _fingerprint(cxx: str) -> str:
    h = hashlib.sha256()
    for name in (*SOURCES, AVX2_SOURCE, *HEADERS):
        h.update(name.encode())
        h.update((CSRC / name).read_bytes())
    h.update(" ".join((*COMMON_FLAGS, *_avx2_flags(cxx))).encode())
    h.update(_version(cxx).encode())
    return h.hexdigest()[:16]


def library_path(build: bool = False) -> Path:
    """Path of the built library for the current sources; builds it first if `build` and missing.

    Raises BuildError when there is no compiler, the build fails, or (build=False) the library
    has not been built.
    """
    cxx = compiler()
    if cxx is None:
        raise BuildError("no C++ compiler found (set CXX or install g++)")
    path = BUILD_DIR / f"libcrescent_cpu-{_fingerprint(cxx)}.so"
    if path.is_file():
        return path
    if not build:
        raise BuildError(f"{path.name} is not built (python -m engine.quant.build)")
    _compile(cxx, path)
    return path


def _compile(cxx: str, path: Path) -> None:
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILD_DIR) as tmp:
        avx2_obj = Path(tmp) / "kernels_avx2.o"
        _run([cxx, *COMMON_FLAGS, *_avx2_flags(cxx), "-c", str(CSRC / AVX2_SOURCE), "-o", str(avx2_obj)])
        out = Path(tmp) / path.name
        _run([cxx, *COMMON_FLAGS, "-shared", *(str(CSRC / s) for s in SOURCES), str(avx2_obj),
              "-o", str(out)])
        os.replace(out, path)  # atomic: a concurrent loader sees the old state or the whole file
    for stale in BUILD_DIR.glob("libcrescent_cpu-*.so"):
        if stale != path:
            stale.unlink(missing_ok=True)  # a process that mapped it keeps its copy


def _run(cmd: list[str]) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise BuildError(f"{cmd[0]} failed to run: {e}") from e
    if proc.returncode != 0:
        raise BuildError(f"compiling the CPU kernels failed:\n{' '.join(cmd)}\n{proc.stderr[-4000:]}")


def main() -> int:
    start = time.perf_counter()
    try:
        cxx = compiler()
        existed = cxx is not None and (BUILD_DIR / f"libcrescent_cpu-{_fingerprint(cxx)}.so").is_file()
        path = library_path(build=True)
    except BuildError as e:
        print(f"CPU kernels not built: {e}", file=sys.stderr)
        print("the engine will fall back to the float32 path", file=sys.stderr)
        return 0  # not fatal: the engine falls back to float32
    seconds = time.perf_counter() - start
    verb = "up to date" if existed else f"built in {seconds:.1f} s"
    print(f"CPU kernels {verb}: {path.relative_to(CSRC.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
