#!/usr/bin/env python3
"""The uninstalled ferry-acl.pc is enough for a plain C compiler
(docs/c-api.md#building-a-legacy-program).

Usage: pkg_config.py UNINSTALLED_DIR CC CALLER_C SANITIZE

Runs `PKG_CONFIG_PATH=UNINSTALLED_DIR pkg-config --cflags --libs ferry-acl`, compiles CALLER_C
with CC and exactly those flags (plus -fsanitize=SANITIZE when the build is sanitized, since the
library then needs the sanitizer runtime), runs the program against the library found through the
-L directories, and checks its output.
"""
import os
import subprocess
import sys
import tempfile


def main() -> int:
    uninstalled, cc, caller, sanitize = sys.argv[1:5]
    env = dict(os.environ, PKG_CONFIG_PATH=uninstalled)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "ferry-acl"], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    print("pkg-config --cflags --libs ferry-acl:", " ".join(flags))
    extra = [f"-fsanitize={sanitize}"] if sanitize not in ("", "none") else []
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "caller")
        subprocess.run([cc, "-std=c11", "-Wall", "-Werror", caller, "-o", program, *flags, *extra],
                       check=True)
        libdirs = [f[2:] for f in flags if f.startswith("-L")]
        run_env = dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs))
        result = subprocess.run([program], env=run_env, capture_output=True, text=True)
    sys.stderr.write(result.stderr)
    print(result.stdout, end="")
    if result.returncode != 0 or not result.stdout.startswith("devices: "):
        print("the pkg-config caller failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
