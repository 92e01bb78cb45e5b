"""Build a shared library from a .te file: tecc, then nvcc -shared, with a
content-addressed cache of the libraries on disk.

build() runs tecc every time (milliseconds) and nvcc (seconds) only when
the cache holds no library for the key: the sha256 of everything that
decides the object -- the generated .cu and .h (they hold the .te and every
file it imports, as tecc resolved them), tecc's version and options, nvcc's
version, flags and the NVCC_* variables it reads, and the target
architecture.  A library is built in a temporary directory inside the
cache and renamed into place in one step, so concurrent builds of one key
are safe and a reader never sees a half-written library.
"""

import errno
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings

# Part of every key: bump it when the entries' layout or the key's recipe
# changes, so that old entries are never taken for new ones.
CACHE_FORMAT = 1
# Environment variables nvcc reads that change what it compiles.
NVCC_ENVIRONMENT = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN")


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
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        raise BuildError("%s\n(cannot run %s: %s)" % (" ".join(cmd), cmd[0], e.strerror)) from e
    if p.returncode != 0:
        how = ("killed by signal %d" % -p.returncode if p.returncode < 0
               else "exit status %d" % p.returncode)
        raise BuildError("%s\n%s\n(%s)" % (" ".join(cmd), p.stdout.rstrip(), how))
    return p.stdout


def tecc_options(opt=2, defines=None, name=None, include_dirs=(), arch=None):
    """tecc's options, without the input and output files."""
    cmd = ["-O%d" % opt]
    for k, v in sorted((defines or {}).items()):
        cmd += ["-D", "%s=%d" % (k, v)]
    if name:
        cmd.append("--name=%s" % name)
    if arch:
        cmd.append("--arch=%s" % arch)
    for d in include_dirs:
        cmd += ["-I", d]
    return cmd


def nvcc_command(nvcc, sources, so, arch=None, flags=()):
    cmd = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-O3", "-o", so]
    if arch:
        cmd.append("-arch=%s" % arch)
    return cmd + list(flags) + list(sources)


def parallel_flags(nvcc, flags):
    """["--split-compile=0"] where nvcc is CUDA 12 or newer and the caller's
    flags say nothing of it: nvcc then optimizes the file's kernels on every
    core, each kernel's PTX the same (doc/performance.md, "Build in
    parallel"; a generated file is many kernel instances)."""
    if any("split-compile" in f for f in flags):
        return []
    m = re.search(r"release (\d+)\.", tool_version(nvcc))
    return ["--split-compile=0"] if m and int(m.group(1)) >= 12 else []


# --- the target architecture -------------------------------------------------

def device_arch():
    """sm_XY of PyTorch's current CUDA device; None without PyTorch or a GPU."""
    try:
        import torch
    except ImportError:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability()
    except (RuntimeError, AssertionError):
        return None
    return "sm_%d%d" % (major, minor)


def tecc_arch(arch):
    """arch when tecc's --arch takes it (sm_XY or sm_XYa, sm_70 or newer)."""
    m = re.match(r"sm_(\d{2,3})a?$", arch or "")
    return arch if m and int(m.group(1)) >= 70 else None


def resolve_arch(arch):
    """(nvcc's -arch, tecc's --arch) for build()'s arch argument: None or
    "native" follow the device PyTorch sees; without one, None keeps nvcc's
    and tecc's defaults and "native" is left to nvcc."""
    if arch is None or arch == "native":
        found = device_arch()
        return (found, found) if found else (arch, None)
    return arch, tecc_arch(arch)


# --- the cache ---------------------------------------------------------------

def cache_dir():
    """$TECC_CACHE_DIR, else $XDG_CACHE_HOME/tecc, else ~/.cache/tecc."""
    if os.environ.get("TECC_CACHE_DIR"):
        return os.environ["TECC_CACHE_DIR"]
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tecc")


