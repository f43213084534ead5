// SPDX-License-Identifier: MIT
/* The bundled example the README records: a small "server" that handles
 * requests with temporary buffers, keeps a cache that peaks, and leaks one
 * session object per 100 requests. */
#include <stdlib.h>
#include <string.h>

struct session {
    char name[48];
    struct session *next;
};

static struct session *leaked_sessions;

static __attribute__((noinline)) char *format_reply(int id)
{
    char *buf = malloc(256 + (size_t)(id % 64));
    memset(buf, 'x', 256);
    return buf;
}

static __attribute__((noinline)) void handle_request(int id, char **cache, int ncache)
{
    char *reply = format_reply(id);
    free(reply); /* a temporary allocation */
    int slot = id % ncache;
    free(cache[slot]);
    cache[slot] = malloc(4096);
    if (id % 100 == 0) {
        struct session *s = malloc(sizeof *s); /* never freed: a leak */
        memset(s->name, 0, sizeof s->name);
        s->next = leaked_sessions;
        leaked_sessions = s;
    }
}

int main(void)
{
    enum { NCACHE = 256, REQUESTS = 20000 };
    char **cache = calloc(NCACHE, sizeof *cache);
    for (int i = 0; i < REQUESTS; i++) {
        handle_request(i, cache, NCACHE);
    }
    for (int i = 0; i < NCACHE; i++) {
        free(cache[i]);
    }
    free(cache);
    return 0;
}
