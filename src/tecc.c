/* tecc.c — the command (doc/cli.md): options, files, exit codes; nothing else.
 *
 * Everything else is libtecc (tecc.h).  Exit status: 0 success, 1 the
 * program has errors, 2 usage or I/O error.  Output files are written to
 * temporary files in their own directories and renamed into place only
 * when every one of them was written; a signal removes the temporaries. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tecc.h"

enum { EXIT_PROGRAM_ERROR = 1, EXIT_USAGE = 2 };

typedef struct Cli {
  tecc_options opts;
  const char *input;
  const char *output; /* -o */
  const char *header; /* -H, --header */
  int plain;          /* --fdiagnostics-plain */
  int dep_file;       /* -MD */
  int dep_phony;      /* -MP */
  const char *dep_path; /* -MF */
  const char **dep_targets; /* -MT */
  size_t n_dep_targets;
  const char **include_dirs;
  tecc_define *defines;
  int info;           /* OPT_HELP or OPT_VERSION seen: print it, do nothing else */
  /* Paths worked out from the options (resolve_paths), freed at the end. */
  char *stem;         /* the input's base name without extension */
  char *cu_file;      /* the .cu, "-" for standard output */
  char *h_file;       /* the .h, or NULL for none */
  char *header_only;  /* --emit=header */
  char *dep_out;      /* -MD */
  char *include_name; /* how the .cu includes the .h */
} Cli;

/* --- messages ----------------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tecc: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\nTry 'tecc --help' for more information.\n", stderr);
  return 0;
}

static int io_error(const char *what, const char *path) {
  fprintf(stderr, "tecc: %s '%s': %s\n", what, path, strerror(errno));
  return 0;
}

static void print_version(void) {
  fputs("tecc (tecc) " TECC_VERSION_STRING "\n"
        "Copyright (C) 2026 the tecc authors.\n"
        "This is free software; see the source for copying conditions.  There is NO\n"
        "warranty; not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.\n",
        stdout);
}

static void print_help(void) {
  fputs(
      "Usage: tecc [OPTION]... FILE.te\n"
      "Compile a tensor-expression file into CUDA (FILE.cu) and a C header (FILE.h).\n"
      "FILE may be '-' for standard input.  Options may come before or after FILE.\n"
      "\n"
      "Output:\n"
      "  -o FILE                  write the .cu to FILE ('-': standard output);\n"
      "                           default: the input's base name with .cu\n"
      "  -H FILE, --header=FILE   write the header to FILE; default: the output\n"
      "                           with .cu replaced by .h (none when the output\n"
      "                           is '-' or not a regular file, as /dev/null)\n"
      "  --emit=KIND              write KIND instead of .cu + .h: header, ast, ir,\n"
      "                           fused, plan, dot or json (to standard output\n"
      "                           unless -o, or -H for the header, is given)\n"

      "\n"
      "Compilation:\n"
      "  -O0, -O1, -O2            no fusion; fusion with fixed schedules; full fusion\n"
      "                           and tile selection (default)\n"
      "  -I DIR                   search DIR for imported files\n"
      "  -D NAME=VALUE            bind the size variable NAME to VALUE (an integer >= 0)\n"
      "  --arch=sm_XY             the GPU the schedules assume (default sm_90)\n"
      "  --name=NAME              name of the implicit kernel\n"
      "  --explain                explain fusion and variant choices on standard error\n"
      "\n"
      "Dependencies (as gcc):\n"
      "  -MD                      also write a make dependency file\n"
      "  -MF FILE                 the dependency file (default: the output with .d)\n"
      "  -MT TARGET               the target of the rule (default: the .cu and .h)\n"
      "  -MP                      add a phony target for each imported file\n"
      "\n"
      "Diagnostics:\n"
      "  -Werror                  make warnings errors\n"
      "  -w                       hide warnings\n"
      "  --fdiagnostics-plain     one line per diagnostic, no source or caret\n"
      "\n"
      "  --help                   print this help and exit\n"
      "  --version                print the version and exit\n"
      "\n"
      "Output files are written only when the whole compilation succeeds, and a\n"
      "file that already holds what would be written is left untouched.\n"
      "Exit status: 0 success, 1 errors in the program, 2 usage or I/O error.\n",
      stdout);
}

/* --- option values ------------------------------------------------------ */

