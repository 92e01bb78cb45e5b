/* tecc-conform.c — the GPU conformance runner.
 *
 *   tecc-conform [-O0|-O1|-O2] [options] PROGRAM.te...
 *
 * For each program: compile it with libtecc (the .cu and .h), write a
 * wrapper .cu that calls every entry point with arguments from arrays, and
 * build both with nvcc into a shared object; then, for each kernel and a set
 * of size bindings (0, 1, odd primes, sizes not a multiple of 4 or 8, large
 * ones), call it on fresh random inputs with aligned and misaligned
 * pointers and poisoned outputs, and compare EVERY element with the
 * reference interpreter (lib/interp.c) within abi.md §6: atol + rtol *
 * (|ref| + mag), mag the interpreter's magnitude bound (interp.h), so that
 * outputs that cancel compare at the scale of their terms.  It also checks
 * the argument statuses (negative size, NULL, aliasing: nothing written),
 * in-place calls of elementwise kernels, and that an aligned call gives
 * the misaligned call's bits.  The runner links no CUDA itself: the wrapper exports the few
 * runtime calls it needs, so it builds on machines without a GPU.
 *
 * Per-program comments tune the inputs:
 *   # conform: range NAME LO HI   inputs NAME (or * for all) drawn in [LO, HI]
 *                                 (then rounded to f8/f16/bf16, clamped to an
 *                                 f8's finite range, saturated to i8/u8's;
 *                                 by default [-2, 2], integers [-5, 5], u8
 *                                 [0, 10])
 *   # conform: specials NAME      sprinkle NaN, +-inf, +-0 into NAME (or *)
 *   # conform: sizes A=3 B=5      an extra size binding (up to 16 a program)
 *   # conform: max-elements N     skip bindings with a tensor larger than N
 *                                 (a skipped `sizes` line is noted in the log)
 *   # conform: define NAME=VALUE  bind a size variable at compile time (-D)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline.h"
#include "interp.h"

enum { MAX_DIRECTIVES = 32, MAX_SIZES = 16, MAX_SIZEVARS = 64, MAX_BINDINGS = 40, MAX_TENSORS = 64, MAX_SHOWN = 4, MAX_LEVELS = 3 };

/* ---- options and per-program settings ---------------------------------- */

typedef struct Options {
  int levels[MAX_LEVELS]; /* the -O levels asked for, in order */
  int nlevels;
  const char *nvcc;
  const char *arch;
  const char *workdir;
  int jobs;
  int quick;   /* small bindings only (sanitizer runs) */
  int tap;
  int keep;    /* keep the work directory */
  int no_device; /* interpreter only: no nvcc, no GPU (a CPU smoke test) */
  int perturb;   /* self-test: corrupt one reference element per output */
  int unbounded; /* name each output with elements without a bound, and how many */
  int no_fork;   /* run the programs in this process (compute-sanitizer) */
  int build_only; /* stop after building (with --keep: for a --prebuilt run) */
  int prebuilt;  /* reuse --workdir's objects: no tecc, no nvcc (the sanitizer
                    then watches only the runs) */
  uint64_t seed;
  int64_t max_elements;
  const char *nvcc_flags; /* nvcc's optimization flags (default -O2 -lineinfo) */
  const char *cache;      /* builds shared between runs, by content (--cache) */
} Options;

typedef struct Range {
  char name[64];
  double lo, hi;
  int specials;
} Range;

typedef struct Binding {
  int n;
  char names[8][64];
  int64_t values[8];
} Binding;

typedef struct Program {
  const char *path;
  int index;
  Range ranges[MAX_DIRECTIVES];
  int nranges;
  Binding extra[MAX_SIZES];
  int nextra;
  int64_t max_elements;
  tecc_define defines[8]; /* # conform: define NAME=VALUE (tecc -D) */
  char define_names[8][64];
  int ndefines;
  Arena *arena;
  Module *module;
  char *compile_error;
} Program;

/* What one program's run found (written by a child process to a file). */
typedef struct Tally {
  long kernels, bindings, cases, elements, failures, status_checks;
  long perturbed; /* --perturb: comparisons of a corrupted output */
  long unbounded; /* float elements with a finite reference and no bound,
                    integer and bool ones that are uncertain (interp.h) */
} Tally;

static Options opt = {.levels = {2}, .nvcc = "nvcc", .arch = "native", .seed = 12345,
                      .max_elements = 1 << 23, .nvcc_flags = "-O2 -lineinfo"};

/* ---- small utilities ------------------------------------------------------ */

static char *xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0)
    internal_error("out of memory");
  va_end(ap);
  return s;
}

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return 0;
  fputs(text, f);
  return fclose(f) == 0;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  Buf b;
  Arena *a = arena_new();
  buf_init(&b, a);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    buf_putn(&b, chunk, n);
  fclose(f);
  char *s = strdup(buf_cstr(&b));
  arena_free(a);
  return s;
}

/* xorshift64*: reproducible per (seed, program, kernel, binding). */
static uint64_t rng_state;

static void rng_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  rng_state = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xBF58476D1CE4E5B9ull) ^
              (c * 0x94D049BB133111EBull) ^ (d + 0x2545F4914F6CDD1Dull);
  if (!rng_state)
    rng_state = 1;
}

static uint64_t rng_next(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

static double rng_unit(void) { return (double)(rng_next() >> 11) * 0x1p-53; }

/* ---- directives ------------------------------------------------------------ */

static void parse_sizes_directive(Program *p, char *rest) {
  if (p->nextra >= MAX_SIZES) {
    fprintf(stderr, "tecc-conform: %s: more than %d '# conform: sizes' lines; the rest are not run\n", p->path,
            MAX_SIZES);
    return;
  }
  Binding *b = &p->extra[p->nextra++];
  memset(b, 0, sizeof *b);
  char *save = NULL;
  for (char *tok = strtok_r(rest, " \t\n", &save); tok && b->n < 8;
       tok = strtok_r(NULL, " \t\n", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq)
      continue;
    *eq = 0;
    snprintf(b->names[b->n], sizeof b->names[0], "%s", tok);
    b->values[b->n++] = strtoll(eq + 1, NULL, 10);
  }
}

static Range *find_range(Program *p, const char *name) {
  for (int i = 0; i < p->nranges; i++)
    if (strcmp(p->ranges[i].name, name) == 0)
      return &p->ranges[i];
  return NULL;
}

static Range *range_for(Program *p, const char *name) {
  Range *found = find_range(p, name);
  if (found)
    return found;
  if (p->nranges >= MAX_DIRECTIVES)
    return NULL;
  Range *r = &p->ranges[p->nranges++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->lo = NAN;
  return r;
}

static void parse_directive(Program *p, char *line) {
  char name[64];
  double lo, hi;
  long long n;
  if (sscanf(line, "range %63s %lf %lf", name, &lo, &hi) == 3) {
    Range *r = range_for(p, name);
    if (r)
      r->lo = lo, r->hi = hi;
  } else if (sscanf(line, "specials %63s", name) == 1) {
    Range *r = range_for(p, name);
    if (r)
      r->specials = 1;
  } else if (strncmp(line, "sizes ", 6) == 0) {
    parse_sizes_directive(p, line + 6);
  } else if (sscanf(line, "max-elements %lld", &n) == 1) {
    p->max_elements = n;
  } else if (sscanf(line, "define %63[A-Za-z0-9_]=%lld", name, &n) == 2 && p->ndefines < 8) {
    snprintf(p->define_names[p->ndefines], sizeof p->define_names[0], "%s", name);
    p->defines[p->ndefines].name = p->define_names[p->ndefines];
    p->defines[p->ndefines++].value = n;
  }
}

static void read_directives(Program *p) {
  char *text = read_text(p->path);
  if (!text)
    return;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *d = strstr(line, "# conform:");
    if (!d)
      continue;
    d += 10;
    while (*d == ' ')
      d++;
    parse_directive(p, d);
  }
  free(text);
}

/* ---- compiling -------------------------------------------------------------- */

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return strdup(".");
  return strndup(path, (size_t)(slash - path) + (slash == path));
}

/* The IR the interpreter runs: parsed, checked and lowered, NOT optimized,
 * so the oracle does not share the optimizer with the code under test. */
