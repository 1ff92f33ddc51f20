/*
 * pn_msgpack.c — MessagePack encoding of a cJSON value (the hatchet_msgpack format:
 * the .hatchet structure, reference/proton.md §3.1, encoded as MessagePack).
 *
 * Numbers arrive as raw items holding exact text (pn_json_int / _uint / _double):
 * text with '.', 'e' or 'E' is a float, anything else an integer. Integers use the
 * smallest MessagePack encoding (positive ones the unsigned formats, negative ones the
 * signed formats), floats float32 when that is exact and float64 otherwise, as the
 * nlohmann encoder upstream uses; strings, arrays and maps the smallest header that
 * fits. Object keys keep their order (the .hatchet writer sorts them).
 */
#include "pn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct MOut {
    PnWriteFn w;
    void *user;
    size_t n;
    unsigned char b[4096];
} MOut;

static void
mflush(MOut *o)
{
    if (o->n)
        o->w((const char *)o->b, o->n, o->user);
    o->n = 0;
}

static void
mput(MOut *o, const void *p, size_t n)
{
    const unsigned char *s = p;
    while (n) {
        size_t k = sizeof o->b - o->n;
        if (k == 0) {
            mflush(o);
            continue;
        }
        if (k > n)
            k = n;
        memcpy(o->b + o->n, s, k);
        o->n += k;
        s += k;
        n -= k;
    }
}

/* tag byte followed by the low 'bytes' bytes of v, big-endian */
static void
mtag(MOut *o, unsigned char tag, uint64_t v, int bytes)
{
    unsigned char b[9];
    b[0] = tag;
    for (int i = 0; i < bytes; i++)
        b[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    mput(o, b, (size_t)bytes + 1);
}

static void
muint(MOut *o, uint64_t v)
{
    if (v < 128)
        mtag(o, (unsigned char)v, 0, 0);
    else if (v <= 0xff)
        mtag(o, 0xcc, v, 1);
    else if (v <= 0xffff)
        mtag(o, 0xcd, v, 2);
    else if (v <= 0xffffffffu)
        mtag(o, 0xce, v, 4);
    else
        mtag(o, 0xcf, v, 8);
}

static void
mint(MOut *o, int64_t v)
{
    if (v >= 0)
        muint(o, (uint64_t)v);
    else if (v >= -32)
        mtag(o, (unsigned char)(int8_t)v, 0, 0);
    else if (v >= INT8_MIN)
        mtag(o, 0xd0, (uint64_t)v, 1);
    else if (v >= INT16_MIN)
        mtag(o, 0xd1, (uint64_t)v, 2);
    else if (v >= INT32_MIN)
        mtag(o, 0xd2, (uint64_t)v, 4);
    else
        mtag(o, 0xd3, (uint64_t)v, 8);
}

static void
mdouble(MOut *o, double d)
{
    float f = (float)d;
    if ((double)f == d) {
        uint32_t u;
        memcpy(&u, &f, 4);
        mtag(o, 0xca, u, 4);
    } else {
        uint64_t u;
        memcpy(&u, &d, 8);
        mtag(o, 0xcb, u, 8);
    }
}

/* header of a string / array / map of n elements */
static void
mhead(MOut *o, int kind, uint64_t n)
{
    static const unsigned char fix[3] = { 0xa0, 0x90, 0x80 }, fixmax[3] = { 32, 16, 16 };
    static const unsigned char t8[3] = { 0xd9, 0, 0 }, t16[3] = { 0xda, 0xdc, 0xde }, t32[3] = { 0xdb, 0xdd, 0xdf };
    if (n < fixmax[kind])
        mtag(o, (unsigned char)(fix[kind] | n), 0, 0);
    else if (kind == 0 && n <= 0xff)
        mtag(o, t8[kind], n, 1);
    else if (n <= 0xffff)
        mtag(o, t16[kind], n, 2);
    else
        mtag(o, t32[kind], n, 4);
}

static void
mstr(MOut *o, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    mhead(o, 0, n);
    mput(o, s ? s : "", n);
}

static void
mraw(MOut *o, const char *s)
{
    char *end;
    if (!s || !*s) {
        mtag(o, 0xc0, 0, 0);
    } else if (strpbrk(s, ".eEnN")) {
        mdouble(o, strtod(s, NULL));
    } else if (s[0] == '-') {
        mint(o, strtoll(s, &end, 10));
    } else {
        muint(o, strtoull(s, &end, 10));
    }
}

static int
emit(MOut *o, const cJSON *j, int depth)
{
    const cJSON *c;
    uint64_t n = 0;
    if (depth > 10000)
        return -EINVAL;
    switch (j->type & 0xff) {
    case cJSON_NULL: mtag(o, 0xc0, 0, 0); break;
    case cJSON_False: mtag(o, 0xc2, 0, 0); break;
    case cJSON_True: mtag(o, 0xc3, 0, 0); break;
    case cJSON_Raw: mraw(o, j->valuestring); break;
    case cJSON_String: mstr(o, j->valuestring); break;
    case cJSON_Number:
        if (j->valuedouble == (double)(int64_t)j->valuedouble)
            mint(o, (int64_t)j->valuedouble);
        else
            mdouble(o, j->valuedouble);
        break;
    case cJSON_Array:
    case cJSON_Object: {
        int obj = (j->type & 0xff) == cJSON_Object;
        for (c = j->child; c; c = c->next)
            n++;
        mhead(o, obj ? 2 : 1, n);
        for (c = j->child; c; c = c->next) {
            if (obj)
                mstr(o, c->string);
            if (emit(o, c, depth + 1) < 0)
                return -EINVAL;
        }
        break;
    }
    default: mtag(o, 0xc0, 0, 0);
    }
    return 0;
}

/* Writes 'j' as MessagePack to 'w'. 0, -ENOMEM or -EINVAL (nesting too deep). */
int
pn_msgpack_write(const cJSON *j, PnWriteFn w, void *user)
{
    MOut *o = malloc(sizeof *o);
    int rc;
    if (!o)
        return -ENOMEM;
    o->w = w;
    o->user = user;
    o->n = 0;
    rc = emit(o, j, 0);
    mflush(o);
    free(o);
    return rc;
}