static const char *const emit_names[] = {
    [TECC_EMIT_CU] = "cu",       [TECC_EMIT_HEADER] = "header",
    [TECC_EMIT_AST] = "ast",     [TECC_EMIT_IR] = "ir",
    [TECC_EMIT_FUSED] = "fused", [TECC_EMIT_PLAN] = "plan",
    [TECC_EMIT_DOT] = "dot",     [TECC_EMIT_JSON] = "json",
};

static int set_emit(Cli *cli, const char *kind) {
  for (size_t i = 0; i < sizeof emit_names / sizeof emit_names[0]; i++) {
    if (strcmp(kind, emit_names[i]) == 0) {
      cli->opts.emit = (tecc_emit)i;
      return 1;
    }
  }
  return usage_error("invalid argument '%s' for '--emit' (valid: cu, header, ast, "
                     "ir, fused, plan, dot, json)", kind);
}

static int is_identifier(const char *s, size_t n) {
  if (n == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
    return 0;
  for (size_t i = 1; i < n; i++)
    if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= 'a' && s[i] <= 'z')))
      return 0;
  return 1;
}

/* A non-negative decimal integer that fits int64. */
static int parse_size(const char *s, int64_t *out) {
  if (!*s || strspn(s, "0123456789") != strlen(s))
    return 0;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno == ERANGE)
    return 0;
  *out = v;
  return 1;
}

/* -D NAME=VALUE; a later binding of a name replaces an earlier one. */
static int add_define(Cli *cli, const char *arg) {
  const char *eq = strchr(arg, '=');
  int64_t value;
  if (!eq || !is_identifier(arg, (size_t)(eq - arg)) || !parse_size(eq + 1, &value))
    return usage_error("invalid argument '%s' for '-D': expected NAME=VALUE, "
                       "VALUE a non-negative integer", arg);
  size_t name_len = (size_t)(eq - arg), i;
  for (i = 0; i < cli->opts.n_defines; i++)
    if (strlen(cli->defines[i].name) == name_len &&
        strncmp(cli->defines[i].name, arg, name_len) == 0)
      break;
  if (i == cli->opts.n_defines) {
    char *name = strndup(arg, name_len);
    if (!name)
      return io_error("out of memory for", arg);
    cli->defines[cli->opts.n_defines++].name = name;
  }
  cli->defines[i].value = value;
  return 1;
}

/* sm_XY (two or three digits, optionally an 'a' suffix), XY >= 70. */
static int set_arch(Cli *cli, const char *arch) {
  const char *digits = arch + 3;
  size_t n = strspn(digits, "0123456789");
  int valid = strncmp(arch, "sm_", 3) == 0 && (n == 2 || n == 3) &&
              (digits[n] == '\0' || strcmp(digits + n, "a") == 0) && atoi(digits) >= 70;
  if (!valid)
    return usage_error("invalid argument '%s' for '--arch' (expected sm_XY, "
                       "sm_70 or newer, e.g. sm_90)", arch);
  cli->opts.arch = arch;
  return 1;
}

static int set_name(Cli *cli, const char *name) {
  if (!*name)
    return usage_error("option '--name' requires a non-empty argument");
  cli->opts.kernel_name = name;
  return 1;
}

/* --- the option table --------------------------------------------------- */

typedef enum OptId {
  OPT_OUTPUT, OPT_HEADER, OPT_HEADER_LONG, OPT_EMIT, OPT_O0, OPT_O1, OPT_O2,
  OPT_INCLUDE, OPT_DEFINE, OPT_ARCH, OPT_NAME, OPT_EXPLAIN, OPT_MD, OPT_MF,
  OPT_MT, OPT_MP, OPT_WERROR, OPT_NO_WARNINGS, OPT_PLAIN, OPT_VERSION,
  OPT_HELP, OPT_DUMP_AFTER
} OptId;

