"""tecc.build()'s cache (python/tecc/build.py), with the real tecc and a
fake nvcc that logs its calls and writes a known library slowly.  Prints
TAP.

usage: test_build_cache.py TOP_SRCDIR WORKDIR   (env: TECC; NVCC for the
one build with the real nvcc, skipped without it)
"""

import json
import os
import shutil
import subprocess
import sys
import time
import types

TOP, WORK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(TOP, "python"))
import tecc  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taprun  # noqa: E402

tb = sys.modules["tecc.build"]  # the module (tecc.build is the function)
TECC = os.environ.get("TECC", "")
tests = []

# What the fake nvcc writes: CHUNKS pieces of PIECE, a pause after each, so
# a reader that could see the library before it is whole would see it short.
PIECE = b"tecc fake shared library\n" * 160
CHUNKS = 24

FAKE_NVCC = r'''#!%(python)s
import json, os, sys, time
if "--version" in sys.argv:
    print(%(version)r)
    sys.exit(0)
with open(os.environ["FAKE_NVCC_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
barrier = os.environ.get("FAKE_NVCC_BARRIER")
if barrier:  # wait (10 s at most) until BARRIER_N calls are here
    open(os.path.join(barrier, str(os.getpid())), "w").close()
    deadline, n = time.time() + 10, int(os.environ["FAKE_NVCC_BARRIER_N"])
    while len(os.listdir(barrier)) < n and time.time() < deadline:
        time.sleep(0.01)
with open(sys.argv[sys.argv.index("-o") + 1], "wb") as f:
    for _ in range(%(chunks)d):
        f.write(%(piece)r)
        f.flush()
        time.sleep(0.02)
'''


def test(fn):
    tests.append(fn)
    return fn


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def fake_nvcc(name, version="Cuda compilation tools, release 99.0, fake"):
    path = os.path.join(WORK, "bin", name)
    write(path, FAKE_NVCC % {"python": sys.executable, "version": version,
                             "chunks": CHUNKS, "piece": PIECE})
    os.chmod(path, 0o755)
    return path


def nvcc_calls():
    log = os.environ["FAKE_NVCC_LOG"]
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [json.loads(line) for line in f]


class Env:
    """Sets environment variables (None: unsets) for a with-block."""

    def __init__(self, **values):
        self.values, self.saved = values, {}

    def __enter__(self):
        for k, v in self.values.items():
            self.saved[k] = os.environ.get(k)
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class FakeTorch:
    """A torch module that says whether there is a GPU and its capability."""

    def __init__(self, capability):
        self.module = types.ModuleType("torch")
        self.module.cuda = types.SimpleNamespace(
            is_available=lambda: capability is not None,
            get_device_capability=lambda device=None: capability)

    def __enter__(self):
        self.saved = sys.modules.get("torch")
        sys.modules["torch"] = self.module

    def __exit__(self, *exc):
        if self.saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved


def fresh_cache(name):
    d = os.path.join(WORK, "caches", name)
    shutil.rmtree(d, ignore_errors=True)
    os.environ["TECC_CACHE_DIR"] = d
    os.environ["FAKE_NVCC_LOG"] = os.path.join(WORK, "caches", name + ".nvcc.log")
    if os.path.exists(os.environ["FAKE_NVCC_LOG"]):
        os.remove(os.environ["FAKE_NVCC_LOG"])
    return d


def entries(cache):
    return sorted(os.listdir(cache)) if os.path.isdir(cache) else []


# A kernel that imports a function from lib/act.te (found through -I lib).
SOURCES = {"scale.te": 'import "act.te"\nx: f32[N]\ny = twice(x)\n',
           "lib/act.te": "fn twice(x) = x * 2\n"}


def sources(where):
    for name, text in SOURCES.items():
        write(os.path.join(WORK, where, name), text)
    return os.path.join(WORK, where, "scale.te"), [os.path.join(WORK, where, "lib")]


