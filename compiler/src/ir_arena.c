/*
 * ir_arena.c — bump allocator owning every object of one compile.
 *
 * Chunks grow geometrically; nothing is freed until ir_arena_fini(). Allocation
 * failure is fatal (like Redis' zmalloc): callers carry no OOM branches.
 */
#include "ir_int.h"

#include <stdlib.h>
#include <string.h>

struct IrArenaChunk {
    IrArenaChunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

static IrArenaChunk *
chunk_new(size_t min)
{
    size_t size = 64 * 1024;
    while (size < min)
        size *= 2;
    IrArenaChunk *c = malloc(sizeof(IrArenaChunk) + size);
    if (!c)
        ir_die("out of memory (%zu bytes)", size);
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

void *
ir_arena_alloc(IrArena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    IrArenaChunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t want = c ? c->size * 2 : 0;
        c = chunk_new(n > want ? n : want);
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used_total += n;
    memset(p, 0, n);
    return p;
}

void *
ir_arena_grow(IrArena *a, void *p, size_t old, size_t n)
{
    void *q = ir_arena_alloc(a, n);
    if (p && old)
        memcpy(q, p, old < n ? old : n);
    return q;
}

char *
ir_arena_strdup(IrArena *a, const char *s, size_t n)
{
    char *d = ir_arena_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void
ir_arena_fini(IrArena *a)
{
    IrArenaChunk *c = a->head;
    while (c) {
        IrArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_total = 0;
}