static Module *load_ir(Program *p, char **error) {
  tecc_options o;
  tecc_options_init(&o);
  o.no_warnings = 1;
  o.defines = p->defines;
  o.n_defines = (size_t)p->ndefines;
  Compilation c;
  char *dir = dir_of(p->path);
  compilation_init(&c, p->arena, &o, dir);
  free(dir);
  SourceFile *f = compilation_load(&c, p->path, p->path);
  if (!f) {
    *error = xprintf("cannot read %s: %s", p->path, strerror(errno));
    return NULL;
  }
  Module *m = compile_unoptimized_ir(&c, f);
  if (!m) {
    *error = strdup(diag_format_all(&c.diags, 1));
    return NULL;
  }
  return m;
}

static char *emit_cu(Program *p, int level, const char *cu_path, const char *h_path,
                     const char *h_name) {
  tecc_options o;
  tecc_options_init(&o);
  o.opt_level = level;
  o.no_warnings = 1;
  o.defines = p->defines;
  o.n_defines = (size_t)p->ndefines;
  o.header_name = h_name;
  tecc_result *r = tecc_compile_file(p->path, &o);
  char *err = NULL;
  if (!tecc_result_ok(r))
    err = xprintf("tecc failed:\n%s", tecc_result_format_diagnostics(r, 1));
  else if (!write_file(cu_path, tecc_result_output(r)) ||
           !write_file(h_path, tecc_result_header(r)))
    err = xprintf("cannot write %s", cu_path);
  tecc_result_free(r);
  return err;
}

static void emit_call(Buf *b, const Kernel *k, int ki) {
  buf_printf(b, "extern \"C\" int conform_call_%d(void *const *in, void *const *out, const int64_t *sizes) {\n", ki);
  buf_printf(b, "  return (int)%s(", k->name);
  const char *sep = "";
  for (int i = 0; i < k->ninputs; i++, sep = ", ") {
    const char *ct = dtype_ctype(k->inputs[i].dtype);
    if (k->inputs[i].shape.rank == 0)
      buf_printf(b, "%s*(const %s *)in[%d]", sep, ct, i);
    else
      buf_printf(b, "%s(const %s *)in[%d]", sep, ct, i);
  }
  for (int j = 0; j < k->noutputs; j++, sep = ", ")
    buf_printf(b, "%s(%s *)out[%d]", sep, dtype_ctype(k->outputs[j].dtype), j);
  for (int s = 0; s < ir_nparams(k); s++, sep = ", ")
    buf_printf(b, "%ssizes[%d]", sep, s);
  buf_printf(b, "%s(cudaStream_t)0);\n}\n", sep);
}

static const char wrapper_runtime[] =
    "#include <cuda_runtime.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "extern \"C\" int conform_malloc(void **p, size_t n) { return (int)cudaMalloc(p, n); }\n"
    "extern \"C\" int conform_free(void *p) { return (int)cudaFree(p); }\n"
    "extern \"C\" int conform_h2d(void *d, const void *h, size_t n) { return (int)cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); }\n"
    "extern \"C\" int conform_d2h(void *h, const void *d, size_t n) { return (int)cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost); }\n"
    "extern \"C\" int conform_memset(void *d, int v, size_t n) { return (int)cudaMemset(d, v, n); }\n"
    "extern \"C\" int conform_sync(void) { cudaError_t e = cudaDeviceSynchronize(); return (int)(e ? e : cudaGetLastError()); }\n"
    "extern \"C\" void conform_device(char *buf, int n) { cudaDeviceProp p; int d = 0; cudaGetDevice(&d);\n"
    "  if (cudaGetDeviceProperties(&p, d) == cudaSuccess) { strncpy(buf, p.name, n - 1); buf[n - 1] = 0; } else buf[0] = 0; }\n";

static char *wrapper_text(const Module *m, const char *h_name) {
  Arena *a = arena_new();
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, "/* Generated by tecc-conform. */\n%s#include \"%s\"\n", wrapper_runtime, h_name);
  for (int ki = 0; ki < m->nkernels; ki++)
    emit_call(&b, m->kernels[ki], ki);
  char *s = strdup(buf_cstr(&b));
  arena_free(a);
  return s;
}

/* FNV-1a over a text, from its second line when skip_first (the .cu and
 * .h name the level and the source in their first line). */
static uint64_t hash_text(uint64_t h, const char *text, int skip_first) {
  if (skip_first && text) {
    const char *nl = strchr(text, '\n');
    text = nl ? nl + 1 : "";
  }
  for (const char *c = text ? text : ""; *c; c++)
    h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull;
}

/* --cache=DIR: the key of a build is everything nvcc reads (the .cu and .h
 * past their first line, the wrapper, the command's flags).  -O1 and -O2
 * often give the same kernels: the second level then copies the first's
 * object instead of compiling it again.  Returns the key's path. */
static char *cache_path(const char *cu, const char *h, const char *w) {
  char *texts[3] = {read_text(cu), read_text(h), read_text(w)};
  uint64_t key = 0xcbf29ce484222325ull;
  key = hash_text(key, opt.nvcc, 0);
  key = hash_text(key, opt.nvcc_flags, 0);
  key = hash_text(key, opt.arch, 0);
  for (int i = 0; i < 3; i++) {
    key = hash_text(key, texts[i], i < 2);
    free(texts[i]);
  }
  return xprintf("%s/%016llx.so", opt.cache, (unsigned long long)key);
}

/* The directory of one level's files: WORKDIR/O<level>. */
static char *level_dir(int level) { return xprintf("%s/O%d", opt.workdir, level); }

/* The shell command that builds program `index`'s shared object in `dir`. */
static char *build_command(const char *dir, int index, const char *cached) {
  char *nvcc = xprintf("'%s' %s -arch=%s -Xcompiler -fPIC -shared -cudart shared"
                       " -o p%d.so p%d.cu w%d.cu > p%d.nvcc.log 2>&1",
                       opt.nvcc, opt.nvcc_flags, opt.arch, index, index, index, index);
  char *cmd;
  if (!cached)
    cmd = xprintf("(cd '%s' && rm -f p%d.so && %s)", dir, index, nvcc);
  else /* a copy from the cache, or a build that fills it (mv: atomic) */
    cmd = xprintf("(cd '%s' && rm -f p%d.so && if [ -f '%s' ]; then cp '%s' p%d.so &&"
                  " echo cached > p%d.cached; else %s && cp p%d.so '%s.'$$ && mv '%s.'$$ '%s'; fi)",
                  dir, index, cached, cached, index, index, nvcc, index, cached, cached, cached);
  free(nvcc);
  return cmd;
}

/* Writes one level's .cu/.h and wrapper; returns the nvcc command, or NULL
 * with *err set. */
static char *prepare_level(Program *p, int level, char **err) {
  char *dir = level_dir(level);
  mkdir(dir, 0755);
  char *cu = xprintf("%s/p%d.cu", dir, p->index);
  char *h = xprintf("%s/p%d.h", dir, p->index);
  char *hname = xprintf("p%d.h", p->index);
  char *w = xprintf("%s/w%d.cu", dir, p->index);
  char *cmd = NULL;
  *err = emit_cu(p, level, cu, h, hname);
  if (!*err) {
    char *wt = wrapper_text(p->module, hname);
    if (!write_file(w, wt))
      *err = xprintf("cannot write %s", w);
    free(wt);
  }
  if (!*err && !opt.no_device) {
    char *cached = opt.cache ? cache_path(cu, h, w) : NULL;
    cmd = build_command(dir, p->index, cached);
    free(cached);
  }
  free(dir), free(cu), free(h), free(hname), free(w);
  return cmd;
}

/* Compiles the program to IR, and per level to .cu/.h and wrapper; cmds[l]
 * gets level l's nvcc command or NULL (p->compile_error set on an error). */
static void prepare(Program *p, char **cmds) {
  char *err = NULL;
  p->module = load_ir(p, &err);
  if (!p->module) {
    p->compile_error = err;
    return;
  }
  if (opt.prebuilt)
    return;
  for (int l = 0; l < opt.nlevels && !err; l++)
    cmds[l] = prepare_level(p, opt.levels[l], &err);
  p->compile_error = err;
}

static void run_parallel(char **cmds, int n, int *status);