def cache_enabled(cache=None):
    """build()'s cache argument, else $TECC_CACHE (0, no, off, false: off)."""
    if cache is not None:
        return bool(cache)
    return os.environ.get("TECC_CACHE", "1").strip().lower() not in ("0", "no", "off", "false")


_VERSIONS = {}


def tool_version(tool):
    """`tool --version`, asked once per process for each file and mtime."""
    path = os.path.realpath(shutil.which(tool) or tool)
    try:
        st = os.stat(path)
        memo = (path, st.st_size, st.st_mtime_ns)
    except OSError:
        memo = None
    if memo is None or memo not in _VERSIONS:
        version = run([tool, "--version"]).strip()
        if memo is None:
            return version
        _VERSIONS[memo] = version
    return _VERSIONS[memo]


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def recipe(base, cu, h, tecc, options, nvcc, nvcc_flags, arch):
    """What decides the library, as a dict; the key is its sha256.  tecc's
    -I directories are left out (what tecc found there is in the .cu), so
    the key does not depend on where the sources lie."""
    kept, skip = [], False
    for o in options:
        if not skip and o != "-I":
            kept.append(o)
        skip = o == "-I"
    return {"format": CACHE_FORMAT, "base": base, "cu": sha256(cu), "h": sha256(h),
            "tecc": tool_version(tecc), "tecc_options": kept,
            "nvcc": tool_version(nvcc), "nvcc_flags": nvcc_flags,
            "nvcc_environment": {k: os.environ[k] for k in NVCC_ENVIRONMENT if k in os.environ},
            "arch": arch}


def recipe_key(r):
    return sha256(json.dumps(r, sort_keys=True))


class Job:
    """One build: the tecc options, the nvcc flags and arch resolved."""

    def __init__(self, te, opt, defines, name, include_dirs, arch, tecc, nvcc, nvcc_flags):
        self.te = te
        self.base = os.path.splitext(os.path.basename(te))[0]
        self.nvcc_arch, arch_for_tecc = resolve_arch(arch)
        self.options = tecc_options(opt, defines, name, include_dirs, arch_for_tecc)
        self.tecc = tecc or find_tecc()
        self.nvcc, self.nvcc_flags = nvcc, list(nvcc_flags)

    def nvcc_path(self):
        self.nvcc = self.nvcc or find_nvcc()
        return self.nvcc

    def flags(self):
        """The caller's nvcc flags, then parallel_flags()."""
        return self.nvcc_flags + parallel_flags(self.nvcc_path(), self.nvcc_flags)

    def generate(self, out_dir):
        """tecc: BASE.cu and BASE.h in out_dir."""
        run([self.tecc, self.te, "-o", self.path(out_dir, ".cu")] + self.options)

    def compile(self, out_dir):
        """nvcc: BASE.so from BASE.cu in out_dir."""
        run(nvcc_command(self.nvcc_path(), [self.path(out_dir, ".cu")],
                         self.path(out_dir, ".so"), self.nvcc_arch, self.flags()))

    def path(self, out_dir, ext):
        return os.path.join(out_dir, self.base + ext)

    def recipe(self, out_dir):
        """The key's recipe for the files generate() wrote in out_dir; the
        nvcc flags without the nvcc, input and output paths."""
        flags = nvcc_command("nvcc", [self.base + ".cu"], self.base + ".so",
                             self.nvcc_arch, self.flags())[1:]
        return recipe(self.base, read(self.path(out_dir, ".cu")), read(self.path(out_dir, ".h")),
                      self.tecc, self.options, self.nvcc_path(), flags, self.nvcc_arch)


def sync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(work, entry, so_name):
    """Renames the directory work to entry, whole.  rename(2) fails when
    entry already holds files: another build of the key was first, and its
    library is the same; an entry without its library (left by hand) is
    moved aside and replaced."""
    os.chmod(work, 0o755)  # mkdtemp made it 0700
    for _ in range(2):
        try:
            os.replace(work, entry)
            return
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
        if os.path.isfile(os.path.join(entry, so_name)):
            return
        aside = tempfile.mkdtemp(prefix=".broken-", dir=os.path.dirname(entry))
        try:
            os.replace(entry, os.path.join(aside, "entry"))
        except FileNotFoundError:
            pass
        shutil.rmtree(aside, ignore_errors=True)
    raise BuildError("cannot put the library in the cache at %s" % entry)


