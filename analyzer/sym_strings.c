// SPDX-License-Identifier: MIT
/* The symbolizer's hashing and string interning, which symbolize.c and
 * sym_names.c both use: a file of its own so that the symbolizer's calls go
 * one way (symbolize.c -> sym_names.c -> sym_strings.c). It calls no other
 * file of the symbolizer. */
#include "symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

uint64_t sym_mix64(uint64_t x)
{
    /* A 64-bit finalizer: ips are aligned and clustered, so spread every input bit. */
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_string(const char *str)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void grow_strings(struct symbolizer *s)
{
    size_t old_size = s->strings ? s->string_mask + 1 : 0;
    size_t new_size = old_size ? old_size * 2 : 256;
    char **table = xcalloc(new_size, sizeof(*table));
    for (size_t i = 0; i < old_size; i++) {
        char *str = s->strings[i];
        if (!str) {
            continue;
        }
        size_t j = hash_string(str) & (new_size - 1);
        while (table[j]) {
            j = (j + 1) & (new_size - 1);
        }
        table[j] = str;
    }
    free(s->strings);
    s->strings = table;
    s->string_mask = new_size - 1;
}

const char *sym_intern(struct symbolizer *s, const char *str)
{
    if (!str) {
        return NULL;
    }
    if (!s->strings || (s->strings_used + 1) * 2 > s->string_mask + 1) {
        grow_strings(s);
    }
    size_t i = hash_string(str) & s->string_mask;
    while (s->strings[i]) {
        if (strcmp(s->strings[i], str) == 0) {
            return s->strings[i];
        }
        i = (i + 1) & s->string_mask;
    }
    s->strings[i] = xstrdup(str);
    s->strings_used++;
    return s->strings[i];
}

void sym_strings_release(struct symbolizer *s)
{
    if (s->strings) {
        for (size_t i = 0; i <= s->string_mask; i++) {
            free(s->strings[i]);
        }
    }
    free(s->strings);
    s->strings = NULL;
}