/* Builds every program, `jobs` at a time, each program's levels one after
 * the other in the order asked for, so that a level whose files are the
 * same as an earlier one's takes its object from --cache; built[b] is 0
 * where program b / nlevels has its object at level b % nlevels. */
static void build_all(Program *ps, int n, char **cmds, int *built) {
  size_t count = (size_t)(n > 0 ? n : 0) + 1;
  char **joined = calloc(count, sizeof *joined);
  int *status = calloc(count, sizeof *status);
  for (int i = 0; i < n; i++) {
    Buf b;
    Arena *a = arena_new();
    buf_init(&b, a);
    for (int l = 0; l < opt.nlevels; l++)
      if (cmds[i * opt.nlevels + l])
        buf_printf(&b, "%s%s", b.len ? "; " : "", cmds[i * opt.nlevels + l]);
    joined[i] = b.len ? strdup(buf_cstr(&b)) : NULL;
    arena_free(a);
  }
  run_parallel(joined, n, status);
  for (int b = 0; b < n * opt.nlevels; b++) {
    char *dir = level_dir(opt.levels[b % opt.nlevels]);
    char *so = xprintf("%s/p%d.so", dir, b / opt.nlevels);
    int have = !ps[b / opt.nlevels].compile_error && (opt.prebuilt || cmds[b]);
    built[b] = have && access(so, F_OK) == 0 ? 0 : 1;
    free(dir), free(so);
  }
  for (int i = 0; i < n; i++)
    free(joined[i]);
  free(joined), free(status);
}

/* Runs the shell commands, `jobs` at a time; status[i] gets each exit code. */
static void run_parallel(char **cmds, int n, int *status) {
  int running = 0, next = 0;
  pid_t *pids = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof(pid_t));
  while (next < n || running > 0) {
    if (next < n && running < opt.jobs) {
      if (!cmds[next]) {
        status[next++] = opt.prebuilt ? 0 : -1;
        continue;
      }
      pid_t pid = fork();
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmds[next], (char *)NULL);
        _exit(127);
      }
      pids[next++] = pid;
      running++;
      continue;
    }
    int st;
    pid_t done = wait(&st);
    if (done < 0)
      break;
    for (int i = 0; i < n; i++)
      if (pids[i] == done)
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    running--;
  }
  free(pids);
}

/* ---- the device side, through the wrapper ----------------------------------- */

typedef int (*call_fn)(void *const *, void *const *, const int64_t *);

typedef struct Device {
  void *so;
  int (*malloc_)(void **, size_t);
  int (*free_)(void *);
  int (*h2d)(void *, const void *, size_t);
  int (*d2h)(void *, const void *, size_t);
  int (*memset_)(void *, int, size_t);
  int (*sync)(void);
  void (*name)(char *, int);
} Device;

static int device_open(Device *d, const char *so_path, FILE *log) {
  d->so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!d->so) {
    fprintf(log, "#   dlopen: %s\n", dlerror());
    return 0;
  }
  *(void **)&d->malloc_ = dlsym(d->so, "conform_malloc");
  *(void **)&d->free_ = dlsym(d->so, "conform_free");
  *(void **)&d->h2d = dlsym(d->so, "conform_h2d");
  *(void **)&d->d2h = dlsym(d->so, "conform_d2h");
  *(void **)&d->memset_ = dlsym(d->so, "conform_memset");
  *(void **)&d->sync = dlsym(d->so, "conform_sync");
  *(void **)&d->name = dlsym(d->so, "conform_device");
  return d->malloc_ && d->free_ && d->h2d && d->d2h && d->memset_ && d->sync && d->name;
}

/* ---- one kernel, one binding -------------------------------------------------- */

typedef struct Arg {
  DType dt;
  int rank;
  int64_t n;
  size_t bytes;
  void *host;     /* inputs: random data; outputs: what came back */
  void *ref;      /* outputs: the interpreter's stored result */
  double *mag;    /* outputs: the interpreter's magnitude bound per element */
  void *base;     /* device allocation */
  void *dev;      /* the pointer passed (base + misalignment) */
} Arg;

/* One level of a program in the running process: its object, the current
 * kernel's entry point and what its calls found. */
typedef struct Level {
  int level;
  int open;      /* its object is loaded */
  Device d;
  call_fn call;  /* the current kernel's, or NULL */
  int statuses_done; /* the current kernel's argument-error checks ran */
  Tally t;
} Level;

typedef struct Case {
  Program *p;
  const Kernel *k;
  int ki;
  call_fn call;
  Device *d;
  const int64_t *sizes;
  Arg in[MAX_TENSORS], out[MAX_TENSORS];
  int ref_status;
  int level;
  FILE *log;
  Tally *t;
  char label[256];
} Case;

/* The 8-bit floats: one ulp, 2^-mantissa bits of |ref| (a normal one's
 * ulp is at most that), and the ulp of the subnormals: an f8 output of an
 * f32 value that the GPU computes a few f32 ulps away from the reference
 * rounds to the neighbouring f8 value where the two straddle a rounding
 * boundary.  Integer outputs (i8, u8) compare exactly. */
static const struct {
  double rtol, atol;
} tolerance[DT_COUNT] = {
    [DT_F64] = {1e-12, 1e-12},      [DT_F32] = {1e-5, 1e-6},
    [DT_F16] = {2e-3, 1e-5},        [DT_BF16] = {1.6e-2, 1e-5},
    [DT_F8E4M3] = {0x1p-3, 0x1p-9}, [DT_F8E5M2] = {0x1p-2, 0x1p-16},
};

static size_t esize(DType t) { return (size_t)dtype_size(t); }

/* Default ranges: floats in [-2, 2] (an f8 rounds within it), integers
 * in [-5, 5], u8 in [0, 10] (tests/gen/gen assumes these).  A drawn float
 * is never zero in its dtype. */
static double random_value(DType t, const Range *r) {
  if (r && r->specials && rng_next() % 32 == 0) {
    static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};
    return specials[rng_next() % 5];
  }
  if (t == DT_BOOL)
    return (double)(rng_next() & 1);
  int has = r && !isnan(r->lo);
  double lo = has ? r->lo : dtype_is_float(t) ? -2 : t == DT_U8 ? 0 : -5;
  double hi = has ? r->hi : dtype_is_float(t) ? 2 : t == DT_U8 ? 10 : 5;
  if (!dtype_is_float(t))
    return floor(lo + rng_unit() * (hi - lo + 1));
  for (int tries = 0;; tries++) { /* never zero (unless the range is) */
    double x = lo + rng_unit() * (hi - lo);
    if (dtype_is_f8(t)) { /* the f8 value itself, finite: e4m3 is NaN past 464 */
      double top = t == DT_F8E4M3 ? 448 : 57344;
      x = interp_f8_value(t, interp_f8_bits(t, fmax(-top, fmin(top, x))));
      if (x != 0 || tries >= 100)
        return x;
    } else if ((x != 0 && interp_round_bf16(x) != 0) || tries >= 100) {
      return x;
    }
  }
}

static void fill_input(Case *c, int i) {
  const KernelInput *ki = &c->k->inputs[i];
  Range *r = find_range(c->p, ki->name);
  Range *all = find_range(c->p, "*");
  if (r && isnan(r->lo) && !r->specials)
    r = NULL;
  if (!r && all && (!isnan(all->lo) || all->specials))
    r = all;
  for (int64_t e = 0; e < c->in[i].n; e++)
    interp_store(ki->dtype, c->in[i].host, e, random_value(ki->dtype, r));
}

static int alloc_arg(Case *c, Arg *a, DType dt, int rank, const Shape *s, int is_output) {
  a->dt = dt;
  a->rank = rank;
  a->n = interp_numel(s, c->sizes);
  a->bytes = (size_t)(a->n > 0 ? a->n : 0) * esize(dt);
  a->host = malloc(a->bytes + 16);
  a->ref = malloc(a->bytes + 16);
  a->mag = is_output ? malloc((size_t)(a->n > 0 ? a->n : 0) * sizeof(double) + 16) : NULL;
  if (!a->host || !a->ref || (is_output && !a->mag))
    return 0;
  return opt.no_device || c->d->malloc_(&a->base, a->bytes + 512) == 0;
}