/* How an option takes its argument:
 *   FLAG   none;
 *   SHORT  "-o FILE" or "-oFILE";
 *   LONG   "--emit=KIND" or "--emit KIND". */
typedef enum ArgStyle { FLAG, SHORT, LONG } ArgStyle;

static const struct {
  const char *name;
  ArgStyle style;
  OptId id;
} options[] = {
    {"-o", SHORT, OPT_OUTPUT},      {"-H", SHORT, OPT_HEADER},
    {"--header", LONG, OPT_HEADER_LONG}, {"--emit", LONG, OPT_EMIT},
    {"-O0", FLAG, OPT_O0},          {"-O1", FLAG, OPT_O1},
    {"-O2", FLAG, OPT_O2},          {"-I", SHORT, OPT_INCLUDE},
    {"-D", SHORT, OPT_DEFINE},      {"--arch", LONG, OPT_ARCH},
    {"--name", LONG, OPT_NAME},     {"--explain", FLAG, OPT_EXPLAIN},
    {"-MD", FLAG, OPT_MD},          {"-MF", SHORT, OPT_MF},
    {"-MT", SHORT, OPT_MT},         {"-MP", FLAG, OPT_MP},
    {"-Werror", FLAG, OPT_WERROR},  {"-w", FLAG, OPT_NO_WARNINGS},
    {"--fdiagnostics-plain", FLAG, OPT_PLAIN},
    {"--version", FLAG, OPT_VERSION}, {"--help", FLAG, OPT_HELP},
    /* Debugging, not in --help: dump what the passes named produced
     * (parse, sema, lower, grad, opt, fuse, schedule or all) on standard
     * error; also TECC_DUMP. */
    {"--dump-after", LONG, OPT_DUMP_AFTER},
};
enum { N_OPTIONS = sizeof options / sizeof options[0] };

/* Applies one option; 0 after a usage error. */
static int apply_option(Cli *cli, OptId id, const char *arg) {
  switch (id) {
  case OPT_OUTPUT: cli->output = arg; return 1;
  case OPT_HEADER:
  case OPT_HEADER_LONG: cli->header = arg; return 1;
  case OPT_EMIT: return set_emit(cli, arg);
  case OPT_O0: cli->opts.opt_level = 0; return 1;
  case OPT_O1: cli->opts.opt_level = 1; return 1;
  case OPT_O2: cli->opts.opt_level = 2; return 1;
  case OPT_INCLUDE: cli->include_dirs[cli->opts.n_include_dirs++] = arg; return 1;
  case OPT_DEFINE: return add_define(cli, arg);
  case OPT_ARCH: return set_arch(cli, arg);
  case OPT_NAME: return set_name(cli, arg);
  case OPT_EXPLAIN: cli->opts.explain = 1; return 1;
  case OPT_MD: cli->dep_file = 1; return 1;
  case OPT_MF: cli->dep_path = arg; return 1;
  case OPT_MT: cli->dep_targets[cli->n_dep_targets++] = arg; return 1;
  case OPT_MP: cli->dep_phony = 1; return 1;
  case OPT_WERROR: cli->opts.werror = 1; return 1;
  case OPT_NO_WARNINGS: cli->opts.no_warnings = 1; return 1;
  case OPT_PLAIN: cli->plain = 1; return 1;
  case OPT_VERSION:
  case OPT_HELP: cli->info = id; return 1;
  case OPT_DUMP_AFTER: cli->opts.dump_after = arg; return 1;
  }
  return 0;
}

static int find_exact(const char *arg) {
  for (int i = 0; i < N_OPTIONS; i++)
    if (strcmp(arg, options[i].name) == 0)
      return i;
  return -1;
}

