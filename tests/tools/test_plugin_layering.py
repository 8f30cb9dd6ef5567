"""Built-in plugins use the SDK alone, as a third party's would (docs/architecture.md, "Layers").
Every plugin source is compiled against the installed SDK alone, and the include rule below
says which line is at fault when one is not.

A file under plugins/ may include <lpx/...> (the SDK), standard and third-party headers, files of
its own folder and the shared plugin code of plugins/common/*/ — never a header of core/ or
kernels/ (util/, engine/, reference/, model/...), and no plugin's CMake may put core/ or kernels/
on its include path or link a core or kernel library. This check runs in CI; it fails naming the
file, the line and the include.
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "plugins"
COMMONS = sorted(p for p in (PLUGINS / "common").iterdir() if p.is_dir())  # openai/, formats/
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
INTERNAL = ("util/", "engine/", "reference/", "pipeline/", "plugin_host/", "model/", "core/",
            "kernels/", "cpu/", "cuda/", "synth/", "tokenizer/", "chat_template/", "metrics/",
            "logging/", "cli/", "gpu/", "bench/")


def sources():
    for path in sorted(PLUGINS.rglob("*")):
        if path.suffix in {".c", ".h", ".cpp", ".hpp"}:
            yield path


def test_plugins_include_only_the_sdk_their_own_files_and_libraries():
    problems = []
    for path in sources():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            where = f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            if name.startswith(INTERNAL):
                problems.append(where + " (a core or kernel header)")
            elif kind == '"' and not name.startswith("lpx/") and not (
                    (path.parent / name).exists() or any((c / name).exists() for c in COMMONS)):
                problems.append(where + " (not the plugin's own file nor plugins/common)")
    assert not problems, "\n".join(problems)


def test_plugin_builds_reach_nothing_of_core_or_kernels():
    problems = []
    for cmake in sorted(PLUGINS.rglob("CMakeLists.txt")):
        for number, line in enumerate(cmake.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"\$\{PROJECT_SOURCE_DIR\}/(core|kernels)", code) or re.search(
                    r"\b(lpx_core|lpx_kernels_\w+|lpx_tokenizer|lpx_chat_template)\b", code):
                problems.append(f"{cmake.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not problems, "\n".join(problems)


def test_the_check_can_fail(tmp_path):
    """The include rule itself, on a planted violation (so a regex slip cannot pass everything)."""
    bad = '#include "util/expected.hpp"'
    kind, name = INCLUDE.match(bad).groups()
    assert kind == '"' and name.startswith(INTERNAL)
    assert INCLUDE.match('#include <lpx/cpp/plugin.hpp>').group(2) == "lpx/cpp/plugin.hpp"


def test_every_plugin_source_compiles_against_the_installed_sdk_alone(tmp_path):
    """The proof behind the include rule: install the SDK (as a third party gets it) and compile
    every plugin source with only that, the file's own folder and plugins/common on the include
    path (system libraries and the third-party libraries the build fetched aside)."""
    import concurrent.futures
    import os
    import shutil
    import subprocess

    build = pathlib.Path(os.environ.get("LPX_PIPELINE", ROOT / "build/bin/lpx-pipeline")).parents[1]
    prefix = tmp_path / "sdk"
    install = subprocess.run([shutil.which("cmake") or "cmake", "--install", build, "--prefix",
                              prefix, "--component", "sdk"], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    assert (prefix / "include/lpx/plugin.h").exists()
    compiler = os.environ.get("CXX") or shutil.which("c++")

    # Third-party libraries the build fetched (cmake/LPX*.cmake) are found where it put them, as
    # a third party would point at their own copy.
    xgrammar = build / "_deps" / "xgrammar-src"
    third_party = [f"-isystem{d}" for d in (xgrammar / "include", xgrammar / "3rdparty" / "dlpack" / "include",
                                            xgrammar / "3rdparty" / "picojson") if d.exists()]

    def compile_one(source):
        proc = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", f"-I{prefix / 'include'}",
                               f"-I{source.parent}", *[f"-I{c}" for c in COMMONS], *third_party, source],
                              capture_output=True, text=True)
        return source, proc.returncode, proc.stderr

    sources = sorted(PLUGINS.rglob("*.cpp"))
    assert len(sources) > 20, sources
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f"{s.relative_to(ROOT)}:\n{err[:2000]}"
                    for s, rc, err in pool.map(compile_one, sources) if rc != 0]
    assert not failures, "\n".join(failures)
