// SPDX-License-Identifier: MIT
/* Which traces are the start-up of preloaded libraries (startup.h). Each
 * node's answer depends only on its parent's and on the module of its own
 * frame, so it is worked out once per node, from the root down, and kept. */
#include "startup.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* What the frames from the root down to a node are. */
enum node_state {
    S_UNKNOWN = 0, /* not worked out yet */
    S_LOADER, /* every frame in ld.so */
    S_STARTUP, /* ld.so frames, then a preload-only module's */
    S_OTHER, /* anything else: the program's */
};

enum frame_class { C_OTHER, C_LOADER, C_PRELOAD };

/* An address range of a flagged module (ld.so or preload-only). There are
 * a handful: looking through them all is cheap, and done once per node. */
struct range {
    uint64_t lo, hi;
    uint32_t module;
    uint8_t cls; /* enum frame_class */
};

struct startup {
    struct range *ranges;
    size_t nranges, ranges_cap;
    size_t npreload; /* ranges of preload-only modules */
    uint8_t *state; /* per node id: enum node_state */
    size_t state_cap;
    uint32_t *path; /* nodes not worked out yet, innermost first */
    size_t path_cap;
    uint64_t calls, bytes;
};

struct startup *startup_new(void)
{
    return xcalloc(1, sizeof(struct startup));
}

void startup_free(struct startup *st)
{
    if (!st) {
        return;
    }
    free(st->ranges);
    free(st->state);
    free(st->path);
    free(st);
}

static void add_module(struct startup *st, const struct memfmt_record *r)
{
    uint8_t cls = (r->u.module.flags & MEMFMT_MODF_PRELOAD_ONLY) ? C_PRELOAD
                  : (r->u.module.flags & MEMFMT_MODF_LOADER)     ? C_LOADER
                                                                 : C_OTHER;
    if (cls == C_OTHER) {
        return;
    }
    for (uint32_t i = 0; i < r->u.module.nsegments; i++) {
        xgrow((void **)&st->ranges, &st->ranges_cap, st->nranges + 1, sizeof *st->ranges);
        struct range *g = &st->ranges[st->nranges++];
        g->lo = r->u.module.bias + r->u.module.segments[i].vaddr;
        g->hi = g->lo + r->u.module.segments[i].memsz;
        g->module = r->u.module.id;
        g->cls = cls;
        st->npreload += cls == C_PRELOAD;
    }
}

static void remove_module(struct startup *st, uint32_t id)
{
    size_t j = 0;
    for (size_t i = 0; i < st->nranges; i++) {
        if (st->ranges[i].module != id) {
            st->ranges[j++] = st->ranges[i];
        } else {
            st->npreload -= st->ranges[i].cls == C_PRELOAD;
        }
    }
    if (j != st->nranges && st->state) {
        /* Another module may be mapped at these addresses later: the
         * nodes' answers no longer hold. */
        memset(st->state, 0, st->state_cap);
    }
    st->nranges = j;
}

void startup_module(struct startup *st, const struct memfmt_record *r)
{
    if (r->tag == MEMFMT_REC_MODULE) {
        add_module(st, r);
    } else if (r->tag == MEMFMT_REC_UNMODULE) {
        remove_module(st, r->u.unmodule.id);
    }
}

static enum frame_class frame_class(const struct startup *st, uint64_t ip)
{
    if (ip == 0) {
        return C_OTHER; /* the gap of a truncated stack */
    }
    uint64_t call = ip - 1; /* a return address: the call is before it */
    for (size_t i = 0; i < st->nranges; i++) {
        if (call >= st->ranges[i].lo && call < st->ranges[i].hi) {
            return (enum frame_class)st->ranges[i].cls;
        }
    }
    return C_OTHER;
}

/* The state of a node whose parent's state is `s` (0 for the root). At
 * least one ld.so frame must come first: a preloaded library's code that
 * runs later (called by the program, or on a thread it started) is not
 * its initialization. */
static enum node_state step(enum node_state s, enum frame_class c)
{
    switch (s) {
    case S_UNKNOWN: return c == C_LOADER ? S_LOADER : S_OTHER;
    case S_LOADER: return c == C_LOADER ? S_LOADER : c == C_PRELOAD ? S_STARTUP : S_OTHER;
    default: return s;
    }
}

int startup_marked(struct startup *st, uint32_t trace, const uint64_t *ip, const uint32_t *parent, size_t nnodes)
{
    if (st->npreload == 0 || trace == 0 || trace >= nnodes) {
        return 0;
    }
    if (st->state_cap < nnodes) {
        xgrow((void **)&st->state, &st->state_cap, nnodes, 1);
    }
    /* Climb to the nearest node already worked out (or the root), then
     * work out the path back down. */
    size_t n = 0;
    uint32_t id = trace;
    while (id != 0 && st->state[id] == S_UNKNOWN) {
        xgrow((void **)&st->path, &st->path_cap, n + 1, sizeof *st->path);
        st->path[n++] = id;
        id = parent[id];
    }
    enum node_state s = id ? (enum node_state)st->state[id] : S_UNKNOWN;
    while (n > 0) {
        id = st->path[--n];
        s = step(s, frame_class(st, ip[id]));
        st->state[id] = (uint8_t)s;
    }
    return st->state[trace] == S_STARTUP;
}

void startup_count(struct startup *st, uint64_t size)
{
    st->calls++;
    st->bytes += size;
}

uint64_t startup_calls(const struct startup *st)
{
    return st->calls;
}

uint64_t startup_bytes(const struct startup *st)
{
    return st->bytes;
}