/* "-oFILE", "-DN=4" or "--emit=ir": the option and where its value starts. */
static int find_joined(const char *arg, const char **value) {
  for (int i = 0; i < N_OPTIONS; i++) {
    size_t n = strlen(options[i].name);
    if (options[i].style == FLAG || strncmp(arg, options[i].name, n) != 0)
      continue;
    if (options[i].style == SHORT && arg[n]) {
      *value = arg + n;
      return i;
    }
    if (options[i].style == LONG && arg[n] == '=') {
      *value = arg + n + 1;
      return i;
    }
  }
  return -1;
}

/* Parses argv[*i] (an option) and maybe its argument; 0 on a usage error. */
static int parse_option(Cli *cli, int argc, char **argv, int *i) {
  const char *arg = argv[*i], *value = NULL;
  int k = find_exact(arg);
  if (k >= 0 && options[k].style != FLAG) {
    if (*i + 1 >= argc)
      return usage_error("option '%s' requires an argument", arg);
    value = argv[++*i];
  } else if (k < 0) {
    k = find_joined(arg, &value);
    if (k < 0)
      return usage_error("unrecognized option '%s'", arg);
  }
  return apply_option(cli, options[k].id, value);
}

static int set_input(Cli *cli, const char *arg) {
  if (cli->input)
    return usage_error("more than one input file ('%s' and '%s')", cli->input, arg);
  cli->input = arg;
  return 1;
}

static int parse_args(Cli *cli, int argc, char **argv) {
  int only_files = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    int ok;
    if (only_files || arg[0] != '-' || arg[1] == '\0')
      ok = set_input(cli, arg);
    else if (strcmp(arg, "--") == 0)
      ok = only_files = 1;
    else
      ok = parse_option(cli, argc, argv, &i);
    if (!ok)
      return 0;
    if (cli->info)
      return 1; /* --help and --version act at once, as in GNU programs */
  }
  if (!cli->input)
    return usage_error("no input file");
  return 1;
}

/* --- paths -------------------------------------------------------------- */

static char *xstrdup(const char *s) {
  char *d = strdup(s);
  if (!d) {
    fputs("tecc: out of memory\n", stderr);
    exit(EXIT_USAGE);
  }
  return d;
}

static char *concat(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = malloc(na + nb + 1);
  if (!s) {
    fputs("tecc: out of memory\n", stderr);
    exit(EXIT_USAGE);
  }
  memcpy(s, a, na);
  memcpy(s + na, b, nb + 1);
  return s;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* "dir/model.te" -> "model"; standard input -> "kernel". */
static char *input_stem(const char *input) {
  if (strcmp(input, "-") == 0)
    return xstrdup("kernel");
  char *stem = xstrdup(base_name(input));
  char *dot = strrchr(stem, '.');
  if (dot && dot != stem)
    *dot = '\0';
  return stem;
}

/* `path` with its extension (if any) replaced by `ext`. */
static char *replace_ext(const char *path, const char *ext) {
  char *copy = xstrdup(path);
  char *dot = strrchr(copy, '.');
  if (dot && dot > base_name(copy))
    *dot = '\0';
  char *result = concat(copy, ext);
  free(copy);
  return result;
}

static char *dir_name(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return xstrdup(".");
  if (slash == path)
    return xstrdup("/");
  return strndup(path, (size_t)(slash - path));
}

/* How the .cu at `cu` names the header at `h` in its #include: the base
 * name when both share a directory, else a path that works from anywhere. */
static char *include_name(const char *cu, const char *h) {
  char *cu_dir = dir_name(cu), *h_dir = dir_name(h);
  char *name;
  if (strcmp(cu_dir, h_dir) == 0)
    name = xstrdup(base_name(h));
  else if (h[0] == '/')
    name = xstrdup(h);
  else {
    char resolved[PATH_MAX];
    if (realpath(h_dir, resolved)) {
      char *dir = concat(resolved, "/");
      name = concat(dir, base_name(h));
      free(dir);
    } else {
      name = xstrdup(h);
    }
  }
  free(cu_dir);
  free(h_dir);
  return name;
}

/* --- reading ------------------------------------------------------------ */

static char *read_stdin(size_t *len_out) {
  size_t len = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len, stdin);
    if (ferror(stdin) || feof(stdin))
      break;
    char *grown = realloc(buf, cap *= 2);
    if (!grown)
      free(buf);
    buf = grown;
  }
  if (!buf || ferror(stdin)) {
    if (!buf)
      errno = ENOMEM;
    free(buf);
    return NULL;
  }
  *len_out = len;
  return buf;
}