static void free_args(Case *c) {
  for (int i = 0; i < c->k->ninputs; i++) {
    free(c->in[i].host), free(c->in[i].ref), free(c->in[i].mag);
    if (c->in[i].base)
      c->d->free_(c->in[i].base);
  }
  for (int j = 0; j < c->k->noutputs; j++) {
    free(c->out[j].host), free(c->out[j].ref), free(c->out[j].mag);
    if (c->out[j].base)
      c->d->free_(c->out[j].base);
  }
  memset(c->in, 0, sizeof c->in);
  memset(c->out, 0, sizeof c->out);
}

static void fail(Case *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(c->log, "#   FAIL %s: ", c->label);
  vfprintf(c->log, fmt, ap);
  fprintf(c->log, "\n");
  va_end(ap);
  c->t->failures++;
}

/* Points every tensor at base (+ one element when misaligned); empty
 * tensors get NULL when null_empty. */
static void place(Case *c, int misalign, int null_empty) {
  for (int i = 0; i < c->k->ninputs; i++) {
    Arg *a = &c->in[i];
    a->dev = (char *)a->base + (misalign ? esize(a->dt) : 0);
    if (null_empty && a->n == 0)
      a->dev = NULL;
  }
  for (int j = 0; j < c->k->noutputs; j++) {
    Arg *a = &c->out[j];
    a->dev = (char *)a->base + (misalign ? esize(a->dt) : 0);
    if (null_empty && a->n == 0)
      a->dev = NULL;
  }
}

/* Copies inputs, poisons outputs (0xFF: NaN for floats, -1 for ints, 255
 * for bool), calls, syncs.  Returns the entry point's status, or -1 when a
 * CUDA call of the runner itself failed. */
static int device_call(Case *c, void *const *outs_override) {
  void *ins[MAX_TENSORS], *outs[MAX_TENSORS];
  for (int i = 0; i < c->k->ninputs; i++) {
    Arg *a = &c->in[i];
    if (a->dev && a->bytes && c->d->h2d(a->dev, a->host, a->bytes))
      return -1;
    ins[i] = a->rank == 0 ? a->host : a->dev;
  }
  for (int j = 0; j < c->k->noutputs; j++) {
    Arg *a = &c->out[j];
    if (a->dev && a->bytes && c->d->memset_(a->dev, 0xFF, a->bytes))
      return -1;
    outs[j] = outs_override ? outs_override[j] : a->dev;
  }
  if (c->d->sync())
    return -1;
  int st = c->call(ins, outs, c->sizes);
  int sync = c->d->sync();
  if (sync) {
    fail(c, "CUDA error %d after the call (status %d)", sync, st);
    return -1;
  }
  return st;
}

static int fetch_outputs(Case *c) {
  for (int j = 0; j < c->k->noutputs; j++) {
    Arg *a = &c->out[j];
    if (a->dev && a->bytes && c->d->d2h(a->host, a->dev, a->bytes))
      return 0;
  }
  return 1;
}

static int all_poisoned(const Arg *a) {
  const unsigned char *b = a->host;
  for (size_t i = 0; i < a->bytes; i++)
    if (b[i] != 0xFF)
      return 0;
  return 1;
}

static void format_index(const Shape *s, const int64_t *sizes, int64_t flat,
                         char *buf, size_t n) {
  int64_t idx[TECC_MAX_RANK];
  for (int a = s->rank - 1; a >= 0; a--) {
    int64_t d = interp_dim(&s->d[a], sizes);
    idx[a] = d ? flat % d : 0;
    flat = d ? flat / d : 0;
  }
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int a = 0; a < s->rank && len < n; a++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", a ? ", " : "", (long long)idx[a]);
  if (len < n)
    snprintf(buf + len, n - len, "]");
}

/* The tolerance an output gets: its dtype's, or that of the least precise
 * float computation it depends on when that is looser (an f32 sum converted
 * to an f64 output, or added to an f64 value, is only as precise as f32).
 * Inputs, constants, casts, broadcasts and selects compute nothing the
 * reference does not mirror exactly; arithmetic, math and reductions on
 * floats carry their dtype's rounding. */
static DType tolerance_dtype(const Kernel *k, const KernelOutput *o) {
  int nv = k->values.len;
  signed char *worst = calloc((size_t)nv + 1, 1); /* DType + 1; 0: exact */
  if (!worst)
    return o->dtype;
  for (int id = 0; id < nv; id++) {
    const Value *v = k->values.items[id];
    int w = 0;
    for (int a = 0; a < v->nargs; a++) {
      int wa = worst[v->args[a]->id];
      if (wa && (!w || tolerance[wa - 1].rtol > tolerance[w - 1].rtol))
        w = wa;
    }
    int computes = v->op == IR_UNARY || v->op == IR_BINARY || v->op == IR_REDUCE;
    if (computes && dtype_is_float(v->dtype) &&
        (!w || tolerance[v->dtype].rtol > tolerance[w - 1].rtol))
      w = v->dtype + 1;
    worst[id] = (signed char)w;
  }
  DType t = o->dtype;
  int w = worst[o->value->id];
  if (dtype_is_float(t) && w && tolerance[w - 1].rtol > tolerance[t].rtol)
    t = (DType)(w - 1);
  free(worst);
  return t;
}

/* abi.md §6's bound for a float reference r with magnitude bound mag:
 * atol + rtol * (|r| + mag).  The log2(K) growth abi.md allows for a
 * reduction over K elements is in mag (a sum's rule), once: growing rtol
 * too would loosen the bound of a large sum some 20 times. */
static double element_bound(DType tol, double r, double mag) {
  return tolerance[tol].atol + tolerance[tol].rtol * (fabs(r) + mag);
}

static int element_ok(DType dt, DType tol, const void *got, const void *ref, const double *mag,
                      int64_t i) {
  /* an integer or bool from a step of a computed value near the step
   * (interp.h): either side is correct (counted as unbounded) */
  if (!dtype_is_float(dt) && isinf(mag[i]))
    return 1;
  if (!dtype_is_float(dt))
    return memcmp((const char *)got + i * (int64_t)esize(dt),
                  (const char *)ref + i * (int64_t)esize(dt), esize(dt)) == 0;
  double g = interp_load(dt, got, i), r = interp_load(dt, ref, i);
  if (isnan(r))
    return isnan(g);
  if (isinf(r))
    return g == r;
  /* no bound (interp.h): a singularity, or arithmetic that may overflow
   * its f32 range where the float64 reference does not; the element says
   * nothing, whatever it holds (counted as unbounded) */
  if (isinf(mag[i]))
    return 1;
  return isfinite(g) && fabs(g - r) <= element_bound(tol, r, mag[i]);
}

static int element_unbounded(DType dt, const void *ref, const double *mag, int64_t i) {
  return isinf(mag[i]) && (!dtype_is_float(dt) || isfinite(interp_load(dt, ref, i)));
}

/* Output j's elements and those without a bound (a singularity, an
 * overflow of the arithmetic's range, a step of a computed value near the
 * step: interp.h), counted; --unbounded names the output where there are
 * any, so that a program whose checks the reference waives can be found. */
static void count_unbounded(Case *c, int j, const char *what) {
  Arg *a = &c->out[j];
  long u = 0;
  for (int64_t i = 0; c->ref_status == 0 && i < a->n; i++)
    u += element_unbounded(a->dt, a->ref, a->mag, i);
  if (opt.unbounded && u > 0)
    fprintf(c->log, "#   unbounded %s: %s: output %s: %ld of %lld elements\n", c->label, what,
            c->k->outputs[j].name, u, (long long)a->n);
  c->t->unbounded += u;
  c->t->elements += a->n;
}

static void compare_output(Case *c, int j, const char *what) {
  const KernelOutput *o = &c->k->outputs[j];
  Arg *a = &c->out[j];
  c->t->perturbed += opt.perturb && a->n > 0;
  int64_t bad = 0;
  DType tol = tolerance_dtype(c->k, o);
  for (int64_t i = 0; i < a->n; i++) {
    if (element_ok(a->dt, tol, a->host, a->ref, a->mag, i))
      continue;
    if (bad++ < MAX_SHOWN) {
      char idx[128];
      format_index(&o->shape, c->sizes, i, idx, sizeof idx);
      if (dtype_is_float(a->dt))
        fail(c, "%s: output %s%s = %.9g, expected %.9g (mag %.3g, bound %.3g)", what, o->name,
             idx, interp_load(a->dt, a->host, i), interp_load(a->dt, a->ref, i), a->mag[i],
             element_bound(tol, interp_load(a->dt, a->ref, i), a->mag[i]));
      else
        fail(c, "%s: output %s%s = %.9g, expected %.9g", what, o->name, idx,
             interp_load(a->dt, a->host, i), interp_load(a->dt, a->ref, i));
    } else {
      c->t->failures++;
    }
  }
  if (bad > MAX_SHOWN)
    fprintf(c->log, "#   ... %lld mismatches in %s\n", (long long)bad, o->name);
  count_unbounded(c, j, what);
}

