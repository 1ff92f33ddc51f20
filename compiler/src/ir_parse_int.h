/*
 * ir_parse_int.h — internals shared by the TTIR lexer and parser (ir_lex.c,
 * ir_parse.c, ir_parse_op.c); nothing else includes it.
 *
 * The lexer reads a NUL-terminated buffer it does not own; token text points
 * into it, except string tokens, whose decoded text lives in the lexer's own
 * buffer until the next string. Errors longjmp to L->jb after printing
 * "name:line:col: error: message", the source line and a caret. Every pr_
 * function either succeeds or longjmps; everything it builds is owned by the
 * module being parsed.
 */
#ifndef IR_PARSE_INT_H
#define IR_PARSE_INT_H

#include "ir_int.h"

#include <setjmp.h>

typedef enum IrTokKind {
    TK_EOF, TK_VAL, TK_SYM, TK_BB, TK_BANG, TK_ID, TK_INT, TK_FLOAT, TK_STR, TK_ARROW, TK_PUNCT
} IrTokKind;

typedef struct IrTok {
    IrTokKind kind;
    const char *s;    /* token text in the input */
    size_t n;
    const char *str;  /* name (without sigil) or decoded string */
    size_t slen;
    int ch;           /* TK_PUNCT */
    int line, col;
    int64_t iv;       /* TK_INT (and TK_FLOAT truncated) */
    uint64_t uv;
    double fv;        /* TK_FLOAT, and TK_INT as a double */
    bool hex;         /* TK_INT written 0x... */
} IrTok;

typedef struct IrLexer {
    const char *text, *name;
    const char *p, *bol; /* cursor, beginning of its line */
    int line;
    FILE *err;
    IrTok tok;           /* current token */
    char *sbuf;          /* decoded string of the last TK_STR */
    size_t sbuf_n, sbuf_cap;
    jmp_buf jb;
} IrLexer;

void ir_lex_init(IrLexer *L, const char *text, const char *name, FILE *err);
void ir_lex_fini(IrLexer *L);
void ir_lex_next(IrLexer *L);
void ir_lex_rewind(IrLexer *L);
void ir_lex_show_line(const IrLexer *L, FILE *out, int line, int col);
_Noreturn void ir_lex_error(IrLexer *L, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- parser state (ir_parse.c) ---- */

typedef struct Sym {
    const char *name;
    size_t n;
    IrRef ref;
    int prev; /* older entry in the same bucket, or -1 */
} Sym;

#define NBUCKET 1024

typedef struct Parser {
    IrLexer L;
    IrModule *m;
    IrFunc *f;
    IrBlock *blk;
    uint32_t file;
    Sym *syms;
    int nsyms, capsyms;
    int head[NBUCKET];
} Parser;

typedef struct Use {
    IrRef r;
    int line, col;
    const char *name;
    size_t n;
} Use;

#define MAXV 256 /* operands, results or types in one op */

enum { A_INT, A_FLOAT, A_BOOL, A_STR, A_ARRAY, A_WORD, A_UNIT, A_OTHER };
#define MAXARR 64
typedef struct Attr {
    const char *name;
    size_t n;
    int kind, line, col;
    int64_t iv;
    double fv;
    const char *str; /* A_STR (arena copy), A_WORD (input text) */
    size_t slen;
    int64_t arr[MAXARR];
    uint32_t narr;
} Attr;
typedef struct Attrs {
    Attr a[16];
    int n;
} Attrs;

#define TOK (P->L.tok)

typedef struct OpHead {
    IrOpc opc;
    int line, col;       /* of the op's first token */
    int nres;            /* names on the left of '=' (group count for %x:k) */
    struct {
        const char *s;
        size_t n;
        int line, col;
        int group;       /* k for "%x:k", else 0 */
    } res[MAXV];
    int nnames;
} OpHead;

/* ---- ir_parse.c: tokens ---- */
_Noreturn void pr_error(Parser *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pr_next(Parser *P);
bool pr_is_punct(Parser *P, int c);
bool pr_is_id(Parser *P, const char *w);
const char *pr_tokdesc(Parser *P);            /* "'tok'" for messages (static buffer) */
bool pr_accept(Parser *P, int c);
void pr_expect(Parser *P, int c);
bool pr_accept_id(Parser *P, const char *w);
void pr_expect_id(Parser *P, const char *w);
void pr_expect_arrow(Parser *P);
int pr_expect_word(Parser *P, const char *const *names, int count, const char *what);
int64_t pr_expect_int(Parser *P);
const char *pr_expect_str(Parser *P);         /* arena copy */
/* ---- ir_parse.c: values and types ---- */
Use pr_use(Parser *P);
int pr_uses(Parser *P, Use *u, int max);      /* 1..max values; returns the count */
void pr_refs(const Use *u, int n, IrRef *out);
IrType pr_type(Parser *P);
int pr_type_list(Parser *P, IrType *t, int max, bool parens);
int pr_results_types(Parser *P, IrType *t, int max); /* "-> T" or "-> (T, ...)" */
void pr_check_type(Parser *P, const Use *u, IrType t);
void pr_check_types(Parser *P, const Use *u, int n, const IrType *t, int nt);
IrType pr_with_elem(Parser *P, IrType t, IrType e);
IrType pr_load_type(Parser *P, IrType t);     /* what tt.load of a t pointer yields */
/* ---- ir_parse.c: attributes ---- */
void pr_attrs(Parser *P, Attrs *as);          /* "{...}" when present */
Attr *pr_aget(Attrs *as, const char *name);
int64_t pr_aint(Parser *P, Attrs *as, const char *name, int64_t dflt);
Attr *pr_arr_attr(Parser *P, Attrs *as, const char *name, bool required);
const char *pr_astr(Parser *P, Attrs *as, const char *name);
/* ---- ir_parse.c: ops and regions ---- */
IrOp *pr_new_op(Parser *P, OpHead *h, const IrRef *args, int nargs, const IrType *rt, int nres,
                int nregs);
void pr_region(Parser *P, IrBlock *b, bool header, const Use *names, int nnames);
void pr_implicit_yield(Parser *P, IrBlock *b);
void pr_loc(Parser *P, IrLoc *loc);
void pr_bind_results(Parser *P, OpHead *h, IrOp *op);
/* ---- ir_parse_op.c ---- */
IrOp *pr_op(Parser *P);                        /* [results =] op ... [loc(...)] */

#endif /* IR_PARSE_INT_H */