def work_dir(root):
    """A new directory in the cache root, or None (with a warning) when the
    cache cannot be written."""
    try:
        os.makedirs(root, exist_ok=True)
        return tempfile.mkdtemp(prefix=".build-", dir=root)
    except OSError as e:
        warnings.warn("tecc.build: cannot use the cache (%s); building without it" % e)
        return None


def cached(job, root, work):
    """The cache entry holding job's library, built first (in work, a
    directory in root) if need be."""
    try:
        job.generate(work)
        r = job.recipe(work)
        entry = os.path.join(root, recipe_key(r))
        so_name = job.base + ".so"
        if not os.path.isfile(os.path.join(entry, so_name)):
            job.compile(work)
            with open(os.path.join(work, "recipe.json"), "w") as f:
                json.dump(r, f, indent=1, sort_keys=True)
            sync(job.path(work, ".so"))
            publish(work, entry, so_name)
        return entry
    finally:
        shutil.rmtree(work, ignore_errors=True)


def copy_out(job, entry, out_dir):
    """BASE.cu, BASE.h and BASE.so from the cache entry to out_dir, each
    replaced in one step (a loaded library keeps its old file)."""
    os.makedirs(out_dir, exist_ok=True)
    for ext in (".cu", ".h", ".so"):
        dest = job.path(out_dir, ext)
        tmp = "%s.tmp%d" % (dest, os.getpid())
        shutil.copyfile(job.path(entry, ext), tmp)
        os.replace(tmp, dest)


def build_key(te, opt=2, defines=None, name=None, include_dirs=(), arch=None,
              tecc=None, nvcc=None, nvcc_flags=()):
    """The cache key build() would use with these arguments (runs tecc, and
    nvcc --version; compiles nothing)."""
    job = Job(te, opt, defines, name, include_dirs, arch, tecc, nvcc, nvcc_flags)
    work = tempfile.mkdtemp(prefix="tecc-key.")
    try:
        job.generate(work)
        return recipe_key(job.recipe(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build(te, out_dir=None, opt=2, defines=None, name=None, include_dirs=(),
          arch=None, tecc=None, nvcc=None, nvcc_flags=(), cache=None):
    """Compiles te with tecc and nvcc; returns (so_path, header_path).

    With the cache (the default; cache=False or TECC_CACHE=0 turn it off)
    the library comes from cache_dir(), built there first when it is not
    there yet; the paths returned are in the cache entry, or in out_dir
    when one is given (BASE.cu, BASE.h and BASE.so are copied there).
    Without it, tecc and nvcc write to out_dir (default: te's directory).

    arch: nvcc's -arch and tecc's --arch, e.g. "sm_90"; None (or "native")
    takes the compute capability of PyTorch's current CUDA device.  Without
    PyTorch or a GPU, None leaves both tools' defaults, and "native" is
    nvcc's own (the cache is not used then: its key would not say which
    GPU nvcc found).
    """
    job = Job(te, opt, defines, name, include_dirs, arch, tecc, nvcc, nvcc_flags)
    root = cache_dir()
    work = work_dir(root) if cache_enabled(cache) and job.nvcc_arch != "native" else None
    if work:
        entry = cached(job, root, work)
        if out_dir is None:
            return job.path(entry, ".so"), job.path(entry, ".h")
        copy_out(job, entry, out_dir)
        return job.path(out_dir, ".so"), job.path(out_dir, ".h")
    out_dir = out_dir or os.path.dirname(os.path.abspath(te))
    os.makedirs(out_dir, exist_ok=True)
    job.generate(out_dir)
    job.compile(out_dir)
    return job.path(out_dir, ".so"), job.path(out_dir, ".h")