def key(te, inc, **kw):
    kw.setdefault("nvcc", NVCC)
    kw.setdefault("arch", "sm_90")
    return tecc.build_key(te, include_dirs=inc, tecc=TECC, **kw)


def build(te, inc, **kw):
    kw.setdefault("nvcc", NVCC)
    kw.setdefault("arch", "sm_90")
    return tecc.build(te, include_dirs=inc, tecc=TECC, **kw)


def have_tecc():
    return "" if TECC and os.access(TECC, os.X_OK) else "no $TECC"


NVCC = fake_nvcc("nvcc")


@test
def cache_dir_follows_the_environment():
    home = os.path.join(WORK, "home")
    with Env(TECC_CACHE_DIR=None, XDG_CACHE_HOME=None, HOME=home):
        assert tecc.cache_dir() == os.path.join(home, ".cache", "tecc"), tecc.cache_dir()
        with Env(XDG_CACHE_HOME="/x/cache"):
            assert tecc.cache_dir() == "/x/cache/tecc", tecc.cache_dir()
        with Env(XDG_CACHE_HOME="relative/cache"):  # not absolute: ignored, as XDG says
            assert tecc.cache_dir() == os.path.join(home, ".cache", "tecc"), tecc.cache_dir()
        with Env(XDG_CACHE_HOME="/x/cache", TECC_CACHE_DIR="/y/tecc"):
            assert tecc.cache_dir() == "/y/tecc", tecc.cache_dir()


@test
def the_cache_is_on_unless_turned_off():
    with Env(TECC_CACHE=None):
        assert tb.cache_enabled() and not tb.cache_enabled(False)
    for off in ("0", "off", "no", "false", "FALSE"):
        with Env(TECC_CACHE=off):
            assert not tb.cache_enabled(), off
            assert tb.cache_enabled(True), off
    with Env(TECC_CACHE="1"):
        assert tb.cache_enabled()


@test
def same_inputs_same_key_wherever_the_files_are():
    te, inc = sources("key-a")
    te2, inc2 = sources("key-b")
    k = key(te, inc)
    assert len(k) == 64 and int(k, 16) >= 0, k
    assert key(te, inc) == k
    assert key(te2, inc2) == k, "the key depends on where the sources lie"
    os.utime(os.path.join(inc[0], "act.te"), (0, 0))  # a time stamp decides nothing
    assert key(te, inc) == k


@test
def a_changed_import_changes_the_key():
    te, inc = sources("key-import")
    k = key(te, inc)
    act = os.path.join(inc[0], "act.te")
    write(act, "fn twice(x) = x + x * 1.5\n")
    changed = key(te, inc)
    write(act, SOURCES["lib/act.te"])
    assert changed != k and key(te, inc) == k, (k, changed)


@test
def options_arch_and_tool_versions_change_the_key():
    te, inc = sources("key-options")
    k = key(te, inc)
    tecc_wrapper = write(os.path.join(WORK, "bin", "tecc-other"),
                         '#!/bin/sh\ncase "$1" in --version) echo "tecc (tecc) 9.9.9";;'
                         ' *) exec "%s" "$@";; esac\n' % TECC)
    os.chmod(tecc_wrapper, 0o755)
    variants = {
        "-O1": key(te, inc, opt=1),
        "-D N=64": key(te, inc, defines={"N": 64}),
        "--name": key(te, inc, name="scale2"),
        "arch sm_80": key(te, inc, arch="sm_80"),
        "nvcc flags": key(te, inc, nvcc_flags=["-lineinfo"]),
        "nvcc version": key(te, inc, nvcc=fake_nvcc("nvcc-other", "release 98.0, fake")),
        "tecc version": tecc.build_key(te, include_dirs=inc, arch="sm_90", nvcc=NVCC,
                                       tecc=tecc_wrapper),
    }
    with Env(NVCC_PREPEND_FLAGS="-G"):
        variants["NVCC_PREPEND_FLAGS"] = key(te, inc)
    same = [what for what, v in variants.items() if v == k]
    assert not same, "the key did not change with: %s" % ", ".join(same)
    assert len(set(variants.values())) == len(variants), variants


