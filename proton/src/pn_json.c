/*
 * pn_json.c — JSON text for the writers: exact numbers and the upstream layout.
 *
 * Trees are built with cJSON, but numbers are stored as raw text items so that
 * integers stay exact beyond 2^53 and doubles print like nlohmann::json's to_chars:
 * the shortest digits that read back to the same value, fixed notation for decimal
 * exponents -5 < e < 15 (".0" when integral), exponent notation otherwise. The printer
 * writes either compact text or the layout of nlohmann's dump(4) that upstream
 * Proton's .hatchet files have: 4-space indent, "key": value, [] and {} for empty
 * containers, non-ASCII UTF-8 passed through. Output goes through a buffer (PnJOut) to
 * the caller's writer callback; the streamed writers (pn_chrome.c) put their numbers
 * and strings into it directly with the same formatting, no cJSON item per value.
 */
#include "pn_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef PnJOut JOut;

static void
flush(JOut *o)
{
    if (o->n)
        o->w(o->buf, o->n, o->user);
    o->n = 0;
}

void
pn_jout_flush(PnJOut *o)
{
    flush(o);
}

static void
put(JOut *o, const char *s, size_t n)
{
    if (o->n + n > sizeof o->buf) {
        flush(o);
        if (n > sizeof o->buf) {
            o->w(s, n, o->user);
            return;
        }
    }
    memcpy(o->buf + o->n, s, n);
    o->n += n;
}

static void
puts_(JOut *o, const char *s)
{
    put(o, s, strlen(s));
}

void
pn_jout_put(PnJOut *o, const char *s, size_t n)
{
    put(o, s, n);
}

void
pn_jout_puts(PnJOut *o, const char *s)
{
    put(o, s, strlen(s));
}

static void
indent(JOut *o, int depth)
{
    static const char sp[] = "                                                                ";
    size_t n = (size_t)depth * 4;
    while (n > sizeof sp - 1) {
        put(o, sp, sizeof sp - 1);
        n -= sizeof sp - 1;
    }
    put(o, sp, n);
}

static void
put_string(JOut *o, const char *s)
{
    const char *run = s;
    put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(o, run, (size_t)(s - run));
        run = s + 1;
        switch (c) {
        case '"': puts_(o, "\\\""); break;
        case '\\': puts_(o, "\\\\"); break;
        case '\n': puts_(o, "\\n"); break;
        case '\r': puts_(o, "\\r"); break;
        case '\t': puts_(o, "\\t"); break;
        case '\b': puts_(o, "\\b"); break;
        case '\f': puts_(o, "\\f"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            puts_(o, esc);
        }
    }
    put(o, run, (size_t)(s - run));
    put(o, "\"", 1);
}

/* The shortest decimal digits of 'v' (finite, > 0) that read back as 'v': at most
 * 17 digits into 'd' (no dot, no trailing zeros), and the exponent of the first one
 * (v = 0.d * 10^(*pt)). Returns the number of digits. */
static int
shortest_digits(double v, char *d, int *pt)
{
    char b[40], *e;
    int n = 0;
    for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*e", p - 1, v);
        if (strtod(b, NULL) == v)
            break;
    }
    for (const char *c = b; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            d[n++] = *c;
    while (n > 1 && d[n - 1] == '0')
        n--;
    e = strchr(b, 'e');
    *pt = (int)strtol(e + 1, NULL, 10) + 1;
    return n;
}

/* 'v' (finite) as nlohmann::json's to_chars writes it: the shortest round-trip
 * digits; fixed notation when the decimal point falls within -4 < pt <= 15
 * (digits10), with ".0" when there is no fraction ("100.0", "0.0001", "-0.0"),
 * otherwise d[.ddd]e+XX with at least two exponent digits ("1e+16", "1.5e-05"). */
static void
fmt_double(double v, char *b, size_t size)
{
    char d[24];
    int n, pt, l = 0;
    if (signbit(v)) {
        b[l++] = '-';
        v = -v;
    }
    if (v == 0) {
        snprintf(b + l, size - (size_t)l, "0.0");
        return;
    }
    n = shortest_digits(v, d, &pt);
    if (n <= pt && pt <= 15)
        snprintf(b + l, size - (size_t)l, "%.*s%.*s.0", n, d, pt - n, "000000000000000");
    else if (0 < pt && pt <= 15)
        snprintf(b + l, size - (size_t)l, "%.*s.%.*s", pt, d, n - pt, d + pt);
    else if (-4 < pt && pt <= 0)
        snprintf(b + l, size - (size_t)l, "0.%.*s%.*s", -pt, "000", n, d);
    else
        snprintf(b + l, size - (size_t)l, "%c%s%.*se%c%02d", d[0], n > 1 ? "." : "", n - 1,
                 d + 1, pt - 1 < 0 ? '-' : '+', abs(pt - 1));
}

