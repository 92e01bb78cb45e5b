"""Build a shared library from a .te file: tecc, then nvcc -shared."""

import os
import shutil
import subprocess


class BuildError(RuntimeError):
    """tecc or nvcc failed; the message holds the command and its output."""


def find_tool(name, env, candidates=()):
    """$env, else the first existing candidate, else `name` on PATH."""
    if os.environ.get(env):
        return os.environ[env]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    if not found:
        raise BuildError("cannot find %s (set $%s)" % (name, env))
    return found


def installed_tecc():
    """Where the tecc that `make install` installed beside this package
    lies: two candidates (relative to this package, then the configured
    directory), or none in a source tree or a pip installation, which have
    no _config module."""
    try:
        from . import _config
    except ImportError:
        return []
    name = "tecc" + _config.exeext
    here = os.path.dirname(os.path.abspath(_config.__file__))
    return [os.path.normpath(os.path.join(here, _config.bindir_from_package, name)),
            os.path.join(_config.bindir, name)]


def find_tecc():
    """$TECC, else the tecc installed with this package, else tecc on PATH."""
    return find_tool("tecc", "TECC", installed_tecc())


def find_nvcc():
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return find_tool("nvcc", "NVCC", [os.path.join(cuda, "bin", "nvcc")])


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        how = ("killed by signal %d" % -p.returncode if p.returncode < 0
               else "exit status %d" % p.returncode)
        raise BuildError("%s\n%s\n(%s)" % (" ".join(cmd), p.stdout.rstrip(), how))
    return p.stdout


def tecc_command(tecc, te, cu, opt=2, defines=None, name=None, include_dirs=()):
    cmd = [tecc, "-O%d" % opt, te, "-o", cu]
    for k, v in sorted((defines or {}).items()):
        cmd += ["-D", "%s=%d" % (k, v)]
    if name:
        cmd.append("--name=%s" % name)
    for d in include_dirs:
        cmd += ["-I", d]
    return cmd


def nvcc_command(nvcc, sources, so, arch=None, flags=()):
    cmd = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-O3", "-o", so]
    if arch:
        cmd.append("-arch=%s" % arch)
    return cmd + list(flags) + list(sources)


def build(te, out_dir=None, opt=2, defines=None, name=None, include_dirs=(),
          arch=None, tecc=None, nvcc=None, nvcc_flags=()):
    """Compiles te with tecc and nvcc; returns (so_path, header_path)."""
    out_dir = out_dir or os.path.dirname(os.path.abspath(te))
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, os.path.splitext(os.path.basename(te))[0])
    tecc = tecc or find_tecc()
    run(tecc_command(tecc, te, base + ".cu", opt, defines, name, include_dirs))
    run(nvcc_command(nvcc or find_nvcc(), [base + ".cu"], base + ".so", arch, nvcc_flags))
    return base + ".so", base + ".h"