/* --perturb: the middle element of each reference output moves far out of
 * tolerance, so each comparison of a non-empty output must find exactly one
 * mismatch: the runner's own check.  A float moves by 4x its bound (plus
 * 0.5 + |r|/2): a result within the bound of the true reference is then out
 * of the moved one's, whose bound grows by rtol of the move only; an
 * infinite bound moves it to inf, a non-finite reference to 1 (bound 0).
 * An integer or bool moves by one and is compared exactly (bound 0), even
 * where the reference was uncertain. */
static void perturb_refs(Case *c) {
  for (int j = 0; j < c->k->noutputs; j++) {
    Arg *a = &c->out[j];
    if (a->n == 0)
      continue;
    int64_t i = (a->n - 1) / 2;
    double r = interp_load(a->dt, a->ref, i);
    if (a->dt == DT_BOOL) {
      r = r == 0;
      a->mag[i] = 0;
    } else if (!dtype_is_float(a->dt)) {
      r = r > 0 ? r - 1 : r + 1; /* never saturates */
      a->mag[i] = 0;
    } else if (isfinite(r)) {
      DType tol = tolerance_dtype(c->k, &c->k->outputs[j]);
      r += 4 * element_bound(tol, r, a->mag[i]) + 0.5 + fabs(r) * 0.5;
    } else {
      r = 1.0;
      a->mag[i] = 0;
    }
    if (a->dt == DT_I64)
      ((int64_t *)a->ref)[i] += ((int64_t *)a->ref)[i] > 0 ? -1 : 1; /* exact */
    else
      interp_store(a->dt, a->ref, i, r);
  }
}

/* The main check: one call with the given placement, every element. */
static void check_call(Case *c, int misalign, int null_empty) {
  const char *what = misalign ? "misaligned" : "aligned";
  place(c, misalign, null_empty);
  int st = device_call(c, NULL);
  c->t->cases++;
  if (st < 0)
    return;
  if (st != c->ref_status) {
    fail(c, "%s: status %d, expected %d", what, st, c->ref_status);
    return;
  }
  if (!fetch_outputs(c)) {
    fail(c, "copying outputs back failed");
    return;
  }
  for (int j = 0; j < c->k->noutputs; j++) {
    if (c->ref_status != 0) {
      if (!all_poisoned(&c->out[j]))
        fail(c, "%s: status %d but output %s was written", what, st, c->k->outputs[j].name);
    } else {
      compare_output(c, j, what);
    }
  }
}

/* A call gives bitwise-identical outputs to the one before it (abi.md
 * §5), which check_level() made with misaligned pointers: this one's are
 * aligned, so it also checks that the packed and element-by-element
 * instances fold the same elements in the same order (the stream
 * kernels' fold groups, doc/internals.md). */
static void check_deterministic(Case *c) {
  if (c->ref_status != 0)
    return;
  place(c, 0, 0);
  void *first[MAX_TENSORS];
  for (int j = 0; j < c->k->noutputs; j++) {
    first[j] = malloc(c->out[j].bytes + 1);
    memcpy(first[j], c->out[j].host, c->out[j].bytes);
  }
  if (device_call(c, NULL) == 0 && fetch_outputs(c)) {
    for (int j = 0; j < c->k->noutputs; j++)
      if (memcmp(first[j], c->out[j].host, c->out[j].bytes) != 0)
        fail(c, "two runs differ in output %s (not deterministic)", c->k->outputs[j].name);
  }
  for (int j = 0; j < c->k->noutputs; j++)
    free(first[j]);
}

static void nothing_written(Case *c, void *const *outs, int st, const char *what);

static void expect_status(Case *c, void *const *outs, int want, const char *what) {
  int st = device_call(c, outs);
  c->t->status_checks++;
  if (st < 0)
    return;
  if (st != want) {
    fail(c, "%s: status %d, expected %d", what, st, want);
    return;
  }
  nothing_written(c, outs, st, what);
}

/* After a refused call: no output (but those in outs that are not its
 * own buffer) holds anything but the poison. */
static void nothing_written(Case *c, void *const *outs, int st, const char *what) {
  fetch_outputs(c);
  for (int j = 0; j < c->k->noutputs; j++)
    if (c->out[j].dev && (!outs || outs[j] == c->out[j].dev) && !all_poisoned(&c->out[j]))
      fail(c, "%s: output %s written after status %d", what, c->k->outputs[j].name, st);
}

static int kernel_has(const Kernel *k, IrOp op) {
  for (int i = 0; i < k->values.len; i++)
    if (((Value *)k->values.items[i])->op == op)
      return 1;
  return 0;
}

static int same_shape(const Shape *a, const Shape *b) {
  if (a->rank != b->rank)
    return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i].var != b->d[i].var || (a->d[i].var < 0 && a->d[i].size != b->d[i].size))
      return 0;
  return 1;
}

/* In place: an elementwise kernel's output j written over input i.  A
 * kernel that gathers (a take, a slice, a concat) reads other positions
 * than it writes: it refuses, with TECC_ERROR_ALIASING and nothing
 * written, unless optimization removed the gather (then it is in place
 * like any other). */
static void check_in_place(Case *c) {
  if (c->ref_status != 0 || kernel_has(c->k, IR_REDUCE))
    return;
  int gathers = kernel_has(c->k, IR_TAKE);
  for (int j = 0; j < c->k->noutputs; j++) {
    for (int i = 0; i < c->k->ninputs; i++) {
      const KernelInput *in = &c->k->inputs[i];
      const KernelOutput *out = &c->k->outputs[j];
      if (in->dtype != out->dtype || in->shape.rank == 0 || !same_shape(&in->shape, &out->shape) ||
          c->in[i].n == 0)
        continue;
      place(c, 0, 0);
      void *outs[MAX_TENSORS];
      for (int q = 0; q < c->k->noutputs; q++)
        outs[q] = c->out[q].dev;
      outs[j] = c->in[i].dev;
      int st = device_call(c, outs);
      c->t->status_checks++;
      if (gathers && st == 2) {
        nothing_written(c, outs, st, "in-place over a kernel that gathers");
        return;
      }
      if (st != 0) {
        fail(c, "in-place %s over %s: status %d", out->name, in->name, st);
        return;
      }
      Arg saved = c->out[j];
      c->out[j].dev = c->in[i].dev;
      if (fetch_outputs(c))
        for (int q = 0; q < c->k->noutputs; q++)
          compare_output(c, q, "in-place");
      c->out[j] = saved;
      return; /* one in-place check per kernel binding */
    }
  }
}

static int first_nonempty_input(Case *c) {
  for (int i = 0; i < c->k->ninputs; i++)
    if (c->in[i].rank > 0 && c->in[i].n >= 2)
      return i;
  return -1;
}


/* Argument errors: nothing written, the documented status. */
static void check_statuses(Case *c) {
  place(c, 0, 0);
  int64_t *sizes = (int64_t *)c->sizes;
  for (int s = 0; s < ir_nparams(c->k); s++) {
    int64_t keep = sizes[s];
    sizes[s] = -1;
    expect_status(c, NULL, 1, "negative size");
    sizes[s] = keep;
  }
  int i = first_nonempty_input(c);
  if (i >= 0) {
    void *keep = c->in[i].dev;
    c->in[i].dev = NULL;
    expect_status(c, NULL, 1, "NULL input");
    c->in[i].dev = keep;
  }
  if (c->k->noutputs > 0 && c->out[0].n > 0) {
    void *outs[MAX_TENSORS];
    for (int j = 0; j < c->k->noutputs; j++)
      outs[j] = c->out[j].dev;
    outs[0] = NULL;
    expect_status(c, outs, 1, "NULL output");
    if (i >= 0) {
      outs[0] = (char *)c->in[i].dev + esize(c->in[i].dt);
      expect_status(c, outs, 2, "output overlapping an input");
      /* the input must be intact */
      void *back = malloc(c->in[i].bytes + 1);
      if (back && !c->d->d2h(back, c->in[i].dev, c->in[i].bytes) &&
          memcmp(back, c->in[i].host, c->in[i].bytes) != 0)
        fail(c, "aliasing call modified input %s", c->k->inputs[i].name);
      free(back);
    }
    if (c->k->noutputs > 1 && c->out[1].n > 0 && c->out[0].n > 1) {
      for (int j = 0; j < c->k->noutputs; j++)
        outs[j] = c->out[j].dev;
      outs[1] = (char *)c->out[0].dev + esize(c->out[0].dt);
      expect_status(c, outs, 2, "two overlapping outputs");
    }
  }
}

