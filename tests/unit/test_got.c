// SPDX-License-Identifier: MIT
/* got.c on the test program itself, linked with full RELRO (-z now) so its
 * GOT is read-only once loaded: a slot is rewritten to a fake function,
 * calls go there, restoring puts the old value back, the page is read-only
 * again after each write, and a slot someone else rewrote meanwhile is left
 * alone. */
#define _GNU_SOURCE
#include "check.h"
#include "got.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pid_t fake_getppid(void)
{
    return 424242;
}

static pid_t other_getppid(void)
{
    return 515151;
}

static int find_main(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    got_module_from_phdr(data, info);
    return 1; /* the first object is the program */
}

struct pick {
    int asked;
    int defined_here;
    uintptr_t addr;
};

static void *to_fake(void *ctx, const struct got_module *m, const struct got_slot *slot)
{
    (void)m;
    struct pick *p = ctx;
    p->asked++;
    p->defined_here = slot->defined_here;
    p->addr = slot->addr;
    return (void *)fake_getppid;
}

/* The permissions /proc/self/maps gives the page holding addr ("r--p"). */
static int page_perms(uintptr_t addr, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && addr >= lo && addr < hi) {
            found = 1;
        }
    }
    if (f) {
        fclose(f);
    }
    return found;
}

int main(void)
{
    static const char *const names[] = {"not_a_symbol_here", "getppid"};
    struct got_module m;
    dl_iterate_phdr(find_main, &m);
    CHECK(m.dynamic != NULL);
    pid_t real_parent = getppid(); /* binds the slot, should it be lazy */

    struct pick p = {0, -1, 0};
    int n = got_patch(&m, names, 2, to_fake, &p);
    CHECK(n >= 1);
    CHECK(p.asked == n);
    CHECK_EQ(p.defined_here, 0);
    CHECK_EQ(getppid(), 424242);
    CHECK_EQ(got_count(), n);
    char perms[5] = "";
    CHECK(page_perms(p.addr, perms) && strcmp(perms, "r--p") == 0);

    /* Patching again keeps the first old value. */
    CHECK_EQ(got_patch(&m, names, 2, to_fake, &p), 0);
    CHECK_EQ(got_count(), n);

    CHECK_EQ(got_restore(&m), n);
    CHECK_EQ(got_count(), 0);
    CHECK_EQ(getppid(), real_parent);
    CHECK(page_perms(p.addr, perms) && strcmp(perms, "r--p") == 0);

    /* A slot rewritten by someone else since is theirs: not restored. */
    CHECK_EQ(got_patch(&m, names, 2, to_fake, &p), n);
    uintptr_t page = p.addr & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
    mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE);
    *(void **)p.addr = (void *)other_getppid;
    mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ);
    CHECK_EQ(got_restore(NULL), n - 1);
    CHECK_EQ(getppid(), 515151);
    CHECK_EQ(got_count(), 0);
    return check_summary("test_got");
}