static tecc_result *compile_input(Cli *cli) {
  if (strcmp(cli->input, "-") != 0)
    return tecc_compile_file(cli->input, &cli->opts);
  size_t len = 0;
  char *text = read_stdin(&len);
  if (!text) {
    fprintf(stderr, "tecc: cannot read standard input: %s\n", strerror(errno));
    return NULL;
  }
  tecc_result *r = tecc_compile_string("-", text, len, &cli->opts);
  free(text);
  return r;
}

/* --- atomic writing ----------------------------------------------------- */

/* One output: `text` for `path` (NULL: standard output), written first to
 * `temp` in the same directory. */
typedef struct Output {
  const char *path;
  const char *text;
  char *temp;
  int direct; /* path exists and is no regular file (/dev/null, a FIFO):
                 written in place, as standard output is */
  int unchanged; /* path already holds text: left alone, time stamp too */
} Output;

enum { MAX_OUTPUTS = 4 };

/* The temporaries that exist now, for the signal handler.  Each slot is a
 * fixed buffer, so the handler never sees a half-built pointer. */
static char temp_paths[MAX_OUTPUTS][PATH_MAX + 32];
static volatile sig_atomic_t n_temp_paths;

static void remove_temps(void) {
  for (int i = 0; i < n_temp_paths; i++)
    if (temp_paths[i][0])
      unlink(temp_paths[i]);
}

static void on_signal(int sig) {
  remove_temps();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void catch_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

static int write_all(int fd, const char *text) {
  size_t len = strlen(text);
  while (len > 0) {
    ssize_t n = write(fd, text, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return 0;
    }
    text += n;
    len -= (size_t)n;
  }
  return 1;
}

/* Creates out->temp next to out->path and writes the text into it. */
static int write_temp(Output *out) {
  if (strlen(out->path) > PATH_MAX) {
    errno = ENAMETOOLONG;
    return io_error("cannot write", out->path);
  }
  char *dir = dir_name(out->path);
  char *slot = temp_paths[n_temp_paths];
  snprintf(slot, sizeof temp_paths[0], "%s/.%s.tmpXXXXXX", dir, base_name(out->path));
  free(dir);
  n_temp_paths++;
  int fd = mkstemp(slot);
  if (fd < 0) {
    slot[0] = '\0';
    return io_error("cannot write", out->path);
  }
  out->temp = slot;
  mode_t mask = umask(0);
  umask(mask);
  int ok = fchmod(fd, 0666 & ~mask) == 0 && write_all(fd, out->text);
  int saved = errno;
  if (close(fd) != 0 && ok)
    ok = 0, saved = errno;
  errno = saved;
  return ok || io_error("cannot write", out->path);
}

static int write_stdout(const char *text) {
  if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
    fprintf(stderr, "tecc: cannot write standard output: %s\n", strerror(errno));
    return 0;
  }
  return 1;
}

static int write_in_place(const Output *out) {
  int fd = open(out->path, O_WRONLY | O_TRUNC);
  int ok = fd >= 0 && write_all(fd, out->text);
  int saved = errno;
  if (fd >= 0 && close(fd) != 0 && ok)
    ok = 0, saved = errno;
  errno = saved;
  return ok || io_error("cannot write", out->path);
}