@test
def nvcc_12_or_newer_compiles_the_kernels_in_parallel():
    te, inc = sources("parallel")
    fresh_cache("parallel")
    build(te, inc)
    calls = nvcc_calls()
    assert len(calls) == 1 and calls[0].count("--split-compile=0") == 1, calls
    fresh_cache("parallel-own")
    build(te, inc, nvcc_flags=["--split-compile=2"])
    calls = nvcc_calls()
    assert len(calls) == 1 and "--split-compile=2" in calls[0], calls
    assert not [f for f in calls[0] if f.startswith("--split-compile=") and f != "--split-compile=2"], calls
    fresh_cache("parallel-11")
    build(te, inc, nvcc=fake_nvcc("nvcc-11", "Cuda compilation tools, release 11.8, V11.8.89"))
    calls = nvcc_calls()
    assert len(calls) == 1 and not [f for f in calls[0] if "split-compile" in f], calls


@test
def a_second_build_takes_the_library_from_the_cache():
    cache = fresh_cache("hit")
    te, inc = sources("hit")
    so, h = build(te, inc)
    assert len(nvcc_calls()) == 1, nvcc_calls()
    entry = os.path.dirname(so)
    assert os.path.dirname(entry) == cache and os.path.basename(so) == "scale.so", so
    assert h == os.path.join(entry, "scale.h") and os.path.isfile(h)
    assert os.path.basename(entry) == key(te, inc)
    with open(so, "rb") as f:
        assert f.read() == PIECE * CHUNKS
    with open(os.path.join(entry, "recipe.json")) as f:
        recipe = json.load(f)
    assert recipe["arch"] == "sm_90" and "--arch=sm_90" in recipe["tecc_options"], recipe
    started = time.perf_counter()
    again = build(te, inc)
    seconds = time.perf_counter() - started
    assert again == (so, h), again
    assert len(nvcc_calls()) == 1, "nvcc ran again: %s" % nvcc_calls()
    print("# second build, from the cache: %.1f ms" % (seconds * 1e3))
    assert [e for e in entries(cache) if e.startswith(".")] == [], entries(cache)


@test
def a_changed_import_builds_again():
    fresh_cache("rebuild")
    te, inc = sources("rebuild")
    so, _ = build(te, inc)
    write(os.path.join(inc[0], "act.te"), "fn twice(x) = x * 2.5\n")
    so2, _ = build(te, inc)
    assert so2 != so and len(nvcc_calls()) == 2, (so, so2, nvcc_calls())


@test
def out_dir_gets_copies_of_the_entry():
    fresh_cache("out-dir")
    te, inc = sources("out-dir")
    out = os.path.join(WORK, "out-dir", "built")
    so, h = build(te, inc, out_dir=out)
    assert (so, h) == (os.path.join(out, "scale.so"), os.path.join(out, "scale.h")), (so, h)
    entry_so, _ = build(te, inc)
    for ext in (".so", ".h", ".cu"):
        with open(os.path.join(out, "scale" + ext), "rb") as a, \
                open(entry_so[:-3] + ext, "rb") as b:
            assert a.read() == b.read(), ext
    assert len(nvcc_calls()) == 1, nvcc_calls()


@test
def without_the_cache_nvcc_runs_every_time():
    cache = fresh_cache("off")
    te, inc = sources("off")
    with Env(TECC_CACHE="0"):
        so, h = build(te, inc)
        assert so == os.path.join(os.path.dirname(te), "scale.so"), so
        build(te, inc)
    build(te, inc, cache=False)
    assert len(nvcc_calls()) == 3 and entries(cache) == [], (nvcc_calls(), entries(cache))


