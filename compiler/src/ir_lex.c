/*
 * ir_lex.c — tokens of the TTIR text form, for ir_parse.c and ir_parse_op.c.
 *
 * A pull lexer over one NUL-terminated buffer: ir_lex_next() reads the token
 * after the current one. Values (%x, %x#1), symbols (@f), block labels (^bb0),
 * dialect types (!tt.ptr), identifiers with dots (arith.addi), decimal and hex
 * numbers, strings with MLIR escapes, "->" and one-character punctuation.
 * Comments run from "//" to the end of the line. Errors longjmp (ir_lex_error).
 */
#include "ir_parse_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool
name_char(int c)
{
    return isalnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

/* Writes "name:line:col: error: message", the source line and a caret, then
 * jumps back to the parser's entry. */
_Noreturn void
ir_lex_error(IrLexer *L, int line, int col, const char *fmt, ...)
{
    va_list ap;
    if (L->err) {
        fprintf(L->err, "%s:%d:%d: error: ", L->name, line, col);
        va_start(ap, fmt);
        vfprintf(L->err, fmt, ap);
        va_end(ap);
        fputc('\n', L->err);
        ir_lex_show_line(L, L->err, line, col);
    }
    longjmp(L->jb, 1);
}

void
ir_lex_show_line(const IrLexer *L, FILE *out, int line, int col)
{
    const char *s = L->text;
    for (int l = 1; l < line && *s; s++)
        if (*s == '\n')
            l++;
    size_t n = strcspn(s, "\n");
    fprintf(out, "%.*s\n", (int)n, s);
    for (int i = 1; i < col; i++)
        fputc(s[i - 1] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

static void
skip_space(IrLexer *L)
{
    for (;;) {
        char c = *L->p;
        if (c == '\n') {
            L->line++;
            L->bol = ++L->p;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            L->p++;
        } else if (c == '/' && L->p[1] == '/') {
            while (*L->p && *L->p != '\n')
                L->p++;
        } else {
            return;
        }
    }
}

static void
lex_string(IrLexer *L, IrTok *t)
{
    const char *p = L->p + 1;
    L->sbuf_n = 0;
    for (;; p++) {
        char c = *p;
        if (!c || c == '\n')
            ir_lex_error(L, t->line, t->col, "unterminated string");
        if (c == '"')
            break;
        if (c == '\\') {
            char e = *++p;
            if (e == 'n')
                c = '\n';
            else if (e == 't')
                c = '\t';
            else if (e == '"' || e == '\\')
                c = e;
            else if (isxdigit((unsigned char)e) && isxdigit((unsigned char)p[1])) {
                char hex[3] = {e, p[1], 0};
                c = (char)strtol(hex, NULL, 16);
                p++;
            } else
                ir_lex_error(L, t->line, (int)(p - L->bol), "bad escape in string");
        }
        if (L->sbuf_n + 1 >= L->sbuf_cap) {
            L->sbuf_cap = L->sbuf_cap ? L->sbuf_cap * 2 : 256;
            L->sbuf = realloc(L->sbuf, L->sbuf_cap);
            if (!L->sbuf)
                ir_die("out of memory");
        }
        L->sbuf[L->sbuf_n++] = c;
    }
    L->sbuf[L->sbuf_n] = 0;
    t->kind = TK_STR;
    t->str = L->sbuf;
    t->slen = L->sbuf_n;
    L->p = p + 1;
}

static void
lex_number(IrLexer *L, IrTok *t)
{
    const char *p = L->p, *s = p;
    if (*p == '-')
        p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
        char *end;
        t->kind = TK_INT;
        t->hex = true;
        t->uv = strtoull(p, &end, 16);
        t->iv = (int64_t)t->uv;
        if (*s == '-')
            t->iv = -t->iv;
        L->p = end;
        return;
    }
    while (isdigit((unsigned char)*p))
        p++;
    bool isf = false;
    if (*p == '.' && isdigit((unsigned char)p[1])) {
        isf = true;
        for (p++; isdigit((unsigned char)*p); p++)
            ;
    }
    if ((*p == 'e' || *p == 'E') &&
        (isdigit((unsigned char)p[1]) ||
         ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
        isf = true;
        for (p += 2; isdigit((unsigned char)*p); p++)
            ;
    }
    char *end;
    if (isf) {
        t->kind = TK_FLOAT;
        t->fv = strtod(s, &end);
    } else {
        t->kind = TK_INT;
        if (*s == '-') {
            t->iv = strtoll(s, &end, 10);
            t->uv = (uint64_t)t->iv;
        } else {
            t->uv = strtoull(s, &end, 10);
            t->iv = (int64_t)t->uv;
        }
        t->fv = strtod(s, NULL);
    }
    L->p = p;
}

void
ir_lex_next(IrLexer *L)
{
    skip_space(L);
    IrTok *t = &L->tok;
    memset(t, 0, sizeof *t);
    t->s = L->p;
    t->line = L->line;
    t->col = (int)(L->p - L->bol) + 1;
    char c = *L->p;
    if (!c) {
        t->kind = TK_EOF;
        return;
    }
    if (c == '%' || c == '@' || c == '^' || c == '!') {
        const char *p = L->p + 1;
        while (name_char((unsigned char)*p) && !(c == '!' && *p == '-'))
            p++;
        if (c == '%' && *p == '#' && isdigit((unsigned char)p[1]))
            for (p++; isdigit((unsigned char)*p); p++)
                ;
        if (p == L->p + 1)
            ir_lex_error(L, t->line, t->col, "expected a name after '%c'", c);
        t->kind = c == '%' ? TK_VAL : c == '@' ? TK_SYM : c == '^' ? TK_BB : TK_BANG;
        t->str = L->p + 1;
        t->slen = (size_t)(p - L->p - 1);
        L->p = p;
    } else if (isalpha((unsigned char)c) || c == '_') {
        const char *p = L->p;
        while (name_char((unsigned char)*p) && *p != '-')
            p++;
        t->kind = TK_ID;
        t->str = L->p;
        t->slen = (size_t)(p - L->p);
        L->p = p;
    } else if (isdigit((unsigned char)c) || (c == '-' && isdigit((unsigned char)L->p[1]))) {
        lex_number(L, t);
    } else if (c == '"') {
        lex_string(L, t);
    } else if (c == '-' && L->p[1] == '>') {
        t->kind = TK_ARROW;
        L->p += 2;
    } else if (strchr("(){}[]<>,:=*?#", c)) {
        t->kind = TK_PUNCT;
        t->ch = c;
        L->p++;
    } else {
        ir_lex_error(L, t->line, t->col, "unexpected character '%c'", c);
    }
    t->n = (size_t)(L->p - t->s);
}

void
ir_lex_init(IrLexer *L, const char *text, const char *name, FILE *err)
{
    memset(L, 0, sizeof *L);
    L->text = L->p = L->bol = text;
    L->name = name ? name : "<input>";
    L->err = err;
    L->line = 1;
}

void
ir_lex_fini(IrLexer *L)
{
    free(L->sbuf);
    L->sbuf = NULL;
}

/* Re-positions the lexer at the start of the current token (used to read
 * tensor dimensions "128x64x" character by character). */
void
ir_lex_rewind(IrLexer *L)
{
    L->p = L->tok.s;
}
