// SPDX-License-Identifier: MIT
/* Unit tests of the CI gate's parsing and evaluation (analyzer/checks.c)
 * and of the suppressions' parsing and matching (analyzer/suppress.c):
 * suffixes, operators, malformed input, LeakSanitizer's wildcard and
 * anchors, skipped and refused lines. */
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "suppress.h"

#include "check.h"

static int warnings;

static void count_warning(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
    warnings++;
}

static void test_conditions(void)
{
    struct check c;
    char err[2048];
    CHECK_EQ(check_parse_condition("peak_heap_bytes<50M", &c, err, sizeof err), 0);
    CHECK_EQ(c.value, 50ull * 1024 * 1024);
    CHECK(c.op == CHECK_LT && c.figure == figures_find("peak_heap_bytes"));
    CHECK_EQ(check_parse_condition(" leaked_bytes == 0 ", &c, err, sizeof err), 0);
    CHECK(c.op == CHECK_EQ && c.value == 0);
    CHECK_EQ(check_parse_condition("allocations>=1.5K", &c, err, sizeof err), 0);
    CHECK(c.op == CHECK_GE && c.value == 1536);
    CHECK_EQ(check_parse_condition("allocations<=2G", &c, err, sizeof err), 0);
    CHECK(c.op == CHECK_LE && c.value == 2ll * 1024 * 1024 * 1024);
    CHECK_EQ(check_parse_condition("exit_value!=-1", &c, err, sizeof err), 0);
    CHECK(c.op == CHECK_NE && c.value == -1);
    CHECK_EQ(check_parse_condition("allocations>7", &c, err, sizeof err), 0);
    CHECK(c.op == CHECK_GT && c.value == 7);
    /* Malformed: a lone '=', no value, a bad suffix, a value too large
     * for 64 bits, an exponent, no name. */
    CHECK_EQ(check_parse_condition("allocations=7", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_condition("allocations==", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_condition("allocations==7X", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_condition("allocations==9999999999G", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_condition("allocations==1e3", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_condition("<5", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_condition("leaks==0", &c, err, sizeof err), CHECK_E_NAME);
    CHECK(strstr(err, "leaked_bytes") && strstr(err, "bad_records"));

    /* Evaluation on made-up figures. */
    struct figure now[FIGURES_COUNT], old[FIGURES_COUNT];
    for (size_t i = 0; i < FIGURES_COUNT; i++) {
        now[i] = (struct figure){figures_name(i), 0, 1};
        old[i] = now[i];
    }
    int a = figures_find("allocations");
    now[a].value = 1100;
    old[a].value = 1000;
    CHECK_EQ(check_parse_increase("allocations=10%", &c, err, sizeof err), 0);
    check_eval(&c, now, old);
    CHECK(c.pass && c.allowed == 100.0);
    now[a].value = 1101;
    check_eval(&c, now, old);
    CHECK(!c.pass);
    CHECK_EQ(check_parse_increase("allocations=101", &c, err, sizeof err), 0);
    check_eval(&c, now, old);
    CHECK(c.pass);
    old[a].value = 0; /* a percentage of 0 allows nothing */
    CHECK_EQ(check_parse_increase("allocations=50%", &c, err, sizeof err), 0);
    check_eval(&c, now, old);
    CHECK(!c.pass);
    now[a].value = 0;
    check_eval(&c, now, old);
    CHECK(c.pass);
    now[a].measured = 0; /* not measured: never passes */
    CHECK_EQ(check_parse_condition("allocations>=0", &c, err, sizeof err), 0);
    check_eval(&c, now, old);
    CHECK(!c.pass);
    CHECK_EQ(check_parse_increase("allocations", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_increase("allocations=-5", &c, err, sizeof err), CHECK_E_SYNTAX);
    CHECK_EQ(check_parse_increase("allocations=%", &c, err, sizeof err), CHECK_E_SYNTAX);
}

static void test_matching(void)
{
    CHECK(suppress_match("foo", "a_foo_b"));
    CHECK(!suppress_match("foo", "fo"));
    CHECK(!suppress_match("foo", NULL));
    CHECK(!suppress_match("foo", ""));
    CHECK(suppress_match("^foo", "foobar"));
    CHECK(!suppress_match("^foo", "xfoo"));
    CHECK(suppress_match("bar$", "foobar"));
    CHECK(!suppress_match("bar$", "barfoo"));
    CHECK(suppress_match("^foo$", "foo"));
    CHECK(!suppress_match("^foo$", "foofoo"));
    CHECK(suppress_match("a*c", "xabxc"));
    CHECK(!suppress_match("a*c", "xcxa"));
    CHECK(suppress_match("^a*c$", "abc"));
    CHECK(!suppress_match("^a*c$", "abcd"));
    CHECK(suppress_match("*", "x"));
    CHECK(suppress_match("^*$", "x"));
    CHECK(suppress_match("lib*.so", "/usr/lib/libz.so.1"));
    CHECK(suppress_match("ab*ab$", "abab"));
    CHECK(!suppress_match("ab*ab$", "ab"));
    CHECK(suppress_match("src/*/cache.c", "/home/x/src/net/cache.c"));
}

static void test_parsing(void)
{
    struct suppressions s = SUPPRESSIONS_INIT;
    char err[512];
    const char *text = "# comment\n\n  leak:  one  \r\nrace:x\nleak:two";
    warnings = 0;
    CHECK_EQ(suppress_parse(&s, text, strlen(text), SUPP_FILE, "f", 1, count_warning, NULL, err, sizeof err), 0);
    CHECK_EQ(s.n, 2);
    CHECK(s.n == 2 && strcmp(s.v[0].pattern, "one") == 0 && strcmp(s.v[0].source, "f:3") == 0);
    CHECK(s.n == 2 && strcmp(s.v[1].pattern, "two") == 0 && strcmp(s.v[1].source, "f:5") == 0);
    CHECK_EQ(warnings, 1);
    const char *bad = "leak:three\nno kind here\n";
    CHECK_EQ(suppress_parse(&s, bad, strlen(bad), SUPP_FILE, "g", 1, NULL, NULL, err, sizeof err), SUPPRESS_E_SYNTAX);
    CHECK_EQ(s.n, 2); /* nothing of a refused text is kept */
    CHECK(strstr(err, "'g' line 2") != NULL);
    CHECK_EQ(suppress_parse(&s, "leak:", 5, SUPP_FILE, "h", 1, NULL, NULL, err, sizeof err), SUPPRESS_E_SYNTAX);
    CHECK_EQ(suppress_parse(&s, "leak:a\0b", 8, SUPP_FILE, "i", 1, NULL, NULL, err, sizeof err), SUPPRESS_E_SYNTAX);
    suppress_add_builtin(&s);
    CHECK(s.n > 2 && s.v[2].origin == SUPP_BUILTIN && s.v[2].why != NULL);
    suppress_release(&s);
    CHECK_EQ(s.n, 0);
}

int main(void)
{
    test_conditions();
    test_matching();
    test_parsing();
    return check_summary("test_gate_parse");
}
