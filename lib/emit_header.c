/* emit_header.c — the generated C header (abi.md §1, §2, §4), and the
 * entry-point names and signatures the .cu shares with it (emit.h). */
#include "backend.h"
#include "emit.h"

#include <ctype.h>
#include <string.h>

static int name_taken(const char **names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], s) == 0)
      return 1;
  return 0;
}

static const char *unique_name(Arena *a, const char **taken, int ntaken, const char *want) {
  const char *s = name_is_reserved(want) ? arena_printf(a, "u_%s", want) : want;
  while (name_taken(taken, ntaken, s))
    s = arena_printf(a, "%s_", s);
  return s;
}

EntryNames *entry_names(Arena *a, const Kernel *k) {
  EntryNames *n = ARENA_NEW(a, EntryNames);
  int total = k->ninputs + k->noutputs + k->nsizevars, used = 0;
  const char **all = ARENA_ARRAY(a, const char *, total + 1);
  n->inputs = ARENA_ARRAY(a, const char *, k->ninputs + 1);
  n->outputs = ARENA_ARRAY(a, const char *, k->noutputs + 1);
  n->sizes = ARENA_ARRAY(a, const char *, k->nsizevars + 1);
  for (int i = 0; i < k->ninputs; i++) {
    n->inputs[i] = unique_name(a, all, used, k->inputs[i].name);
    all[used] = n->inputs[i];
    used++;
  }
  for (int i = 0; i < k->noutputs; i++) {
    n->outputs[i] = unique_name(a, all, used, k->outputs[i].name);
    all[used] = n->outputs[i];
    used++;
  }
  for (int i = 0; i < k->nsizevars; i++) {
    n->sizes[i] = unique_name(a, all, used, k->sizevars[i].name);
    all[used] = n->sizes[i];
    used++;
  }
  return n;
}

void put_entry_params(Buf *b, const Kernel *k, const EntryNames *n) {
  for (int i = 0; i < k->ninputs; i++) {
    const KernelInput *in = &k->inputs[i];
    if (in->shape.rank == 0)
      buf_printf(b, "%s %s, ", abi_ctype(in->dtype), n->inputs[i]);
    else
      buf_printf(b, "const %s *%s, ", abi_ctype(in->dtype), n->inputs[i]);
  }
  for (int i = 0; i < k->noutputs; i++)
    buf_printf(b, "%s *%s, ", abi_ctype(k->outputs[i].dtype), n->outputs[i]);
  for (int i = 0; i < k->nsizevars; i++)
    buf_printf(b, "int64_t %s, ", n->sizes[i]);
}

const char *entry_signature(Arena *a, const Kernel *k, const EntryNames *n) {
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, "tecc_status %s(", k->name);
  put_entry_params(&b, k, n);
  buf_puts(&b, "cudaStream_t stream)");
  return buf_cstr(&b);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

const char *source_name(const SourceFile *f) {
  return f ? base_name(f->name) : "<stdin>";
}

const char *header_file_name(Compilation *c) {
  if (c->opts.header_name)
    return c->opts.header_name;
  const SourceFile *main = c->files.len ? c->files.items[0] : NULL;
  if (!main || strcmp(main->name, "-") == 0 || strcmp(main->name, "<stdin>") == 0)
    return "kernel.h";
  const char *base = base_name(main->name);
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  return arena_printf(c->arena, "%.*s.h", (int)len, base);
}

static const char *guard_name(Arena *a, const char *header) {
  Buf b;
  buf_init(&b, a);
  buf_puts(&b, "TECC_GENERATED_");
  for (const char *p = base_name(header); *p; p++) {
    char ch = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    buf_putn(&b, &ch, 1);
  }
  return buf_cstr(&b);
}

static const char status_block[] =
    "#ifndef TECC_STATUS_DEFINED\n"
    "#define TECC_STATUS_DEFINED\n"
    "typedef enum tecc_status {\n"
    "  TECC_SUCCESS = 0,\n"
    "  TECC_ERROR_INVALID_VALUE = 1,   /* negative size, NULL pointer for a non-empty tensor, size product overflows int64 */\n"
    "  TECC_ERROR_ALIASING = 2,        /* an output overlaps an input or another output */\n"
    "  TECC_ERROR_EMPTY_REDUCTION = 3, /* argmax/argmin over an empty axis */\n"
    "  TECC_ERROR_OUT_OF_MEMORY = 4,   /* workspace allocation failed */\n"
    "  TECC_ERROR_CUDA = 1000          /* TECC_ERROR_CUDA + (int)cudaError_t of the failing call */\n"
    "} tecc_status;\n"
    "\n"
    "typedef uint16_t tecc_f16;  /* IEEE binary16 bit pattern */\n"
    "typedef uint16_t tecc_bf16; /* bfloat16 bit pattern */\n"
    "\n"
    "static inline const char *tecc_status_string(int status) {\n"
    "  switch (status) {\n"
    "  case TECC_SUCCESS: return \"success\";\n"
    "  case TECC_ERROR_INVALID_VALUE: return \"invalid value\";\n"
    "  case TECC_ERROR_ALIASING: return \"an output overlaps an input or another output\";\n"
    "  case TECC_ERROR_EMPTY_REDUCTION: return \"argmax/argmin over an empty axis\";\n"
    "  case TECC_ERROR_OUT_OF_MEMORY: return \"out of memory for the workspace\";\n"
    "  default: return status >= TECC_ERROR_CUDA ? \"CUDA error\" : \"unknown status\";\n"
    "  }\n"
    "}\n"
    "#endif /* TECC_STATUS_DEFINED */\n";

static void emit_prologue(Out *o, Compilation *c, const char *header, const char *guard) {
  const SourceFile *main = c->files.len ? c->files.items[0] : NULL;
  emit(o, "/* %s - generated by tecc %s from %s.  Do not edit. */", base_name(header), TECC_VERSION_STRING,
       source_name(main));
  emit(o, "#ifndef %s", guard);
  emit(o, "#define %s", guard);
  emit_blank(o);
  emit(o, "#include <stdint.h>");
  emit(o, "#include <cuda_runtime_api.h>");
  emit_blank(o);
  emit(o, "#ifdef __cplusplus");
  emit(o, "extern \"C\" {");
  emit(o, "#endif");
  emit_blank(o);
  emit_text(o, status_block);
}

static void emit_epilogue(Out *o, const char *guard) {
  emit_blank(o);
  emit(o, "#ifdef __cplusplus");
  emit(o, "}");
  emit(o, "#endif");
  emit_blank(o);
  emit(o, "#endif /* %s */", guard);
}

const char *emit_header(Compilation *c, Module *m) {
  Arena *a = c->arena;
  const char *header = header_file_name(c);
  const char *guard = guard_name(a, header);
  Out *o = new_out(a);
  emit_prologue(o, c, header, guard);
  for (int i = 0; i < m->nkernels; i++) {
    const Kernel *k = m->kernels[i];
    emit_blank(o);
    emit(o, "/* %s */", k->te_signature ? k->te_signature : k->name);
    emit(o, "%s;", entry_signature(a, k, entry_names(a, k)));
  }
  emit_epilogue(o, guard);
  return out_finish(o, ".h");
}
