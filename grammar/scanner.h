/* scanner.h — the interface between the flex scanner (lexer.l) and the bison
 * parser (parser.y).
 *
 * The scanner is reentrant; its state lives in a LexState that the parser
 * owns.  Token locations are byte ranges (TeLoc) of the source file.  The
 * prototypes of the generated scanner are declared here by hand so that no
 * generated lexer header is needed. */
#ifndef TECC_SCANNER_H
#define TECC_SCANNER_H

#include <stdint.h>
#include "ast.h"

/* A token's or a rule's byte range [begin, end) in the source file. */
typedef struct TeLoc {
  uint32_t begin, end;
} TeLoc;

/* An open bracket the scanner has seen and not yet seen closed. */
typedef struct OpenBracket {
  char kind; /* '(' '[' '{' */
  uint32_t begin;
} OpenBracket;

typedef struct LexState {
  Arena *arena;
  DiagList *diags;
  const SourceFile *src;
  uint32_t pos;       /* offset of the next byte to scan */
  int newline_seen;   /* a newline since the last token returned */
  /* The last token returned (usually the parser's lookahead) and the one
   * before it, for error messages. */
  int last_kind, prev_kind;
  TeLoc last_loc, prev_loc;
  uint32_t prev2_end; /* end of the token before those two */
  int last_first_on_line;  /* the last token began a line */
  int prev_first_on_line;  /* the one before it did */
  int last_unmatched;      /* the last token is a closer with no opener */
  int last_is_bad;         /* the last token had a lexical error */
  int token_is_bad;        /* the token being scanned has one */
  /* The last token is a closer that also closed this inner bracket,
   * which was never closed itself. */
  OpenBracket last_closed_over;
  int closed_over;
  /* Brackets still open, innermost last. */
  OpenBracket *opens;
  int nopen, capopen;
  /* Error recovery: drop tokens up to the next statement boundary (a token
   * that starts a line, ';', '}' or a statement keyword), skipping whole
   * {...} blocks. */
  int skipping;
  int skip_depth;
} LexState;

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

/* lexer.l: a scanner over st->src, reading from st->pos. */
int lexer_open(LexState *st, yyscan_t *scanner);
void lexer_close(yyscan_t scanner);
/* Starts skipping to the next statement boundary.  depth: '{' already
 * open that the skip must get past. */
void lexer_skip_statement(LexState *st, int depth);
/* Forgets open brackets beyond the innermost `keep`. */
void lexer_keep_brackets(LexState *st, int keep);
SrcRange lex_range(const LexState *st, TeLoc loc);

union TE_YYSTYPE;
int te_yylex(union TE_YYSTYPE *lval, TeLoc *lloc, yyscan_t scanner);

#endif
