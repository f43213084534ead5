// SPDX-License-Identifier: MIT
/* Unit tests of analyzer/addrmap.c against a plain model: the owner of an
 * address is the newest range added over it that is still there. */
#include "addrmap.h"

#include <stdlib.h>

#include "check.h"

#define SPACE 4096
#define OWNERS 64

/* The model: owner per address of a small space, -1 = none. */
static int model[SPACE];

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(void)
{
    struct addrmap m = ADDRMAP_INIT;
    CHECK(addrmap_find(&m, 5) == -1);
    addrmap_insert(&m, 100, 200, 1);
    addrmap_insert(&m, 150, 160, 2); /* splits 1 in two */
    CHECK(addrmap_find(&m, 99) == -1);
    CHECK_EQ(addrmap_find(&m, 100), 1);
    CHECK_EQ(addrmap_find(&m, 149), 1);
    CHECK_EQ(addrmap_find(&m, 150), 2);
    CHECK_EQ(addrmap_find(&m, 159), 2);
    CHECK_EQ(addrmap_find(&m, 160), 1);
    CHECK_EQ(addrmap_find(&m, 199), 1);
    CHECK(addrmap_find(&m, 200) == -1);
    addrmap_remove_owner(&m, 1);
    CHECK(addrmap_find(&m, 120) == -1);
    CHECK_EQ(addrmap_find(&m, 155), 2);
    addrmap_insert(&m, 0, UINT64_MAX, 3);
    CHECK_EQ(addrmap_find(&m, 155), 3);
    CHECK_EQ(addrmap_find(&m, UINT64_MAX - 1), 3);
    addrmap_insert(&m, 7, 7, 4); /* empty: ignored */
    CHECK_EQ(addrmap_find(&m, 7), 3);
    addrmap_release(&m);

    /* Random inserts and removals against the model. */
    for (int i = 0; i < SPACE; i++) {
        model[i] = -1;
    }
    uint64_t s = 0x12345678;
    int mismatches = 0;
    for (int step = 0; step < 20000; step++) {
        uint32_t owner = (uint32_t)(rnd(&s) % OWNERS);
        if (rnd(&s) % 4 == 0) {
            addrmap_remove_owner(&m, owner);
            for (int i = 0; i < SPACE; i++) {
                if (model[i] == (int)owner) {
                    model[i] = -1;
                }
            }
        } else {
            uint64_t lo = rnd(&s) % SPACE;
            uint64_t len = rnd(&s) % 200;
            uint64_t hi = lo + len > SPACE ? SPACE : lo + len;
            addrmap_insert(&m, lo, hi, owner);
            for (uint64_t i = lo; i < hi; i++) {
                model[i] = (int)owner;
            }
        }
        if (step % 97 == 0) {
            for (int i = 0; i < SPACE; i++) {
                mismatches += addrmap_find(&m, (uint64_t)i) != model[i];
            }
        }
    }
    CHECK_EQ(mismatches, 0);
    /* Memory: at most two nodes per range ever added, and freed nodes are
     * reused: the pool stays near the ranges alive. */
    CHECK(m.npool < 2 * 20000);
    addrmap_release(&m);
    return check_summary("test_addrmap");
}
