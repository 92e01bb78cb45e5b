"""Parse a header written by tecc (abi.md section 2) into signature models.

The header is regular: an optional comment giving the .te signature, for a
gradient kernel a second comment ``gradient of FORWARD`` (abi.md section 1),
then

    tecc_status NAME(<inputs>, <outputs>, <size variables>, cudaStream_t stream);

Inputs come first (``const T *name`` for tensors, ``T name`` for rank-0
inputs), then outputs (``T *name``), then ``int64_t`` size variables, then
the stream.  The roles follow from that order alone, so a header without
comments still parses; the comment adds the .te names, dtypes and shapes,
which the C types cannot carry.

gradient_inputs() checks that one signature is a gradient of another
(language.md section 13.2) and says which inputs it differentiates;
gradients() pairs every forward kernel of a list with its gradient kernels.
"""

import re
from collections import namedtuple

# C type spelling -> .te dtype (abi.md section 2).  uint8_t is bool or u8:
# the .te signature comment says which (attach_te).
C_TO_DTYPE = {
    "uint8_t": "bool",
    "int8_t": "i8",
    "int32_t": "i32",
    "int64_t": "i64",
    "tecc_f8e4m3": "f8e4m3",
    "tecc_f8e5m2": "f8e5m2",
    "tecc_f16": "f16",
    "tecc_bf16": "bf16",
    "float": "f32",
    "double": "f64",
}
DTYPE_TO_C = dict({v: k for k, v in C_TO_DTYPE.items()}, u8="uint8_t")
DTYPE_SIZE = {"bool": 1, "i8": 1, "u8": 1, "i32": 4, "i64": 8, "f8e4m3": 1, "f8e5m2": 1,
              "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
FLOAT_DTYPES = ("f8e4m3", "f8e5m2", "f16", "bf16", "f32", "f64")

STATUS_NAMES = {
    0: "TECC_SUCCESS",
    1: "TECC_ERROR_INVALID_VALUE",
    2: "TECC_ERROR_ALIASING",
    3: "TECC_ERROR_EMPTY_REDUCTION",
    4: "TECC_ERROR_OUT_OF_MEMORY",
    1000: "TECC_ERROR_CUDA",
}

INPUT, OUTPUT, SIZE, STREAM = "input", "output", "size", "stream"


class HeaderError(ValueError):
    """The header does not follow abi.md."""


class Param:
    """One C parameter of an entry point.

    role   -- INPUT, OUTPUT, SIZE or STREAM
    ctype  -- the C type as written, e.g. "const float *"
    dtype  -- the .te dtype ("f32", ...) for tensors and scalars, else None
    shape  -- for tensors: a tuple of dims (int or size-variable name) when the
              .te comment gives it, else None; () for rank-0 values
    by_value -- True for a rank-0 input passed by value
    te_name -- the name in the .te signature comment: the C name differs
               where abi.md section 2 renames it (``int`` is ``u_int`` in C)
    """

    def __init__(self, name, ctype, role, dtype=None, shape=None, by_value=False):
        self.name, self.ctype, self.role = name, ctype, role
        self.dtype, self.shape, self.by_value = dtype, shape, by_value
        self.te_name = name

    @property
    def is_float(self):
        return self.dtype in FLOAT_DTYPES

    @property
    def is_tensor(self):
        return self.role in (INPUT, OUTPUT) and not self.by_value

    def __repr__(self):
        shape = "" if self.shape is None else "[%s]" % ", ".join(map(str, self.shape))
        return "<%s %s %s: %s%s>" % (self.role, self.ctype, self.name, self.dtype, shape)


class Signature:
    """One entry point: its name, parameters, the .te comment text, and for a
    gradient kernel (language.md section 13) grad_of, the name of the kernel
    it is the gradient of (None for any other kernel)."""

    def __init__(self, name, params, te_signature=None, grad_of=None):
        self.name, self.params, self.te_signature = name, params, te_signature
        self.grad_of = grad_of

    def by_role(self, role):
        return [p for p in self.params if p.role == role]

    @property
    def inputs(self):
        return self.by_role(INPUT)

    @property
    def outputs(self):
        return self.by_role(OUTPUT)

    @property
    def sizes(self):
        return [p.name for p in self.by_role(SIZE)]

    def __repr__(self):
        return "<Signature %s(%s)>" % (self.name, ", ".join(map(repr, self.params)))


def strip_comments(text):
    """Returns the text with comments blanked, keeping every offset."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def comments_between(text, start, end):
    """The comment bodies in text[start:end], in order."""
    found = []
    for m in re.finditer(r"/\*(.*?)\*/|//([^\n]*)", text[start:end], flags=re.S):
        body = m.group(1) if m.group(1) is not None else m.group(2)
        found.append(re.sub(r"^\s*\*+ ?", "", body, flags=re.M).strip())
    return found


def split_top(text, sep=","):
    """Splits on sep outside brackets and parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


TE_TYPE = re.compile(r"^(bool|i8|u8|i32|i64|f8e4m3|f8e5m2|f16|bf16|f32|f64)\s*(?:\[(.*)\])?$")


def parse_te_type(text):
    """'f32[N, 4]' -> ('f32', ('N', 4)); 'f32' -> ('f32', ()).  A derived
    size (language.md section 9.8) stays its text: 'f32[min(3, D)]' ->
    ('f32', ('min(3, D)',))."""
    m = TE_TYPE.match(text.strip())
    if not m:
        raise HeaderError("not a .te type: %r" % text)
    dims = tuple(int(d) if d.isdigit() else d
                 for d in split_top(m.group(2) or "") if d)
    return m.group(1), dims


def parse_te_binding(text):
    """'x: f32[N]' -> ('x', 'f32', ('N',)); 'y' -> ('y', None, None)."""
    name, _, typ = text.partition(":")
    if not typ.strip():
        return name.strip(), None, None
    dtype, dims = parse_te_type(typ)
    return name.strip(), dtype, dims


TE_SIG = re.compile(r"(?:kernel\s+)?([A-Za-z_]\w*)\s*\((.*?)\)\s*->\s*(.+)$", re.S)


def parse_te_signature(comment, name):
    """Finds 'NAME(params) -> outs' in a comment; returns (ins, outs) or None."""
    for line in [comment] + comment.splitlines():
        m = TE_SIG.search(line.strip())
        if not m or m.group(1) != name:
            continue
        outs = m.group(3).strip()
        outs = re.sub(r"\s*[{;].*$", "", outs)
        if outs.startswith("("):
            outs = outs[1:outs.rindex(")")] if ")" in outs else outs[1:]
        try:
            return ([parse_te_binding(p) for p in split_top(m.group(2))],
                    [parse_te_binding(p) for p in split_top(outs)])
        except HeaderError:
            return None
    return None


def parse_c_param(text):
    """'const float *x' -> ('const float *', 'x')."""
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*$", text.strip(), flags=re.S)
    if not m or not m.group(1).strip():
        raise HeaderError("cannot parse parameter %r" % text)
    ctype = re.sub(r"\s+", " ", m.group(1).strip())
    ctype = re.sub(r"\s*\*\s*", " *", ctype).strip()
    return ctype, m.group(2)


def base_ctype(ctype):
    return ctype.replace("const", "").replace("*", "").strip()


def classify(c_params, name):
    """Assigns roles by position: inputs, outputs (non-const pointers),
    int64_t size variables, the stream."""
    if not c_params or base_ctype(c_params[-1][0]) != "cudaStream_t":
        raise HeaderError("%s: last parameter must be 'cudaStream_t stream'" % name)
    params, seen_output = [], False
    for ctype, pname in c_params[:-1]:
        is_ptr, is_const = "*" in ctype, ctype.startswith("const")
        base = base_ctype(ctype)
        if base not in C_TO_DTYPE:
            raise HeaderError("%s: parameter %s has unknown type %r" % (name, pname, ctype))
        if is_ptr and not is_const:
            role, seen_output = OUTPUT, True
        elif seen_output:
            if is_ptr or base != "int64_t":
                raise HeaderError("%s: parameter %s after the outputs is not int64_t"
                                  % (name, pname))
            role = SIZE
        else:
            role = INPUT
        dtype = None if role == SIZE else C_TO_DTYPE[base]
        params.append(Param(pname, ctype, role, dtype, by_value=(role == INPUT and not is_ptr)))
    params.append(Param(c_params[-1][1], c_params[-1][0], STREAM))
    if not any(p.role == OUTPUT for p in params):
        raise HeaderError("%s: no output parameter" % name)
    return params


def attach_te(params, te, name):
    """Copies the .te shapes onto the C parameters; checks the dtypes agree."""
    ins, outs = te
    c_ins = [p for p in params if p.role == INPUT]
    c_outs = [p for p in params if p.role == OUTPUT]
    if len(ins) != len(c_ins) or len(outs) != len(c_outs):
        raise HeaderError("%s: the .te signature has %d inputs and %d outputs, the "
                          "prototype %d and %d" % (name, len(ins), len(outs),
                                                   len(c_ins), len(c_outs)))
    for (tname, dtype, dims), p in zip(ins + outs, c_ins + c_outs):
        if dtype is not None and dtype != p.dtype and DTYPE_TO_C.get(dtype) == base_ctype(p.ctype):
            p.dtype = dtype  # u8, which C spells as bool's uint8_t
        elif dtype is not None and dtype != p.dtype:
            raise HeaderError("%s: %s is %s in the .te signature but %s in C"
                              % (name, p.name, dtype, p.ctype))
        if p.by_value and dims:
            raise HeaderError("%s: %s is passed by value but has shape %r" % (name, p.name, dims))
        p.shape = dims if dims is not None else None
        if p.by_value:
            p.shape = ()
        p.te_name = tname


PROTO = re.compile(r"\btecc_status\s+([A-Za-z_]\w*)\s*\(([^()]*)\)\s*;")


def parse_statuses(text):
    """The enum tecc_status values the header defines (abi.md section 3)."""
    names = dict(STATUS_NAMES)
    for m in re.finditer(r"\b(TECC_[A-Z_]+)\s*=\s*(\d+)", strip_comments(text)):
        names[int(m.group(2))] = m.group(1)
    return names


GRAD_OF = re.compile(r"^gradient of ([A-Za-z_]\w*)$")


def parse_header(text):
    """Returns the list of Signature found in a header's text."""
    code = strip_comments(text)
    sigs, prev_end = [], 0
    for m in PROTO.finditer(code):
        name = m.group(1)
        c_params = [parse_c_param(p) for p in split_top(m.group(2)) if p.strip() != "void"]
        params = classify(c_params, name)
        comments = comments_between(text, prev_end, m.start())
        te_text = None
        for comment in reversed(comments):
            te = parse_te_signature(comment, name)
            if te is not None:
                attach_te(params, te, name)
                te_text = comment
                break
        grad_of = None
        for comment in reversed(comments):
            g = GRAD_OF.match(comment)
            if g:
                grad_of = g.group(1)
                break
        sizes = {p.name for p in params if p.role == SIZE}
        for p in params:
            if p.role == INPUT and p.shape is None and p.by_value:
                p.shape = ()
        sigs.append(Signature(name, params, te_text, grad_of))
        prev_end = m.end()
        check_sizes(sigs[-1], sizes)
    return sigs


def check_sizes(sig, sizes):
    """Size variables must appear in the input shapes when those are known."""
    if any(p.shape is None for p in sig.inputs):
        return
    named = {d for p in sig.inputs for d in p.shape if isinstance(d, str)}
    missing = sizes - named
    if missing:
        raise HeaderError("%s: size variable(s) %s appear in no input shape"
                          % (sig.name, ", ".join(sorted(missing))))


def _same_type(a, b):
    """a and b have one dtype and, where both shapes are known, one shape."""
    return a.dtype == b.dtype and (a.shape is None or b.shape is None or
                                   tuple(a.shape) == tuple(b.shape))


def _describe(p):
    shape = "" if p.shape is None else "[%s]" % ", ".join(map(str, p.shape))
    return "%s: %s%s" % (p.te_name, p.dtype, shape)


def cotangent_outputs(fwd):
    """The outputs of fwd that get a cotangent in its gradient kernels: the
    float ones, in order (language.md section 13.2)."""
    return [p for p in fwd.outputs if p.is_float]


def gradient_inputs(fwd, grad):
    """The positions in fwd.inputs of the inputs grad differentiates, in the
    order of grad's outputs.  Raises HeaderError unless grad's signature is
    that of a gradient of fwd (language.md section 13.2): fwd's inputs, then
    one cotangent d<output> per float output of fwd with that output's dtype
    and shape; then one output d<input> per input differentiated, a float
    input of fwd, with its dtype and shape.  Names are compared as the .te
    signature comments write them (as the C names without them)."""
    where = "%s (gradient of %s)" % (grad.name, fwd.name)
    outs = cotangent_outputs(fwd)
    want = len(fwd.inputs) + len(outs)
    if len(grad.inputs) != want:
        raise HeaderError("%s: has %d inputs; a gradient of %s has %d (its %d inputs and "
                          "a cotangent for each of its %d float outputs)"
                          % (where, len(grad.inputs), fwd.name, want, len(fwd.inputs),
                             len(outs)))
    for f, g in zip(fwd.inputs, grad.inputs):
        if f.te_name != g.te_name or not _same_type(f, g) or f.by_value != g.by_value:
            raise HeaderError("%s: input %s does not match %s's input %s"
                              % (where, _describe(g), fwd.name, _describe(f)))
    for o, g in zip(outs, grad.inputs[len(fwd.inputs):]):
        if g.te_name != "d" + o.te_name or not _same_type(o, g):
            raise HeaderError("%s: input %s is not the cotangent d%s of %s's output %s"
                              % (where, _describe(g), o.te_name, fwd.name, _describe(o)))
    by_name = {p.te_name: i for i, p in enumerate(fwd.inputs)}
    positions = []
    for g in grad.outputs:
        i = by_name.get(g.te_name[1:]) if g.te_name.startswith("d") else None
        if i is None:
            raise HeaderError("%s: output %s is not d<input> for an input of %s (%s)"
                              % (where, g.te_name, fwd.name,
                                 ", ".join(p.te_name for p in fwd.inputs)))
        f = fwd.inputs[i]
        if not f.is_float or not _same_type(f, g) or i in positions:
            raise HeaderError("%s: output %s is not the gradient of %s's input %s"
                              % (where, _describe(g), fwd.name, _describe(f)))
        positions.append(i)
    return tuple(positions)


Gradient = namedtuple("Gradient", "sig inputs")
Gradient.__doc__ = """A gradient kernel's Signature and the positions, in its
forward's inputs, of the inputs it differentiates (its outputs' order)."""


def gradients(sigs):
    """{forward name: [Gradient, ...]} for the gradient kernels in sigs whose
    forward is in sigs too, in the order of sigs.  (A gradient kernel whose
    forward is not there -- one defined in a file that imports it -- is left
    out.)  HeaderError when a kernel says it is the gradient of a kernel whose
    signature does not fit (gradient_inputs)."""
    by_name = {s.name: s for s in sigs}
    paired = {}
    for s in sigs:
        fwd = by_name.get(s.grad_of) if s.grad_of else None
        if fwd is not None:
            paired.setdefault(fwd.name, []).append(Gradient(s, gradient_inputs(fwd, s)))
    return paired


def parse_header_file(path):
    with open(path) as f:
        return parse_header(f.read())