static void binding_label(Case *c) {
  size_t len = (size_t)snprintf(c->label, sizeof c->label, "%s:%s", c->p->path, c->k->name);
  for (int s = 0; s < ir_nparams(c->k) && len < sizeof c->label; s++)
    len += (size_t)snprintf(c->label + len, sizeof c->label - len, "%s%s=%lld",
                            s ? "," : " ", c->k->sizevars[s].name, (long long)c->sizes[s]);
  if (len < sizeof c->label)
    snprintf(c->label + len, sizeof c->label - len, " -O%d", c->level);
}

static int all_at_least_two(const int64_t *sizes, int n) {
  for (int s = 0; s < n; s++)
    if (sizes[s] < 2)
      return 0;
  return 1;
}

/* The checks of one level's entry point on the binding's inputs, against
 * the reference already in c->out. */
static void check_level(Case *c, Level *lv) {
  c->d = &lv->d;
  c->call = lv->call;
  c->t = &lv->t;
  c->level = lv->level;
  binding_label(c);
  c->t->bindings++;
  int with_statuses = !lv->statuses_done && all_at_least_two(c->sizes, ir_nparams(c->k));
  check_call(c, 0, 0);
  check_call(c, 1, 1);
  check_deterministic(c);
  check_in_place(c);
  if (with_statuses) {
    check_statuses(c);
    lv->statuses_done = 1;
  }
}

/* One binding: inputs, the reference once, then every level's calls. */
static void run_binding(Case *c, Level *lv, int nlv) {
  int first = 0; /* the device that allocates and copies: any loaded level's */
  while (!opt.no_device && first < nlv - 1 && !lv[first].open)
    first++;
  c->level = lv[first].level;
  c->t = &lv[first].t;
  c->d = &lv[first].d;
  binding_label(c);
  for (int i = 0; i < c->k->ninputs; i++)
    if (!alloc_arg(c, &c->in[i], c->k->inputs[i].dtype, c->k->inputs[i].shape.rank, &c->k->inputs[i].shape, 0))
      return fail(c, "allocation failed"), free_args(c);
  for (int j = 0; j < c->k->noutputs; j++)
    if (!alloc_arg(c, &c->out[j], c->k->outputs[j].dtype, c->k->outputs[j].shape.rank, &c->k->outputs[j].shape, 1))
      return fail(c, "allocation failed"), free_args(c);
  for (int i = 0; i < c->k->ninputs; i++)
    fill_input(c, i);
  const void *ins[MAX_TENSORS];
  void *refs[MAX_TENSORS];
  for (int i = 0; i < c->k->ninputs; i++)
    ins[i] = c->in[i].host;
  for (int j = 0; j < c->k->noutputs; j++)
    refs[j] = c->out[j].ref;
  double *mags[MAX_TENSORS];
  for (int j = 0; j < c->k->noutputs; j++)
    mags[j] = c->out[j].mag;
  c->ref_status = interp_kernel_mag(c->k, c->sizes, ins, refs, NULL, mags);
  if (c->ref_status == INTERP_OUT_OF_MEMORY)
    return fail(c, "the interpreter ran out of memory"), free_args(c);
  if (opt.no_device && opt.perturb && c->ref_status == 0) {
    /* no device: the "result" is the reference itself, so that the
     * comparison (bounds included) is checked against the moved one */
    for (int j = 0; j < c->k->noutputs; j++)
      memcpy(c->out[j].host, c->out[j].ref, c->out[j].bytes);
  }
  if (opt.perturb && c->ref_status == 0)
    perturb_refs(c);
  if (opt.no_device) {
    c->t->bindings++;
    for (int j = 0; j < c->k->noutputs; j++) {
      if (opt.perturb && c->ref_status == 0)
        compare_output(c, j, "unperturbed reference");
      else
        count_unbounded(c, j, "reference"); /* --no-device: nothing to compare */
    }
    free_args(c);
    return;
  }
  for (int l = 0; l < nlv; l++)
    if (lv[l].call)
      check_level(c, &lv[l]);
  free_args(c);
}

/* ---- size bindings --------------------------------------------------------------- */

static const int64_t profiles[][4] = {
    {0, 0, 0, 0},   {1, 1, 1, 1},     {7, 7, 7, 7},   {131, 7, 3, 5},
    {3, 131, 7, 2}, {0, 5, 3, 2},     {5, 0, 3, 2},   {13, 1, 9, 1},
    {1, 257, 1, 3}, {37, 33, 17, 6},  {2, 3, 5, 7},   {65, 1037, 2, 3},
};

static const int64_t large_profiles[][4] = {
    {4250663, 0, 0, 0}, {4099, 1037, 0, 0}, {1037, 67, 61, 0}, {131, 67, 23, 21},
};

static const int64_t long_row_profiles[][4] = {
    {5, 300007, 0, 0}, {1037, 4099, 0, 0}, {300007, 5, 0, 0},
};

/* The largest element count of the kernel's tensors under `sizes`, or -1
 * when one overflows int64 (no such binding can be allocated). */
static int64_t max_numel(const Kernel *k, const int64_t *sizes) {
  int64_t m = 0;
  for (int i = 0; i < k->ninputs; i++) {
    int64_t n = interp_numel(&k->inputs[i].shape, sizes);
    if (n < 0)
      return -1;
    if (n > m)
      m = n;
  }
  for (int j = 0; j < k->noutputs; j++) {
    int64_t n = interp_numel(&k->outputs[j].shape, sizes);
    if (n < 0)
      return -1;
    if (n > m)
      m = n;
  }
  return m;
}

/* The bindings a kernel runs at: the runner's profiles, then the
 * program's `# conform: sizes` lines, less those with a tensor over the
 * element cap.  A `sizes` line skipped that way is said in the log: the
 * program asked for it. */
static int collect_bindings(const Program *p, const Kernel *k, int64_t out[][MAX_SIZEVARS], FILE *log) {
  int n = 0, nsv = ir_nparams(k), first_extra;
  int64_t limit = p->max_elements ? p->max_elements : opt.max_elements;
  if (opt.quick && limit > 100000)
    limit = 100000;
  size_t np = sizeof profiles / sizeof profiles[0];
  for (size_t i = 0; i < np && n < MAX_BINDINGS; i++) {
    for (int s = 0; s < 8; s++)
      out[n][s] = profiles[i][s % 4];
    n++;
    if (nsv == 0)
      return 1;
  }
  if (!opt.quick) {
    int nl = nsv < 4 ? nsv : 4;
    for (int s = 0; s < 8; s++)
      out[n][s] = large_profiles[nl - 1][s % 4] ? large_profiles[nl - 1][s % 4] : 3;
    n++;
    if (nsv == 2)
      for (size_t i = 0; i < 3; i++, n++)
        for (int s = 0; s < 8; s++)
          out[n][s] = long_row_profiles[i][s % 2];
  }
  first_extra = n;
  for (int e = 0; e < p->nextra && n < MAX_BINDINGS; e++, n++) {
    for (int s = 0; s < nsv; s++) {
      out[n][s] = 3;
      for (int b = 0; b < p->extra[e].n; b++)
        if (strcmp(p->extra[e].names[b], k->sizevars[s].name) == 0)
          out[n][s] = p->extra[e].values[b];
    }
  }
  int kept = 0, skipped = 0;
  for (int i = 0; i < n; i++) {
    ir_derive_sizes(k, out[i]);
    int64_t m = max_numel(k, out[i]);
    if (m <= limit && m >= 0)
      memmove(out[kept++], out[i], sizeof out[i]);
    else if (i >= first_extra)
      skipped++;
  }
  if (skipped)
    fprintf(log, "#   note %s:%s: %d of its `sizes` bindings not run, a tensor over the cap of %lld elements\n",
            p->path, k->name, skipped, (long long)limit);
  return kept;
}