static void
emit(JOut *o, const cJSON *j, int pretty, int depth)
{
    char b[40];
    switch (j->type & 0xff) {
    case cJSON_NULL: puts_(o, "null"); break;
    case cJSON_False: puts_(o, "false"); break;
    case cJSON_True: puts_(o, "true"); break;
    case cJSON_Raw: puts_(o, j->valuestring); break;
    case cJSON_String: put_string(o, j->valuestring); break;
    case cJSON_Number:
        if (!isfinite(j->valuedouble))
            puts_(o, "null");
        else if (j->valuedouble == floor(j->valuedouble) && fabs(j->valuedouble) < 9e15)
            snprintf(b, sizeof b, "%.0f", j->valuedouble), puts_(o, b);
        else
            fmt_double(j->valuedouble, b, sizeof b), puts_(o, b);
        break;
    case cJSON_Array:
    case cJSON_Object: {
        int obj = (j->type & 0xff) == cJSON_Object;
        const cJSON *c = j->child;
        if (!c) {
            puts_(o, obj ? "{}" : "[]");
            break;
        }
        puts_(o, obj ? "{" : "[");
        for (; c; c = c->next) {
            if (pretty) {
                puts_(o, "\n");
                indent(o, depth + 1);
            }
            if (obj) {
                put_string(o, c->string ? c->string : "");
                puts_(o, pretty ? ": " : ":");
            }
            emit(o, c, pretty, depth + 1);
            if (c->next)
                puts_(o, ",");
        }
        if (pretty) {
            puts_(o, "\n");
            indent(o, depth);
        }
        puts_(o, obj ? "}" : "]");
        break;
    }
    default: puts_(o, "null");
    }
}

void
pn_jout_str(PnJOut *o, const char *s)
{
    put_string(o, s);
}

void
pn_jout_json(PnJOut *o, const cJSON *j)
{
    emit(o, j, 0, 0);
}

void
pn_jout_pretty(PnJOut *o, const cJSON *j, int depth)
{
    emit(o, j, 1, depth);
}

void
pn_jout_newline(PnJOut *o, int depth)
{
    put(o, "\n", 1);
    indent(o, depth);
}

/* unsigned decimal, written backwards into a small buffer */
void
pn_jout_uint(PnJOut *o, uint64_t v)
{
    char b[24], *p = b + sizeof b;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(o, p, (size_t)(b + sizeof b - p));
}

void
pn_jout_int(PnJOut *o, int64_t v)
{
    if (v < 0) {
        put(o, "-", 1);
        pn_jout_uint(o, (uint64_t)0 - (uint64_t)v);
    } else {
        pn_jout_uint(o, (uint64_t)v);
    }
}

void
pn_jout_double(PnJOut *o, double v)
{
    char b[40];
    if (!isfinite(v)) {
        put(o, "null", 4);
        return;
    }
    fmt_double(v, b, sizeof b);
    puts_(o, b);
}

/* ns / 1000 as pn_jout_double prints it: below 1e15 ns the decimal value (at most 15
 * significant digits) is the shortest text that reads back as that double, so the
 * digits come straight from the integer: "12.345", "1.5", "0.0". */
void
pn_jout_us(PnJOut *o, uint64_t ns)
{
    char b[32];
    uint64_t whole = ns / 1000, frac = ns % 1000;
    int n;
    if (ns >= 1000000000000000ull) {
        pn_jout_double(o, (double)ns / 1000.0);
        return;
    }
    pn_jout_uint(o, whole);
    if (!frac) {
        put(o, ".0", 2);
        return;
    }
    n = snprintf(b, sizeof b, ".%03u", (unsigned)frac);
    while (b[n - 1] == '0')
        n--;
    put(o, b, (size_t)n);
}

/* Writes 'j' as JSON text (pretty: the nlohmann dump(4) layout) to 'w'. */
void
pn_json_print(const cJSON *j, int pretty, PnWriteFn w, void *user)
{
    JOut *o = malloc(sizeof *o);
    if (!o)
        return;
    o->w = w;
    o->user = user;
    o->n = 0;
    emit(o, j, pretty, 0);
    flush(o);
    free(o);
}

void
pn_json_file_write(const char *s, size_t n, void *user)
{
    fwrite(s, 1, n, (FILE *)user);
}

/* ---- exact numbers ------------------------------------------------------------------ */

cJSON *
pn_json_int(int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    return cJSON_CreateRaw(b);
}

cJSON *
pn_json_uint(uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return cJSON_CreateRaw(b);
}

cJSON *
pn_json_double(double v)
{
    char b[40];
    if (!isfinite(v))
        return cJSON_CreateNull(); /* JSON has no NaN / Infinity */
    fmt_double(v, b, sizeof b);
    return cJSON_CreateRaw(b);
}
