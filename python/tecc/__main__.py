"""python3 -m tecc describe HEADER...: print each entry point's parameters."""

import sys

from .header import HeaderError, parse_header_file


def describe(path):
    for sig in parse_header_file(path):
        print("%s%s" % (sig.name, "  # " + sig.te_signature.replace("\n", " ")
                        if sig.te_signature else ""))
        if sig.grad_of:
            print("  gradient of %s" % sig.grad_of)
        for p in sig.params:
            shape = "" if p.shape is None else "[%s]" % ", ".join(map(str, p.shape))
            print("  %-6s %-8s %-20s %s%s" % (p.role, p.name, p.ctype, p.dtype or "", shape))


def main(argv):
    if len(argv) < 2 or argv[0] != "describe":
        print("usage: python3 -m tecc describe HEADER...", file=sys.stderr)
        return 2
    try:
        for path in argv[1:]:
            describe(path)
    except (OSError, HeaderError) as e:
        print("tecc: %s" % e, file=sys.stderr)
        return 1
    return 0


sys.exit(main(sys.argv[1:]))