static void run_kernel(Program *p, int ki, Level *lv, int nlv, FILE *log) {
  const Kernel *k = p->module->kernels[ki];
  int64_t bindings[MAX_BINDINGS + 8][MAX_SIZEVARS];
  if (k->nsizevars > MAX_SIZEVARS) {
    fprintf(stderr, "tecc-conform: %s:%s has more than %d sizes\n", p->path, k->name, MAX_SIZEVARS);
    exit(2);
  }
  int nb = collect_bindings(p, k, bindings, log);
  for (int l = 0; l < nlv; l++) {
    lv[l].statuses_done = 0;
    lv[l].t.kernels += opt.no_device || lv[l].call;
  }
  for (int b = 0; b < nb; b++) {
    Case *c = calloc(1, sizeof *c);
    *c = (Case){.p = p, .k = k, .ki = ki, .sizes = bindings[b], .log = log};
    rng_seed(opt.seed, (uint64_t)p->index, (uint64_t)ki, (uint64_t)b);
    run_binding(c, lv, nlv);
    free(c);
  }
}

/* Loads one level's object; its failures count in its tally. */
static void open_level(Program *p, Level *lv, FILE *log) {
  char *dir = level_dir(lv->level);
  char *so = xprintf("%s/p%d.so", dir, p->index);
  void *probe = NULL;
  if (!device_open(&lv->d, so, log) || lv->d.malloc_(&probe, 256) != 0) {
    fprintf(log, "#   FAIL %s -O%d: no usable CUDA device\n", p->path, lv->level);
    lv->t.failures++;
  } else {
    lv->d.free_(probe);
    lv->open = 1;
  }
  free(dir), free(so);
}

/* Runs every kernel of one program at every level it was built at
 * (built[l] == 0); each level's tally goes to lv[l]. */
static void run_program(Program *p, const int *built, FILE *log, Level *lv) {
  for (int l = 0; l < opt.nlevels; l++) {
    lv[l].level = opt.levels[l];
    if (!opt.no_device && built[l] == 0)
      open_level(p, &lv[l], log);
  }
  for (int ki = 0; ki < p->module->nkernels; ki++) {
    int any = opt.no_device;
    for (int l = 0; l < opt.nlevels; l++) {
      lv[l].call = NULL;
      if (!lv[l].open)
        continue;
      char sym[64];
      snprintf(sym, sizeof sym, "conform_call_%d", ki);
      *(void **)&lv[l].call = dlsym(lv[l].d.so, sym);
      if (!lv[l].call) {
        fprintf(log, "#   FAIL %s -O%d: no %s in the wrapper\n", p->path, lv[l].level, sym);
        lv[l].t.failures++;
      }
      any |= lv[l].call != NULL;
    }
    if (any) /* the bindings' inputs come through the first level's device */
      run_kernel(p, ki, lv, opt.no_device ? 1 : opt.nlevels, log);
  }
}

/* ---- the driver -------------------------------------------------------------------- */

static void usage(void) {
  fputs("usage: tecc-conform [-O0] [-O1] [-O2] [--nvcc=NVCC] [--arch=ARCH] [--jobs=N]\n"
        "                    [--workdir=DIR] [--keep] [--quick] [--tap] [--seed=N]\n"
        "                    [--max-elements=N] [--no-device] [--perturb] [--no-fork]\n"
        "                    [--unbounded]\n"
        "                    [--build-only|--prebuilt] [--nvcc-flags=FLAGS] [--cache=DIR]\n"
        "                    PROGRAM.te...\n", stderr);
  exit(2);
}

/* -O0 -O1 -O2 may be given together: each program is then built at each
 * level and every binding's reference, computed once, is compared with
 * each level's results. */
static void add_level(int level) {
  for (int l = 0; l < opt.nlevels; l++)
    if (opt.levels[l] == level)
      return;
  opt.levels[opt.nlevels++] = level;
}

static int parse_options(int argc, char **argv) {
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; first++) {
    const char *a = argv[first];
    if (!strcmp(a, "-O0") || !strcmp(a, "-O1") || !strcmp(a, "-O2"))
      add_level(a[2] - '0');
    else if (!strncmp(a, "--nvcc=", 7))
      opt.nvcc = a + 7;
    else if (!strncmp(a, "--nvcc-flags=", 13))
      opt.nvcc_flags = a + 13;
    else if (!strncmp(a, "--cache=", 8))
      opt.cache = a + 8;
    else if (!strncmp(a, "--arch=", 7))
      opt.arch = a + 7;
    else if (!strncmp(a, "--jobs=", 7))
      opt.jobs = atoi(a + 7);
    else if (!strncmp(a, "--workdir=", 10))
      opt.workdir = a + 10;
    else if (!strncmp(a, "--seed=", 7))
      opt.seed = strtoull(a + 7, NULL, 10);
    else if (!strncmp(a, "--max-elements=", 15))
      opt.max_elements = strtoll(a + 15, NULL, 10);
    else if (!strcmp(a, "--keep"))
      opt.keep = 1;
    else if (!strcmp(a, "--quick"))
      opt.quick = 1;
    else if (!strcmp(a, "--tap"))
      opt.tap = 1;
    else if (!strcmp(a, "--no-device"))
      opt.no_device = 1;
    else if (!strcmp(a, "--perturb"))
      opt.perturb = 1;
    else if (!strcmp(a, "--unbounded"))
      opt.unbounded = 1;
    else if (!strcmp(a, "--no-fork"))
      opt.no_fork = 1;
    else if (!strcmp(a, "--build-only"))
      opt.build_only = opt.keep = 1;
    else if (!strcmp(a, "--prebuilt"))
      opt.prebuilt = opt.keep = 1;
    else
      usage();
  }
  if (first == argc)
    usage();
  if (opt.nlevels == 0)
    add_level(2);
  if (opt.no_device) /* the interpreter alone: the levels do not matter */
    opt.nlevels = 1;
  if (opt.jobs <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    opt.jobs = n > 0 ? (int)n : 1;
  }
  return first;
}

static void make_workdir(void) {
  if (opt.cache)
    mkdir(opt.cache, 0755);
  if (opt.workdir) {
    mkdir(opt.workdir, 0755);
    return;
  }
  char tmpl[] = "/tmp/tecc-conform.XXXXXX";
  char *dir = mkdtemp(tmpl);
  if (!dir) {
    perror("tecc-conform: mkdtemp");
    exit(2);
  }
  opt.workdir = strdup(dir);
}

/* Runs the built programs, `jobs` processes at a time, each writing its log
 * and tally to the work directory. */
/* Whether program i was built at some level (built: nlevels per program). */
static int built_somewhere(const int *built, int i) {
  for (int l = 0; l < opt.nlevels; l++)
    if (built[i * opt.nlevels + l] == 0)
      return 1;
  return 0;
}

static void run_all(Program *ps, int n, int *built) {
  int running = 0, next = 0;
  int in_process = opt.jobs == 1 || opt.no_fork;
  while (next < n || running > 0) {
    if (next < n && running < opt.jobs) {
      Program *p = &ps[next++];
      if (!built_somewhere(built, p->index) || p->compile_error || !p->module)
        continue;
      pid_t pid = in_process ? 0 : fork();
      if (pid == 0) {
        char *lp = xprintf("%s/r%d.log", opt.workdir, p->index);
        FILE *log = fopen(lp, "w");
        Level lv[MAX_LEVELS];
        memset(lv, 0, sizeof lv);
        run_program(p, built + p->index * opt.nlevels, log, lv);
        for (int l = 0; l < opt.nlevels; l++) {
          Tally t = lv[l].t;
          fprintf(log, "TALLY %d %ld %ld %ld %ld %ld %ld %ld %ld\n", lv[l].level, t.kernels,
                  t.bindings, t.cases, t.elements, t.failures, t.status_checks, t.perturbed,
                  t.unbounded);
        }
        fclose(log);
        free(lp);
        if (!in_process)
          _exit(0);
        continue;
      }
      running++;
      continue;
    }
    if (running == 0)
      break;
    int st;
    if (wait(&st) < 0)
      break;
    running--;
  }
}

