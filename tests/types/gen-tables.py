#!/usr/bin/env python3
"""gen-tables.py — writes promotion.tsv and broadcast.tsv from an independent
model of language.md §6-§10 (not from tecc).  Run it from tests/types after a
change of the rules; tests/types.sh checks tecc against the tables.

promotion.tsv: OP  LHS  RHS  RESULT    (RHS '-' for unary ops and reductions)
  LHS/RHS are dtypes, or 'int'/'float' for a weak literal (3, 2.5).
  RESULT is the dtype of the output y, or 'error'.
broadcast.tsv: LHS-SHAPE  RHS-SHAPE  RESULT-SHAPE-or-error
"""
DT = ['bool', 'i8', 'u8', 'i32', 'i64', 'f8e4m3', 'f8e5m2', 'f16', 'bf16', 'f32', 'f64']
RANK = {'bool': 0, 'i8': 1, 'u8': 1, 'i32': 2, 'i64': 3, 'f8e4m3': 4, 'f8e5m2': 4,
        'f16': 4, 'bf16': 4, 'f32': 5, 'f64': 6}
FLOAT = {'f8e4m3', 'f8e5m2', 'f16', 'bf16', 'f32', 'f64'}
WEAK = ['int', 'float']


def promote(a, b):
    """Two operands, weak literals included; None when both are weak."""
    if a in WEAK and b in WEAK:
        return None
    if a in WEAK:
        a, b = b, a
    if b == 'int':
        return 'i32' if a == 'bool' else a
    if b == 'float':
        return a if a in FLOAT else 'f32'
    if a == b:
        return a
    if RANK[a] == RANK[b]:  # i8 and u8; two different 8/16-bit floats
        return 'f32' if a in FLOAT else 'i32'
    return a if RANK[a] > RANK[b] else b


def weak_default(a, b):
    return 'f32' if 'float' in (a, b) else 'i32'


def to_float(t):
    return t if t in FLOAT else ('f64' if t == 'i64' else 'f32')


def binary(op, a, b):
    if op in ('and', 'or'):
        return 'bool' if a == b == 'bool' else 'error'
    if op in ('==', '<'):
        return 'bool'
    if 'bool' in (a, b):
        return 'error'  # arithmetic on bool
    t = promote(a, b)
    if t is None:  # two weak literals: folded, weak, then i32/f32
        t = 'f32' if op in ('/', 'atan2') else weak_default(a, b)
        return t
    if op in ('/', 'atan2'):
        return to_float(t)
    return t


def where(a, b):
    t = promote(a, b)
    return weak_default(a, b) if t is None else t


def unary(op, a):
    if op == 'not':
        return 'bool' if a == 'bool' else 'error'
    if op == 'isnan':
        return 'bool'
    if a in WEAK:
        if op == 'exp':
            return 'f32'
        return 'i32' if a == 'int' else 'f32'
    if op == 'exp':
        return to_float(a) if a not in FLOAT else a
    if a == 'bool':
        return 'error'  # -, abs, floor
    return a


def reduction(op, a):
    if a in WEAK:
        a = 'i32' if a == 'int' else 'f32'
    if op in ('any', 'all'):
        return 'bool' if a == 'bool' else 'error'
    if op == 'argmax':
        return 'i64'
    if op in ('sum', 'prod'):
        return 'i64' if a == 'bool' else 'i32' if a in ('i8', 'u8') else a
    if op in ('mean', 'var'):
        return a if a in FLOAT else ('f64' if a == 'i64' else 'f32')
    return a  # max, min


def promotion_rows():
    ops = ['+', '-', '*', '/', '//', '%', '**', '==', '<', 'and', 'maximum',
           'atan2', 'where']
    operands = DT + WEAK
    for op in ops:
        for a in operands:
            for b in operands:
                r = where(a, b) if op == 'where' else binary(op, a, b)
                yield op, a, b, r
    for op in ['neg', 'exp', 'abs', 'floor', 'isnan', 'not']:
        for a in operands:
            yield op, a, '-', unary(op, a)
    for op in ['sum', 'prod', 'max', 'mean', 'var', 'any', 'argmax']:
        for a in DT + WEAK:
            yield op, a, '-', reduction(op, a)


def broadcast(x, y):
    """numpy rules; a size variable never stretches."""
    out = []
    for i in range(1, max(len(x), len(y)) + 1):
        a = x[-i] if i <= len(x) else None
        b = y[-i] if i <= len(y) else None
        if a is None or a == '1' and b is not None:
            out.append(b)
        elif b is None or b == '1' or a == b:
            out.append(a)
        else:
            return 'error'
    return '[' + ','.join(reversed(out)) + ']'


def broadcast_rows():
    shapes = [[], ['1'], ['N'], ['M'], ['3'], ['4'], ['1', '1'], ['N', '1'],
              ['1', 'N'], ['N', 'D'], ['D', 'N'], ['N', '3'], ['3', '1'],
              ['M', 'N', 'D'], ['M', '1', 'D'], ['1', '1', '1'], ['2', 'N', '1']]
    for x in shapes:
        for y in shapes:
            yield '[' + ','.join(x) + ']', '[' + ','.join(y) + ']', broadcast(x, y)


with open('promotion.tsv', 'w') as f:
    for row in promotion_rows():
        f.write('\t'.join(row) + '\n')
with open('broadcast.tsv', 'w') as f:
    for row in broadcast_rows():
        f.write('\t'.join(row) + '\n')