static int is_special_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* 1 when `path` is a regular file whose contents are exactly `text`: it is
 * left untouched, so that make rebuilds nothing that depends on it. */
static int holds_text(const char *path, const char *text) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  size_t len = strlen(text), done = 0;
  int same = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             (size_t)st.st_size == len;
  char buf[1 << 14];
  while (same && done < len) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    same = n > 0 && (size_t)n <= len - done && memcmp(buf, text + done, (size_t)n) == 0;
    done += n > 0 ? (size_t)n : 0;
  }
  if (fd >= 0)
    close(fd);
  return same;
}

/* Tests set TECC_TEST_WRITE_DELAY_MS to hold the temporaries in place long
 * enough to signal the process. */
static void test_delay(void) {
  const char *ms = getenv("TECC_TEST_WRITE_DELAY_MS");
  if (ms && *ms) {
    long v = atol(ms);
    struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
}

/* A file written through a temporary and a rename. */
static int renamed_into_place(const Output *out) {
  return out->path && !out->direct && !out->unchanged;
}

/* Writes every output, or none: temporaries first, standard output next,
 * then the renames.  A file that already holds its text is not written. */
static int write_outputs(Output *outs, int n) {
  catch_signals();
  int ok = 1;
  for (int i = 0; i < n; i++)
    outs[i].unchanged = outs[i].path && !outs[i].direct &&
                        holds_text(outs[i].path, outs[i].text);
  for (int i = 0; i < n && ok; i++)
    if (renamed_into_place(&outs[i]))
      ok = write_temp(&outs[i]);
  test_delay();
  for (int i = 0; i < n && ok; i++)
    if (!outs[i].path)
      ok = write_stdout(outs[i].text);
    else if (outs[i].direct)
      ok = write_in_place(&outs[i]);
  for (int i = 0; i < n && ok; i++) {
    if (!renamed_into_place(&outs[i]))
      continue;
    ok = rename(outs[i].temp, outs[i].path) == 0;
    if (!ok)
      io_error("cannot write", outs[i].path);
    else
      outs[i].temp[0] = '\0';
  }
  remove_temps();
  return ok;
}

/* --- what to write ------------------------------------------------------ */

static int is_stdout(const char *path) { return strcmp(path, "-") == 0; }

static void add_output(Output *outs, int *n, const char *path, const char *text) {
  if (!text)
    return;
  outs[*n].path = path && !is_stdout(path) ? path : NULL;
  outs[*n].text = text;
  outs[*n].temp = NULL;
  outs[*n].direct = outs[*n].path && is_special_file(path);
  outs[*n].unchanged = 0;
  (*n)++;
}

/* The .h next to a .cu: ".cu" replaced by ".h", else ".h" appended. */
static char *header_for(const char *cu) {
  size_t n = strlen(cu);
  if (n > 3 && strcmp(cu + n - 3, ".cu") == 0) {
    char *h = xstrdup(cu);
    strcpy(h + n - 3, ".h");
    return h;
  }
  return concat(cu, ".h");
}

/* An output path from which no sibling name is derived: standard output,
 * or a file that exists and is not regular (/dev/null, a FIFO). */
static int is_stream(const char *path) {
  return is_stdout(path) || is_special_file(path);
}

/* Default names (doc/cli.md): the input's stem in the current directory; the
 * header beside the .cu, none unless -H is given when the .cu goes to a
 * stream; --emit=header writes to -H, else -o, else standard output; the
 * dependency file is -MF, else the output with .d, else the stem with .d. */
static void resolve_paths(Cli *cli) {
  char *stem = cli->stem = input_stem(cli->input);
  cli->cu_file = cli->output ? xstrdup(cli->output) : concat(stem, ".cu");
  if (cli->header)
    cli->h_file = xstrdup(cli->header);
  else if (!is_stream(cli->cu_file))
    cli->h_file = header_for(cli->cu_file);
  cli->header_only = xstrdup(cli->header ? cli->header : cli->output ? cli->output : "-");
  if (cli->dep_path)
    cli->dep_out = xstrdup(cli->dep_path);
  else if (cli->output && !is_stream(cli->output))
    cli->dep_out = replace_ext(cli->output, ".d");
  else
    cli->dep_out = concat(stem, ".d");
  if (cli->h_file && !is_stdout(cli->h_file) && !is_stdout(cli->cu_file))
    cli->include_name = include_name(cli->cu_file, cli->h_file);
  else if (cli->h_file && !is_stdout(cli->h_file))
    cli->include_name = xstrdup(cli->h_file); /* .cu on stdout: -H as given */
}

static void free_cli(Cli *cli) {
  for (size_t i = 0; i < cli->opts.n_defines; i++)
    free((char *)cli->defines[i].name);
  free(cli->defines);
  free(cli->include_dirs);
  free(cli->dep_targets);
  free(cli->stem);
  free(cli->cu_file);
  free(cli->h_file);
  free(cli->header_only);
  free(cli->dep_out);
  free(cli->include_name);
}

/* Plans the files for the compilation's result into outs; returns the
 * number. */
static int plan_outputs(const Cli *cli, const tecc_result *r, Output *outs) {
  int n = 0;
  switch (cli->opts.emit) {
  case TECC_EMIT_CU:
    add_output(outs, &n, cli->cu_file, tecc_result_output(r));
    if (cli->h_file)
      add_output(outs, &n, cli->h_file, tecc_result_header(r));
    break;
  case TECC_EMIT_HEADER: {
    const char *h = tecc_result_header(r);
    add_output(outs, &n, cli->header_only, h ? h : tecc_result_output(r));
    break;
  }
  default:
    add_output(outs, &n, cli->output ? cli->output : "-", tecc_result_output(r));
  }
  return n;
}

/* --- dependency file (gcc -MD format) ----------------------------------- */

/* A rule being written, wrapped as gcc wraps it: lines of at most about
 * 75 columns, continued with a backslash and one space. */
typedef struct DepWriter {
  FILE *f;
  size_t column;
  int words;
} DepWriter;

/* Make's special characters in a file name: blanks and '#' take a
 * backslash, '$' is doubled. */
static size_t make_name_len(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += 1 + (*s == ' ' || *s == '\t' || *s == '#' || *s == '$');
  return n;
}

static void put_make_name(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == ' ' || *s == '\t' || *s == '#')
      fputc('\\', f);
    else if (*s == '$')
      fputc('$', f);
    fputc(*s, f);
  }
}