static void device_name(Program *ps, int n, int *built, char *buf, int len) {
  snprintf(buf, (size_t)len, "unknown");
  for (int b = 0; b < n * opt.nlevels; b++) {
    if (built[b] != 0)
      continue;
    /* keep CUDA out of the parent, unless the programs run in it anyway */
    pid_t pid = opt.no_fork ? 0 : fork();
    if (pid == 0) {
      Device d = {0};
      char *dir = level_dir(opt.levels[b % opt.nlevels]);
      char *so = xprintf("%s/p%d.so", dir, b / opt.nlevels);
      free(dir);
      char name[256] = "";
      if (device_open(&d, so, stderr))
        d.name(name, sizeof name);
      char *path = xprintf("%s/device.txt", opt.workdir);
      write_file(path, name);
      free(path);
      if (!opt.no_fork)
        _exit(0);
    } else {
      waitpid(pid, NULL, 0);
    }
    char *path = xprintf("%s/device.txt", opt.workdir);
    char *text = read_text(path);
    free(path);
    if (text && *text)
      snprintf(buf, (size_t)len, "%s", text);
    free(text);
    return;
  }
}

static void print_commented(const char *text) {
  const char *line = text;
  while (*line) {
    size_t len = strcspn(line, "\n");
    if (strncmp(line, "#", 1) == 0)
      printf("%.*s\n", (int)len, line);
    else
      printf("#   %.*s\n", (int)len, line);
    line += len + (line[len] == '\n');
  }
}

/* Prints the lines of a program's log that concern `level`: those that
 * name it (" -O<level>:") and those that name no level. */
static void print_level_lines(const char *text, int level) {
  char mine[16];
  snprintf(mine, sizeof mine, " -O%d", level);
  const char *line = text;
  while (*line) {
    size_t len = strcspn(line, "\n");
    char *l = strndup(line, len);
    int tagged = strstr(l, " -O0") || strstr(l, " -O1") || strstr(l, " -O2");
    if (!tagged || strstr(l, mine))
      print_commented(l);
    free(l);
    line += len + (line[len] == '\n');
  }
}

/* One program's tally at one level from its log; 0 when the log has none
 * (the child crashed). */
static int read_tally(const char *text, int level, Tally *t) {
  for (const char *at = text ? strstr(text, "TALLY ") : NULL; at; at = strstr(at + 1, "TALLY ")) {
    int lvl;
    if (sscanf(at, "TALLY %d %ld %ld %ld %ld %ld %ld %ld %ld", &lvl, &t->kernels, &t->bindings,
               &t->cases, &t->elements, &t->failures, &t->status_checks, &t->perturbed,
               &t->unbounded) == 9 &&
        lvl == level)
      return 1;
  }
  return 0;
}

static int count_cached(int n, int level) {
  int cached = 0;
  char *dir = level_dir(level);
  for (int i = 0; i < n; i++) {
    char *path = xprintf("%s/p%d.cached", dir, i);
    cached += access(path, F_OK) == 0;
    free(path);
  }
  free(dir);
  return cached;
}

/* Prints one level's TAP lines and summary; returns its failed programs. */
static int report_level(Program *ps, int n, int *built, int li, const char *device) {
  int level = opt.levels[li];
  Tally total = {0};
  int failed_programs = 0;
  for (int i = 0; i < n; i++) {
    Program *p = &ps[i];
    Tally t = {0};
    char *text = NULL;
    int b = built[i * opt.nlevels + li];
    if (p->compile_error) {
      t.failures = 1;
    } else if (b != 0) {
      char *dir = level_dir(level);
      char *lp = xprintf("%s/p%d.nvcc.log", dir, i);
      text = read_text(lp);
      free(dir), free(lp);
      t.failures = 1;
    } else {
      char *lp = xprintf("%s/r%d.log", opt.workdir, i);
      text = read_text(lp);
      free(lp);
      if (!read_tally(text, level, &t))
        t.failures = 1; /* the child crashed */
      char *tally = text ? strstr(text, "TALLY ") : NULL;
      if (tally)
        *tally = 0;
    }
    /* --perturb: exactly the planted mismatches, and some were planted */
    int ok = opt.perturb ? t.failures == t.perturbed && t.perturbed > 0 : t.failures == 0;
    failed_programs += !ok;
    printf("%sok %d - %s -O%d: %ld kernels, %ld bindings, %ld elements%s\n", ok ? "" : "not ",
           li * n + i + 1, p->path, level, t.kernels, t.bindings, t.elements,
           p->compile_error ? " (does not compile)" : b ? " (nvcc failed)" : "");
    if (p->compile_error)
      print_commented(p->compile_error);
    if (text)
      print_level_lines(text, level);
    free(text);
    total.kernels += t.kernels;
    total.bindings += t.bindings;
    total.cases += t.cases;
    total.elements += t.elements;
    total.failures += t.failures;
    total.status_checks += t.status_checks;
    total.perturbed += t.perturbed;
    total.unbounded += t.unbounded;
  }
  if (opt.cache)
    printf("# %d of %d programs at -O%d reused a cached build (the same .cu, .h, wrapper and nvcc"
           " flags as an earlier build)\n", count_cached(n, level), n, level);
  if (opt.perturb)
    printf("# --perturb self-test: %ld corrupted comparisons planted, %ld mismatches found\n",
           total.perturbed, total.failures);
  printf("# conformance -O%d on %s: %d programs (%d failed), %ld kernels, %ld size bindings,"
         " %ld calls, %ld elements %s (%ld without a bound), %ld status/in-place checks,"
         " %ld failures\n",
         level, device, n, failed_programs, total.kernels, total.bindings, total.cases,
         total.elements, opt.no_device ? "evaluated" : "compared", total.unbounded,
         total.status_checks, total.failures);
  return failed_programs;
}

/* Prints the TAP lines and a summary per level; returns the number of
 * failed programs over the levels. */
static int report(Program *ps, int n, int *built, const char *device) {
  if (opt.tap)
    printf("1..%d\n", n * opt.nlevels);
  int failed = 0;
  for (int l = 0; l < opt.nlevels; l++)
    failed += report_level(ps, n, built, l, device);
  return failed;
}

/* Everything main() allocated, so that LeakSanitizer sees no leak. */
static void free_programs(Program *ps, char **cmds, int *built, int n) {
  for (int i = 0; i < n; i++) {
    arena_free(ps[i].arena);
    free(ps[i].compile_error);
  }
  for (int b = 0; b < n * opt.nlevels; b++)
    free(cmds[b]);
  free(ps);
  free(cmds);
  free(built);
}

int main(int argc, char **argv) {
  int first = parse_options(argc, argv);
  make_workdir();
  int n = argc - first;
  int nb = n * opt.nlevels; /* builds: program i at level l is i * nlevels + l */
  Program *ps = calloc((size_t)n, sizeof *ps);
  char **cmds = calloc((size_t)nb, sizeof *cmds);
  int *built = calloc((size_t)nb, sizeof *built);
  for (int i = 0; i < n; i++) {
    ps[i].path = argv[first + i];
    ps[i].index = i;
    ps[i].arena = arena_new();
    read_directives(&ps[i]);
    prepare(&ps[i], cmds + i * opt.nlevels);
  }
  fflush(stdout);
  char device[256] = "no device (interpreter only)";
  if (!opt.no_device) {
    build_all(ps, n, cmds, built);
    if (opt.build_only) {
      int bad = 0;
      for (int b = 0; b < nb; b++)
        bad += ps[b / opt.nlevels].compile_error != NULL || built[b] != 0;
      printf("# built %d of %d programs x levels in %s\n", nb - bad, nb, opt.workdir);
      free_programs(ps, cmds, built, n);
      return bad != 0;
    }
    device_name(ps, n, built, device, sizeof device);
  }
  run_all(ps, n, built);
  int failures = report(ps, n, built, device);
  if (!opt.keep) {
    char *rm = xprintf("rm -rf '%s'", opt.workdir);
    if (system(rm) != 0)
      fprintf(stderr, "tecc-conform: could not remove %s\n", opt.workdir);
    free(rm);
  }
  free_programs(ps, cmds, built, n);
  return failures != 0;
}
