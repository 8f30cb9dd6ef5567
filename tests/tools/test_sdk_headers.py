"""Every SDK header stands on its own, as a plugin author includes it: each C header
(lpx/*.h, lpx/kinds/*.h) compiles alone as C99 and as C++17 with pedantic warnings as errors,
and each C++ header (lpx/cpp/*.hpp) alone as C++20."""
import concurrent.futures
import os
import pathlib
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "sdk" / "include"


def compile_alone(header, language, standard, extra=()):
    compiler = shutil.which("gcc" if language == "c" else "g++")
    # The typedef keeps a header of macros alone (version.h) from an empty C translation unit.
    source = f"#include <{header.relative_to(INCLUDE).as_posix()}>\ntypedef int lpx_header_check;\n"
    proc = subprocess.run([compiler, "-x", language, f"-std={standard}", "-fsyntax-only", "-Wall",
                           "-Wextra", "-Wpedantic", "-Werror", *extra, f"-I{INCLUDE}", "-"],
                          input=source, capture_output=True, text=True)
    return header, standard, proc.returncode, proc.stderr


def test_every_sdk_header_compiles_alone():
    jobs = []
    for header in sorted(INCLUDE.rglob("*.h")):
        jobs.append((header, "c", "c99", ()))
        jobs.append((header, "c++", "c++17", ("-Wold-style-cast",)))
    for header in sorted(INCLUDE.rglob("*.hpp")):
        jobs.append((header, "c++", "c++20", ()))
    assert len(jobs) > 20, jobs
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda job: compile_alone(*job), jobs))
    failures = [f"{h.relative_to(ROOT)} as {std}:\n{err[:1500]}" for h, std, rc, err in results
                if rc != 0]
    assert not failures, "\n".join(failures)