/* Writes one word of the rule, preceded by a space or a line break. */
static void put_word(DepWriter *w, const char *word, int escape) {
  size_t len = make_name_len(word);
  if (w->column > 0 && w->column + 1 + len > 75) {
    fputs(" \\\n", w->f);
    w->column = 0;
  }
  if (w->words++ > 0) {
    fputc(' ', w->f);
    w->column++;
  }
  if (escape)
    put_make_name(w->f, word);
  else
    fputs(word, w->f); /* -MT is used as given, like gcc */
  w->column += len;
}

/* The targets: -MT, else the files written, else the default .cu name. */
static void put_targets(DepWriter *w, const Cli *cli, const Output *outs, int n) {
  int any = 0;
  for (size_t i = 0; i < cli->n_dep_targets; i++, any = 1)
    put_word(w, cli->dep_targets[i], 0);
  for (int i = 0; cli->n_dep_targets == 0 && i < n; i++)
    if (outs[i].path)
      put_word(w, outs[i].path, 1), any = 1;
  if (!any) { /* everything went to standard output */
    char *cu = concat(cli->stem, ".cu");
    put_word(w, cu, 1);
    free(cu);
  }
  fputc(':', w->f);
  w->column++;
}

/* The rule's text (the caller writes it atomically), or NULL. */
static char *dep_text(const Cli *cli, const tecc_result *r, const Output *outs, int n) {
  char *text = NULL;
  size_t size = 0;
  DepWriter w = {open_memstream(&text, &size), 0, 0};
  if (!w.f)
    return NULL;
  put_targets(&w, cli, outs, n);
  for (size_t i = 0; i < tecc_result_num_files(r); i++)
    if (!is_stdout(tecc_result_file(r, i)))
      put_word(&w, tecc_result_file(r, i), 1);
  fputc('\n', w.f);
  for (size_t i = 1; cli->dep_phony && i < tecc_result_num_files(r); i++) {
    fputc('\n', w.f);
    put_make_name(w.f, tecc_result_file(r, i));
    fputs(":\n", w.f);
  }
  fclose(w.f);
  return text;
}

