/* parse.h — the parser (grammar/parser.y, with the scanner of
 * grammar/lexer.l): the first pass of the pipeline. */
#ifndef TECC_PARSE_H
#define TECC_PARSE_H

#include "ast.h"

/* Parses a file; syntax errors go to `diags`.  Returns the statements that
 * parsed (recovery drops the broken ones), never NULL. */
AstFile *parse_file(Arena *a, DiagList *diags, const SourceFile *src);

#endif
