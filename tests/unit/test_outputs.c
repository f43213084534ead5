// SPDX-License-Identifier: MIT
/* Unit tests of memprint's output modules: shortened C++ names (names.c)
 * and the SVG flame graph (svg.c): frame placement and the escaping of
 * hostile names, which must never inject markup or script. */
#define _GNU_SOURCE
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "check.h"
#include "svg.h"

static int shortens(const char *in, const char *want)
{
    char *s = names_shorten(in);
    int ok = strcmp(s, want) == 0;
    if (!ok) {
        fprintf(stderr, "names_shorten(\"%s\") = \"%s\", expected \"%s\"\n", in, s, want);
    }
    free(s);
    return ok;
}

static void test_names(void)
{
    CHECK(
        shortens("std::vector<std::pair<int, long>, std::allocator<std::pair<int, long> > >::push_back(std::pair<int, "
                 "long>&&)",
                 "std::vector<\xe2\x80\xa6>::push_back(\xe2\x80\xa6)"));
    CHECK(shortens("std::vector<int>::push_back(int)", "std::vector<int>::push_back(int)"));
    CHECK(shortens("main", "main"));
    CHECK(shortens("operator<<(std::ostream&, char const*)", "operator<<(\xe2\x80\xa6)"));
    CHECK(shortens("Foo::operator()(int)", "Foo::operator()(int)"));
    CHECK(shortens("bool operator< <Key>(Key const&, Key const&)", "bool operator< <Key>(\xe2\x80\xa6)"));
    CHECK(shortens("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper(int)"));
    CHECK(shortens("broken<abc, def, ghi, jkl", "broken<abc, def, ghi, jkl"));
    CHECK(shortens("", ""));
}

static char *render(struct svg *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(svg_write(g, f), 0);
    fclose(f);
    return buf;
}

static void test_svg(void)
{
    struct svg_options o = {"title <&> \"x\"", NULL, "bytes", 0, 0};
    struct svg *g = svg_new(&o);
    svg_frame(g, 0, "all", 1000, 0);
    svg_frame(g, 1, "main", 600, 0);
    svg_frame(g, 2, "</text><script>alert(1)</script>\x01\xff]]>", 600, 0);
    svg_frame(g, 1, "other", 400, 0);
    char *s = render(g);
    CHECK(strstr(s, "<script>alert") == NULL);
    CHECK(strstr(s, "&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;??]]&gt;") != NULL);
    CHECK(strstr(s, "title &lt;&amp;&gt; &quot;x&quot;") != NULL);
    /* The one script is ours; CDATA never closes early. */
    const char *cdata = strstr(s, "]]>");
    CHECK(cdata && strstr(cdata + 3, "]]>") == NULL);
    /* "other" starts where "main" ends: cost offset 600, pixel 10 + 600 / 1000 * 1180. */
    CHECK(strstr(s, "data-d=\"1\" data-x=\"600\" data-v=\"400\"") != NULL);
    CHECK(strstr(s, "<rect x=\"718.00\"") != NULL);
    free(s);
    svg_free(g);

    /* A hole in the depths drops the subtree rather than misplacing it. */
    g = svg_new(&o);
    svg_frame(g, 0, "all", 10, 0);
    svg_frame(g, 2, "orphan", 5, 0);
    svg_frame(g, 3, "orphan-child", 5, 0);
    svg_frame(g, 1, "kid", 10, 0);
    s = render(g);
    CHECK(strstr(s, "orphan") == NULL);
    CHECK(strstr(s, "kid") != NULL);
    free(s);
    svg_free(g);
}

static void test_utf8(void)
{
    CHECK_EQ(names_utf8_len((const unsigned char *)"a"), 1);
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xc3\xa9"), 2); /* é */
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xe2\x80\xa6"), 3); /* … */
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xc0\xaf"), 0); /* overlong */
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xed\xa0\x80"), 0); /* surrogate */
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xc3"), 0); /* cut short */
    CHECK_EQ(names_utf8_len((const unsigned char *)"\xff"), 0);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    charts_json_str("r\xc3\xa9sum\xc3\xa9 \"q\" \\ \x01\xff\xc3", f);
    fclose(f);
    CHECK(strcmp(buf, "\"r\xc3\xa9sum\xc3\xa9 \\\"q\\\" \\\\ \\u0001\\u00ff\\u00c3\"") == 0);
    free(buf);

    struct svg_options o = {"t", NULL, "bytes", 0, 0};
    struct svg *g = svg_new(&o);
    svg_frame(g, 0, "all", 10, 0);
    svg_frame(g, 1, "caf\xc3\xa9\xff", 10, 0);
    buf = render(g);
    CHECK(strstr(buf, "caf\xc3\xa9?") != NULL);
    free(buf);
    svg_free(g);
}

int main(void)
{
    test_names();
    test_utf8();
    test_svg();
    return check_summary("test_outputs");
}