@test
def arch_follows_the_device():
    fresh_cache("arch")
    te, inc = sources("arch")
    with FakeTorch((8, 6)):
        so, _ = build(te, inc, arch=None)
    with FakeTorch(None):  # PyTorch without a GPU: both tools' defaults
        build(te, inc, arch=None)
    build(te, inc, arch="sm_100f")  # nvcc's, not tecc's
    calls = nvcc_calls()
    assert "-arch=sm_86" in calls[0], calls[0]
    assert not [a for a in calls[1] if a.startswith("-arch")], calls[1]
    assert "-arch=sm_100f" in calls[2], calls[2]
    with open(os.path.join(os.path.dirname(so), "recipe.json")) as f:
        assert "--arch=sm_86" in json.load(f)["tecc_options"]
    with FakeTorch((9, 0)):
        assert tb.resolve_arch(None) == ("sm_90", "sm_90")
        assert tb.resolve_arch("native") == ("sm_90", "sm_90")
        assert tb.resolve_arch("sm_80") == ("sm_80", "sm_80")
    with FakeTorch(None):
        assert tb.resolve_arch(None) == (None, None)
        assert tb.resolve_arch("native") == ("native", None)
    assert tb.resolve_arch("sm_90a") == ("sm_90a", "sm_90a")
    assert tb.resolve_arch("compute_90") == ("compute_90", None)


BUILD_ONE = """import sys
sys.path.insert(0, sys.argv[1])
import tecc
print(tecc.build(sys.argv[2], include_dirs=[sys.argv[3]], arch="sm_90", tecc=sys.argv[4],
                 nvcc=sys.argv[5])[0])
"""


@test
def concurrent_builds_of_one_key():
    cache = fresh_cache("concurrent")
    te, inc = sources("concurrent")
    barrier = os.path.join(WORK, "barrier")
    shutil.rmtree(barrier, ignore_errors=True)
    os.makedirs(barrier)
    so = os.path.join(cache, key(te, inc), "scale.so")
    cmd = [sys.executable, "-c", BUILD_ONE, os.path.join(TOP, "python"), te, inc[0], TECC, NVCC]
    with Env(FAKE_NVCC_BARRIER=barrier, FAKE_NVCC_BARRIER_N="2"):
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True) for _ in range(2)]
        seen = set()  # the sizes a reader saw while they ran
        while any(p.poll() is None for p in procs):
            try:
                seen.add(os.path.getsize(so))
            except OSError:
                pass
            time.sleep(0.002)
    outs = [p.communicate()[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert [o.strip() for o in outs] == [so, so], outs
    assert seen <= {len(PIECE) * CHUNKS}, "a reader saw a library of %s bytes" % sorted(seen)
    with open(so, "rb") as f:
        assert f.read() == PIECE * CHUNKS
    assert entries(cache) == [os.path.basename(os.path.dirname(so))], entries(cache)
    calls = len(nvcc_calls())
    assert calls in (1, 2), calls
    if calls == 1:
        print("# the two builds did not overlap: one found the other's library")


@test
def a_real_nvcc_build_then_the_cache():
    fresh_cache("real")
    te, inc = sources("real")
    counter = os.path.join(WORK, "real-nvcc-calls")
    wrapper = write(os.path.join(WORK, "bin", "nvcc-counting"),
                    '#!/bin/sh\ncase "$1" in --version) ;; *) echo >> "%s";; esac\n'
                    'exec "%s" "$@"\n' % (counter, os.environ["NVCC"]))
    os.chmod(wrapper, 0o755)
    times = []
    for _ in range(2):
        started = time.perf_counter()
        so, h = build(te, inc, nvcc=wrapper, arch="sm_90")
        times.append(time.perf_counter() - started)
    with open(counter) as f:
        assert len(f.readlines()) == 1, "nvcc ran twice"
    lib = tecc.load(so, h)
    assert list(lib.kernels) == ["scale"], list(lib.kernels)
    print("# with nvcc: first build %.2f s, second %.1f ms" % (times[0], times[1] * 1e3))


a_real_nvcc_build_then_the_cache.skip = lambda: (
    "" if os.environ.get("NVCC") else "no $NVCC")


def main():
    os.makedirs(WORK, exist_ok=True)
    return taprun.run(tests, lambda fn: have_tecc() or getattr(fn, "skip", lambda: "")())


sys.exit(main())