/* --- main --------------------------------------------------------------- */

static void print_messages(const Cli *cli, tecc_result *r) {
  if (tecc_result_num_diagnostics(r) > 0)
    fputs(tecc_result_format_diagnostics(r, cli->plain), stderr);
  if (tecc_result_explanation(r))
    fputs(tecc_result_explanation(r), stderr);
  fputs(tecc_result_dump(r), stderr);
}

static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
}

/* As gcc does, refuse to write over a file that was read. */
static int clobbers_input(const Output *outs, int n, const tecc_result *r) {
  for (int i = 0; i < n; i++)
    for (size_t j = 0; outs[i].path && j < tecc_result_num_files(r); j++)
      if (same_file(outs[i].path, tecc_result_file(r, j))) {
        fprintf(stderr, "tecc: output file '%s' is the input file '%s'\n",
                outs[i].path, tecc_result_file(r, j));
        return 1;
      }
  return 0;
}

static int emit_files(const Cli *cli, const tecc_result *r) {
  Output outs[MAX_OUTPUTS];
  int n = plan_outputs(cli, r, outs);
  char *deps = NULL;
  if (cli->dep_file) {
    deps = dep_text(cli, r, outs, n);
    if (!deps)
      return io_error("cannot write", cli->dep_out), EXIT_USAGE;
    add_output(outs, &n, cli->dep_out, deps);
  }
  if (clobbers_input(outs, n, r)) {
    free(deps);
    return EXIT_USAGE;
  }
  int ok = write_outputs(outs, n);
  free(deps);
  return ok ? 0 : EXIT_USAGE;
}

static int run(Cli *cli) {
  tecc_result *r = compile_input(cli);
  if (!r)
    return EXIT_USAGE;
  print_messages(cli, r);
  int status = tecc_result_io_error(r) ? EXIT_USAGE
               : !tecc_result_ok(r)    ? EXIT_PROGRAM_ERROR
                                       : emit_files(cli, r);
  tecc_result_free(r);
  return status;
}

int main(int argc, char **argv) {
  Cli cli;
  memset(&cli, 0, sizeof cli);
  tecc_options_init(&cli.opts);
  /* At most one entry per argument. */
  cli.include_dirs = calloc((size_t)argc, sizeof *cli.include_dirs);
  cli.defines = calloc((size_t)argc, sizeof *cli.defines);
  cli.dep_targets = calloc((size_t)argc, sizeof *cli.dep_targets);
  if (!cli.include_dirs || !cli.defines || !cli.dep_targets) {
    fputs("tecc: out of memory\n", stderr);
    return EXIT_USAGE;
  }
  cli.opts.include_dirs = cli.include_dirs;
  cli.opts.defines = cli.defines;
  cli.opts.dump_after = getenv("TECC_DUMP");
  int status = EXIT_USAGE;
  if (!parse_args(&cli, argc, argv))
    ;
  else if (cli.info == OPT_HELP)
    print_help(), status = fflush(stdout) == 0 ? 0 : EXIT_USAGE;
  else if (cli.info == OPT_VERSION)
    print_version(), status = fflush(stdout) == 0 ? 0 : EXIT_USAGE;
  else {
    resolve_paths(&cli);
    cli.opts.header_name = cli.include_name;
    status = run(&cli);
  }
  free_cli(&cli);
  return status;
}
