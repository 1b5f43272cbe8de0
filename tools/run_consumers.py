#!/usr/bin/env python3
"""Builds and runs the consumer projects of tests/consumers/ against ferry as a user gets it.

Usage: run_consumers.py BUILD WORK

Installs BUILD into a fresh staging folder (meson install --destdir WORK/stage), then, each in
its own build folder under WORK:
  cmake-cpp         a C++23 CMake project: find_package(ferry CONFIG), ferry::ferry
  cmake-c           a C-only CMake project: find_package(ferry CONFIG), ferry::acl
  cmake-net         a CMake project on ferry::net (a node on 127.0.0.1); only when BUILD has UCX
  meson-pkgconfig   a Meson project on the staged ferry.pc (C++2b) and ferry-acl.pc (C)
  meson-subproject  a Meson project taking this source tree as its 'ferry' subproject
Each is configured, built, installed into its own prefix under WORK and run from there, without
LD_LIBRARY_PATH: an installed program must find the staged libferry-acl.so through the rpath the
package gave it (build-tree rpaths are gone after installation). The staged .pc files are
relocatable (prefix from their own place), so no sysroot is needed. The C++23 ones must also have
exactly one -std= per compile
command (ferry's package must not add its own), and the staged .pc files no placeholder URL. Prints 'PASS consumers/<name>' or
'FAIL consumers/<name>: <why>' per consumer, writes WORK/results.json (one JSON object per line,
as in Meson's testlog.json, for tools/test_summary.py) and exits 1 if any failed.
"""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


class Failure(Exception):
    pass


def run(cmd, log, env=None, cwd=None):
    """Runs cmd with its output appended to log; raises Failure when it exits non-zero."""
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {shlex.join(str(c) for c in cmd)}\n")
        out.flush()
        result = subprocess.run([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, timeout=600)
    if result.returncode != 0:
        raise Failure(f"'{pathlib.Path(str(cmd[0])).name} ...' exited {result.returncode}")


def check_one_std(build_dir: pathlib.Path, _env: dict):
    """Every C++ compile command names one language standard, the consumer's own."""
    commands = json.loads((build_dir / "compile_commands.json").read_text(encoding="utf-8"))
    for entry in commands:
        if not entry["file"].endswith(".cpp"):
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        stds = [a for a in args if a.startswith("-std=")]
        if len(stds) != 1:
            raise Failure(f"{entry['file']} compiles with {stds or 'no -std='}, want exactly one")


def check_pc_urls(_build_dir: pathlib.Path, env: dict):
    """A URL in the staged .pc files must be a real one, not a placeholder."""
    for pc in pathlib.Path(env["PKG_CONFIG_PATH"]).glob("ferry*.pc"):
        for line in pc.read_text(encoding="utf-8").splitlines():
            if line.startswith("URL:") and re.search(r"example\.|\.invalid\b", line):
                raise Failure(f"{pc.name} carries a placeholder {line!r}")


def stage_install(build: pathlib.Path, work: pathlib.Path) -> dict:
    """Installs build under work/stage; returns the environment that finds the staged ferry."""
    options = json.loads(subprocess.run(["meson", "introspect", str(build), "--buildoptions"],
                                        check=True, capture_output=True, text=True).stdout)
    value = {o["name"]: o["value"] for o in options}
    stage = work / "stage"
    prefix = stage / value["prefix"].lstrip("/")
    libdir = prefix / value["libdir"]
    run(["meson", "install", "-C", build, "--destdir", stage, "--quiet"], work / "stage.log")
    env = {k: v for k, v in os.environ.items() if k != "PKG_CONFIG_SYSROOT_DIR"}
    # The staged libraries are deliberately not on LD_LIBRARY_PATH: consumers must not need it.
    env.update(PKG_CONFIG_PATH=str(libdir / "pkgconfig"), CMAKE_PREFIX_PATH=str(prefix))
    return env


def has_ferry_net(env: dict) -> bool:
    """Whether the staged install is one built with UCX (it then has ferry-net.pc)."""
    return (pathlib.Path(env["PKG_CONFIG_PATH"]) / "ferry-net.pc").exists()


def run_installed(prefix: pathlib.Path, programs, log, env):
    for program in programs:
        run([prefix / "bin" / program], log, env)


def cmake_consumer(src, out, log, env, programs):
    prefix = out.with_name(out.name + "-install")
    run(["cmake", "-S", src, "-B", out, "-G", "Ninja", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
         f"-DCMAKE_INSTALL_PREFIX={prefix}"], log, env)
    run(["cmake", "--build", out], log, env)
    run(["cmake", "--install", out], log, env)
    run_installed(prefix, programs, log, env)


def meson_consumer(src, out, log, env, programs, setup_args=()):
    prefix = out.with_name(out.name + "-install")
    run(["meson", "setup", out, src, f"--prefix={prefix}", *setup_args], log, env)
    run(["ninja", "-C", out, *programs], log, env)
    run(["meson", "install", "-C", out, "--quiet", "--no-rebuild"], log, env)
    run_installed(prefix, programs, log, env)


def consumers(src: pathlib.Path, env):
    """(name, build function, its arguments after (src, out, log, env), checks after the run)."""
    net = [("cmake-net", cmake_consumer, src / "cmake/net", (["consumer_net"],), [])]
    return [
        ("cmake-cpp", cmake_consumer, src / "cmake/cpp", (["consumer_cpp"],), [check_one_std]),
        ("cmake-c", cmake_consumer, src / "cmake/c", (["consumer_c"],), []),
        *(net if env is None or has_ferry_net(env) else []),
        ("meson-pkgconfig", meson_consumer, src / "meson/pkgconfig",
         (["consumer", "consumer_c"],), [check_one_std, check_pc_urls]),
        ("meson-subproject", meson_consumer, src / "meson/subproject",
         (["consumer"], ["--force-fallback-for=ferry"]), []),
    ]


def prepare_sources(work: pathlib.Path) -> pathlib.Path:
    """A copy of tests/consumers in which meson/subproject has subprojects/ferry = this tree."""
    src = work / "src"
    shutil.copytree(ROOT / "tests" / "consumers", src)
    subprojects = src / "meson" / "subproject" / "subprojects"
    subprojects.mkdir()
    (subprojects / "ferry").symlink_to(ROOT, target_is_directory=True)
    return src


def report(name: str, reason, log: pathlib.Path, seconds: float):
    if reason is None:
        print(f"PASS consumers/{name} ({seconds:.0f} s)", flush=True)
        return
    print(f"FAIL consumers/{name}: {reason}")
    if log.exists():
        print("".join(log.read_text(encoding="utf-8").splitlines(True)[-40:]), end="", flush=True)


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, work = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    src = prepare_sources(work)
    try:
        env, stage_error = stage_install(build, work), None
    except (Failure, subprocess.CalledProcessError) as error:
        env, stage_error = None, f"staged install failed ({error}); see {work / 'stage.log'}"
    results = []
    for name, build_consumer, consumer_src, args, checks in consumers(src, env):
        out, log, started = work / f"build-{name}", work / f"{name}.log", time.monotonic()
        reason = stage_error
        if env is not None:
            try:
                build_consumer(consumer_src, out, log, env, *args)
                for check in checks:
                    check(out, env)
            except Failure as error:
                reason = f"{error}; see {log}"
        report(name, reason, log, time.monotonic() - started)
        results.append({"name": f"consumers/{name}", "result": "FAIL" if reason else "OK"})
    with open(work / "results.json", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in results)
    return 1 if any(r["result"] != "OK" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
