// SPDX-License-Identifier: MIT
/* A treap of disjoint address ranges (see addrmap.h). A treap because its
 * split and merge make "replace whatever lies in [lo, hi)" a few lines,
 * and random priorities keep it balanced whatever order a hostile file
 * gives the ranges in. Each owner's ranges are chained so that unloading a
 * module touches only its own ranges. Nodes live in one array and are named
 * by index (0 = none), so growing it moves nothing that matters. */
#include "addrmap.h"

#include <stdlib.h>

#include "util.h"

struct addrmap_node {
    uint64_t lo, hi;
    uint32_t owner;
    uint32_t prio;
    uint32_t left, right;
    uint32_t onext, oprev; /* the owner's chain */
};

static uint32_t next_prio(struct addrmap *m)
{
    /* xorshift64: priorities need only be independent of the input. */
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return (uint32_t)(m->rng >> 32);
}

static uint32_t node_new(struct addrmap *m, uint64_t lo, uint64_t hi, uint32_t owner)
{
    uint32_t x;
    if (m->free_list) {
        x = m->free_list;
        m->free_list = m->pool[x].left;
    } else {
        if (m->npool == 0) {
            m->npool = 1; /* index 0 stays unused */
        }
        size_t cap = m->pool_cap;
        xgrow((void **)&m->pool, &cap, (size_t)m->npool + 1, sizeof *m->pool);
        m->pool_cap = (uint32_t)cap;
        x = m->npool++;
    }
    struct addrmap_node *n = &m->pool[x];
    n->lo = lo;
    n->hi = hi;
    n->owner = owner;
    n->prio = next_prio(m);
    n->left = n->right = 0;
    if (owner >= m->head_cap) {
        size_t cap = m->head_cap;
        size_t old = cap;
        xgrow((void **)&m->head, &cap, (size_t)owner + 1, sizeof *m->head);
        for (size_t i = old; i < cap; i++) {
            m->head[i] = 0;
        }
        m->head_cap = (uint32_t)cap;
    }
    n->oprev = 0;
    n->onext = m->head[owner];
    if (n->onext) {
        m->pool[n->onext].oprev = x;
    }
    m->head[owner] = x;
    return x;
}

static void node_free(struct addrmap *m, uint32_t x)
{
    struct addrmap_node *n = &m->pool[x];
    if (n->oprev) {
        m->pool[n->oprev].onext = n->onext;
    } else {
        m->head[n->owner] = n->onext;
    }
    if (n->onext) {
        m->pool[n->onext].oprev = n->oprev;
    }
    n->left = m->free_list;
    m->free_list = x;
}

/* Split t into ranges starting below `key` (*l) and the rest (*r). */
static void split(struct addrmap *m, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
        return;
    }
    struct addrmap_node *n = &m->pool[t];
    if (n->lo < key) {
        split(m, n->right, key, &n->right, r);
        *l = t;
    } else {
        split(m, n->left, key, l, &n->left);
        *r = t;
    }
}

/* Every range of l lies below every range of r. */
static uint32_t merge(struct addrmap *m, uint32_t l, uint32_t r)
{
    if (!l || !r) {
        return l ? l : r;
    }
    if (m->pool[l].prio > m->pool[r].prio) {
        m->pool[l].right = merge(m, m->pool[l].right, r);
        return l;
    }
    m->pool[r].left = merge(m, l, m->pool[r].left);
    return r;
}

static uint32_t last_of(const struct addrmap *m, uint32_t t)
{
    while (t && m->pool[t].right) {
        t = m->pool[t].right;
    }
    return t;
}

static void free_tree(struct addrmap *m, uint32_t t)
{
    /* Recursion depth is the treap's depth: O(log n) expected. */
    if (!t) {
        return;
    }
    uint32_t l = m->pool[t].left, r = m->pool[t].right;
    node_free(m, t);
    free_tree(m, l);
    free_tree(m, r);
}

void addrmap_insert(struct addrmap *m, uint64_t lo, uint64_t hi, uint32_t owner)
{
    if (lo >= hi) {
        return;
    }
    uint32_t a, b, mid, c;
    split(m, m->root, lo, &a, &b);
    uint32_t tail = 0;
    uint32_t x = last_of(m, a);
    if (x && m->pool[x].hi > lo) {
        /* The range before lo runs into [lo, hi): cut it at lo, keeping
         * what lies beyond hi as a range of its own. */
        if (m->pool[x].hi > hi) {
            uint64_t end = m->pool[x].hi;
            uint32_t own = m->pool[x].owner;
            tail = node_new(m, hi, end, own);
        }
        m->pool[x].hi = lo;
    }
    split(m, b, hi, &mid, &c);
    uint32_t y = last_of(m, mid);
    if (y && m->pool[y].hi > hi) {
        /* The last range inside runs on past hi: keep its end. */
        uint32_t rest, yy;
        split(m, mid, m->pool[y].lo, &rest, &yy);
        mid = rest;
        m->pool[y].lo = hi;
        c = merge(m, y, c);
    }
    free_tree(m, mid);
    uint32_t n = node_new(m, lo, hi, owner);
    m->root = merge(m, merge(m, a, n), merge(m, tail, c));
}

void addrmap_remove_owner(struct addrmap *m, uint32_t owner)
{
    while (owner < m->head_cap && m->head[owner]) {
        uint32_t x = m->head[owner];
        uint64_t lo = m->pool[x].lo;
        uint32_t a, b, one, c;
        split(m, m->root, lo, &a, &b);
        split(m, b, lo + 1, &one, &c); /* lo < hi, so lo + 1 does not wrap */
        m->root = merge(m, a, c);
        free_tree(m, one);
    }
}

int32_t addrmap_find(const struct addrmap *m, uint64_t a)
{
    uint32_t t = m->root, best = 0;
    while (t) {
        if (m->pool[t].lo <= a) {
            best = t;
            t = m->pool[t].right;
        } else {
            t = m->pool[t].left;
        }
    }
    if (best && a < m->pool[best].hi) {
        return (int32_t)m->pool[best].owner;
    }
    return -1;
}

void addrmap_release(struct addrmap *m)
{
    free(m->pool);
    free(m->head);
    struct addrmap empty = ADDRMAP_INIT;
    *m = empty;
}
