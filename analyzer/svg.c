// SPDX-License-Identifier: MIT
/* Interactive SVG flame graphs (svg.h). Frames are kept as given (name,
 * depth, cost, and the cost offset of their left edge), drawn at write
 * time; the script only moves what is drawn, and its search also counts
 * the frames too narrow to draw, listed apart (put_narrow()). Names reach the file only as
 * escaped XML text, never inside the script or an attribute unescaped. */
#include "svg.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "idmap.h"
#include "names.h"
#include "util.h"

#define WIDTH 1200.0
#define PAD 10.0
#define FRAME_H 16
#define TOP 64
#define BOTTOM 34
#define CHAR_W 7.0
#define MIN_PX 0.1

/* The output's bounds, whatever the recording holds (a hostile chain of
 * 11,000 frames, each a site, made a 1.77 GB SVG with --reverse): stacks
 * are cut after SVG_MAX_DEPTH levels, as flame-graph tools cut deep
 * stacks, and no more than SVG_MAX_FRAMES frames are kept (the widest
 * come first: children are walked in the tree's sort). The file then
 * says what was cut. At most some 60 MB of SVG. */
#define SVG_MAX_DEPTH 256
#define SVG_MAX_FRAMES 200000
/* Frames too narrow to draw are kept too, for the search's matched share
 * (the folded stacks' figure, not only what is drawn): at most this many,
 * as numbers in one attribute and their names once each, some 30 bytes a
 * frame. Past it, narrow subtrees are not walked and the note says the
 * share may be short. */
#define SVG_MAX_NARROW 50000

struct svg_node {
    char *name; /* valid UTF-8, no control characters */
    uint32_t depth;
    uint64_t x; /* cost offset of the left edge */
    uint64_t cost, base;
};

struct svg {
    struct svg_options o;
    struct svg_node *nodes;
    size_t n, cap;
    uint64_t *next; /* per depth: the cost offset where the next frame starts */
    size_t next_cap;
    uint32_t max_depth;
    uint32_t skip_below; /* UINT32_MAX, or frames deeper than this are dropped */
    size_t cut_deep; /* frames deeper than SVG_MAX_DEPTH, not kept */
    size_t cut_many; /* frames past SVG_MAX_FRAMES, not kept */
    size_t narrow; /* frames kept that are too narrow to draw */
    size_t cut_narrow; /* narrow frames past SVG_MAX_NARROW, not kept */
};

/* Whether a frame of `cost` is too narrow to draw, once the root is in. */
static int is_narrow(const struct svg *g, uint64_t cost)
{
    uint64_t total = g->n ? g->nodes[0].cost : 0;
    return total && (double)cost / (double)total * (WIDTH - 2 * PAD) < MIN_PX;
}

struct svg *svg_new(const struct svg_options *o)
{
    struct svg *g = xcalloc(1, sizeof *g);
    g->o = *o;
    g->skip_below = UINT32_MAX;
    return g;
}

void svg_free(struct svg *g)
{
    if (!g) {
        return;
    }
    for (size_t i = 0; i < g->n; i++) {
        free(g->nodes[i].name);
    }
    free(g->nodes);
    free(g->next);
    free(g);
}

/* A copy that is valid UTF-8 with no control characters ('?' instead). */
static char *clean(const char *s)
{
    size_t len = strlen(s);
    char *d = xmalloc(len + 1);
    size_t j = 0;
    for (size_t i = 0; i < len;) {
        const unsigned char *p = (const unsigned char *)s + i;
        size_t n = names_utf8_len(p);
        if (n == 0 || (n == 1 && (p[0] < 0x20 || p[0] == 0x7f))) {
            d[j++] = '?';
            i++;
            continue;
        }
        memcpy(d + j, p, n);
        j += n;
        i += n;
    }
    d[j] = 0;
    return d;
}

void svg_frame(struct svg *g, uint32_t depth, const char *name, uint64_t cost, uint64_t base)
{
    if (depth > g->skip_below) {
        return;
    }
    g->skip_below = UINT32_MAX;
    int narrow = depth > 0 && is_narrow(g, cost);
    if (narrow && depth <= SVG_MAX_DEPTH && g->narrow >= SVG_MAX_NARROW) {
        g->cut_narrow++;
        g->skip_below = depth - 1;
        return;
    }
    if (depth > SVG_MAX_DEPTH || (!narrow && g->n - g->narrow >= SVG_MAX_FRAMES)) {
        *(depth > SVG_MAX_DEPTH ? &g->cut_deep : &g->cut_many) += 1;
        g->skip_below = depth - 1; /* and its subtree */
        return;
    }
    if (g->n > 0 && depth > g->nodes[g->n - 1].depth + 1) {
        g->skip_below = depth - 1; /* a hole in the depths: not a tree, drop the subtree */
        return;
    }
    xgrow((void **)&g->next, &g->next_cap, (size_t)depth + 2, sizeof *g->next);
    if (g->n == 0 || depth == 0) {
        g->next[0] = 0;
    }
    uint64_t x = g->next[depth];
    g->next[depth] = x + cost;
    g->next[depth + 1] = x;
    xgrow((void **)&g->nodes, &g->cap, g->n + 1, sizeof *g->nodes);
    struct svg_node *nd = &g->nodes[g->n++];
    nd->name = clean(name);
    nd->depth = depth;
    nd->x = x;
    nd->cost = cost;
    nd->base = base;
    g->narrow += (size_t)narrow;
    if (!narrow && depth > g->max_depth) {
        g->max_depth = depth;
    }
}

/* ---- writing ---- */

static void put_text(const char *s, size_t max_bytes, FILE *f)
{
    /* Names come from the recording: control characters (which XML 1.0
     * cannot hold at all, not even as references) and invalid UTF-8 become
     * \xHH through the one escaping of every tool, then the XML specials. */
    size_t n = strnlen(s, max_bytes);
    char *raw = xmalloc(n + 1);
    memcpy(raw, s, n);
    raw[n] = 0;
    char *e = esc_text(raw);
    for (size_t i = 0; e[i]; i++) {
        switch (e[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(e[i], f); break;
        }
    }
    free(e);
    free(raw);
}

/* Bytes of the first `chars` characters of a valid UTF-8 string. */
static size_t prefix_bytes(const char *s, size_t chars)
{
    size_t i = 0;
    while (s[i] && chars > 0) {
        i++;
        while ((s[i] & 0xc0) == 0x80) {
            i++;
        }
        chars--;
    }
    return i;
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++) {
        n += (*s & 0xc0) != 0x80;
    }
    return n;
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

static void fill_of(const struct svg *g, const struct svg_node *nd, uint64_t max_delta, char *buf, size_t cap)
{
    if (!g->o.diff) {
        uint32_t h = hash_name(nd->name);
        snprintf(buf, cap, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 180 + 40, (h >> 16) % 55);
        return;
    }
    uint64_t d = nd->cost > nd->base ? nd->cost - nd->base : nd->base - nd->cost;
    unsigned k = max_delta ? (unsigned)(40 + 180 * (double)d / (double)max_delta) : 0;
    if (d == 0) {
        snprintf(buf, cap, "rgb(224,224,224)");
    } else if (nd->cost > nd->base) {
        snprintf(buf, cap, "rgb(255,%u,%u)", 255 - k, 255 - k);
    } else {
        snprintf(buf, cap, "rgb(%u,%u,255)", 255 - k, 255 - k);
    }
}

static double pct(uint64_t v, uint64_t total)
{
    return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* The script: zoom (click), reset, search (prompt) with the matched share,
 * and the details line. It reads names from the frames' text, never from
 * strings written into it. Text is read and written through textContent:
 * a frame too narrow for its name has an empty <text>, which has no child
 * node (setting firstChild.nodeValue there threw, and ended every zoom and
 * reset half-way, leaving frames hidden). */
static const char script[] =
    "var svgns='http://www.w3.org/2000/svg';\n"
    "var W=WIDTH_PX,PADX=PAD_PX,CW=CHAR_PX,frames=[],every=[],total=0,unit='',zoomed=null;\n"
    "function init(){var "
    "g=document.getElementsByClassName('f');unit=document.documentElement.getAttribute('data-unit');\n"
    " for(var i=0;i<g.length;i++){var e=g[i];var r=e.getElementsByTagName('rect')[0];\n"
    "  "
    "frames.push({g:e,r:r,t:e.getElementsByTagName('text')[0],x:+e.getAttribute('data-x'),v:+e.getAttribute('data-v'),"
    "\n"
    "   "
    "d:+e.getAttribute('data-d'),name:e.getAttribute('data-n')!==null?e.getAttribute('data-n'):e.getElementsByTagName('"
    "title')[0].textContent.split('\\n')[0],fill:r.getAttribute('fill')});\n"
    "  e.addEventListener('click',(function(f){return function(){zoom(f);};})(frames[frames.length-1]));\n"
    "  e.addEventListener('mouseover',(function(f){return "
    "function(){details(f.g.getElementsByTagName('title')[0].textContent.replace(/\\n/g,' | "
    "'));};})(frames[frames.length-1]));\n"
    "  e.addEventListener('mouseout',function(){details('');});}\n"
    " if(frames.length){total=frames[0].v;}document.getElementById('reset').addEventListener('click',function(){zoom("
    "frames[0]);});\n"
    " document.getElementById('search').addEventListener('click',search);\n"
    " every=frames.slice();var u=document.getElementById('undrawn');\n"
    " if(u){var nm=u.getElementsByTagName('text'),fs=u.getAttribute('data-f').split(';');\n"
    "  for(var k=0;k<fs.length;k++){var p=fs[k].split(',');if(p.length!==4){continue;}\n"
    "   every.push({x:+p[0],v:+p[1],d:+p[2],name:nm[+p[3]].textContent,r:null});}\n"
    "  every.sort(function(a,b){return a.x-b.x||a.d-b.d;});}}\n"
    "function details(s){document.getElementById('details').textContent=s||' ';}\n"
    "function fit(f,w){var n=Math.floor((w-6)/CW);var s=f.name;if(n<2){s='';}else "
    "if(s.length>n){s=s.substring(0,n-1)+'\\u2026';}\n"
    " f.t.textContent=s;}\n"
    "function zoom(z){if(!z){return;}zoomed=z;for(var i=0;i<frames.length;i++){var f=frames[i];\n"
    "  var inside=f.x>=z.x&&f.x+f.v<=z.x+z.v&&f.d>=z.d;var above=f.d<z.d&&f.x<=z.x&&f.x+f.v>=z.x+z.v;\n"
    "  if(!inside&&!above){f.g.style.display='none';continue;}f.g.style.display='';\n"
    "  var x=above?0:(f.x-z.x)/z.v*W;var w=above?W:f.v/z.v*W;if(!above&&w<0.1){f.g.style.display='none';continue;}\n"
    "  "
    "f.r.setAttribute('x',(PADX+x).toFixed(2));f.r.setAttribute('width',w.toFixed(2));f.t.setAttribute('x',(PADX+x+3)."
    "toFixed(2));\n"
    "  f.g.style.opacity=above&&f!==z?'0.6':'1';fit(f,w);}}\n"
    "function search(){var re=prompt('Search (regular expression); empty to clear','');if(re===null){return;}\n"
    " var rx=null;if(re!==''){try{rx=new RegExp(re);}catch(e){alert('bad expression: '+e.message);return;}}\n"
    " var sum=0,end=-1;for(var i=0;i<every.length;i++){var f=every[i];var hit=rx!==null&&f.d>0&&rx.test(f.name);\n"
    "  if(f.r){f.r.setAttribute('fill',hit?'rgb(230,0,230)':f.fill);}if(hit&&f.x>=end){sum+=f.v;end=f.x+f.v;}}\n"
    " var m=document.getElementById('matched');\n"
    " m.textContent=rx===null?' ':'Matched: '+(total?(100*sum/total).toFixed(2):'0.00')+'% ('+sum+' '+unit+')';}\n"
    "window.addEventListener('load',init);\n";

static void put_script(FILE *f)
{
    /* The constants are substituted here so that they are the C ones. */
    const char *s = script;
    const char *keys[3] = {"WIDTH_PX", "PAD_PX", "CHAR_PX"};
    double vals[3] = {WIDTH - 2 * PAD, PAD, CHAR_W};
    while (*s) {
        int done = 0;
        for (int k = 0; k < 3; k++) {
            size_t len = strlen(keys[k]);
            if (strncmp(s, keys[k], len) == 0) {
                fprintf(f, "%g", vals[k]);
                s += len;
                done = 1;
                break;
            }
        }
        if (!done) {
            fputc(*s++, f);
        }
    }
}

struct names_ctx {
    const struct svg *g;
    const uint32_t *first; /* per distinct name: a node that has it */
    const char *key;
};

static uint64_t name_hash(const void *ctx, uint32_t i)
{
    const struct names_ctx *c = ctx;
    return idmap_hash_str(c->g->nodes[c->first[i]].name);
}

static int name_same(const void *ctx, uint32_t i)
{
    const struct names_ctx *c = ctx;
    return strcmp(c->g->nodes[c->first[i]].name, c->key) == 0;
}

/* The frames too narrow to draw, for the search: one hidden element whose
 * data-f holds "x,v,d,n;" per frame in the order of the tree (n: the index
 * of its name among the element's <text> children, each name once). The
 * script reads names from the text, as it does a drawn frame's. */
static void put_narrow(const struct svg *g, FILE *f)
{
    if (g->narrow == 0) {
        return;
    }
    uint32_t *first = xmalloc(g->narrow * sizeof *first);
    uint32_t nnames = 0;
    struct idmap map = IDMAP_INIT;
    struct names_ctx c = {g, first, NULL};
    fputs("<g id=\"undrawn\" display=\"none\" data-f=\"", f);
    for (size_t i = 1; i < g->n; i++) {
        const struct svg_node *nd = &g->nodes[i];
        if (!is_narrow(g, nd->cost)) {
            continue;
        }
        c.key = nd->name;
        idmap_reserve(&map, (size_t)nnames + 1, name_hash, &c);
        size_t slot;
        uint32_t k = idmap_find(&map, idmap_hash_str(nd->name), name_same, &c, &slot);
        if (k == IDMAP_NONE) {
            k = nnames++;
            first[k] = (uint32_t)i;
            idmap_put(&map, slot, k);
        }
        fprintf(f, "%" PRIu64 ",%" PRIu64 ",%u,%u;", nd->x, nd->cost, nd->depth, k);
    }
    fputs("\">", f);
    for (uint32_t k = 0; k < nnames; k++) {
        fputs("<text>", f);
        put_text(g->nodes[first[k]].name, SIZE_MAX, f);
        fputs("</text>", f);
    }
    fputs("</g>\n", f);
    idmap_release(&map);
    free(first);
}

int svg_write(const struct svg *g, FILE *f)
{
    uint64_t total = g->n ? g->nodes[0].cost : 0;
    double span = WIDTH - 2 * PAD;
    int height = TOP + (int)(g->max_depth + 1) * FRAME_H + BOTTOM;
    uint64_t max_delta = 0;
    size_t hidden = 0;
    for (size_t i = 0; i < g->n; i++) {
        const struct svg_node *nd = &g->nodes[i];
        uint64_t d = nd->cost > nd->base ? nd->cost - nd->base : nd->base - nd->cost;
        if (i > 0 && d > max_delta) {
            max_delta = d;
        }
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    fprintf(f,
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" data-unit=\"",
            (int)WIDTH, height, (int)WIDTH, height);
    put_text(g->o.unit ? g->o.unit : "", SIZE_MAX, f);
    fputs("\" data-total=\"", f);
    fprintf(f, "%" PRIu64 "\">\n", total);
    fputs("<style>text{font-family:monospace;font-size:12px;fill:#000}.f{cursor:pointer}.f:hover rect{stroke:#000;"
          "stroke-width:0.5}.b{cursor:pointer;fill:#0645ad}</style>\n",
          f);
    fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
    put_script(f);
    fputs("]]></script>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f8\"/>\n", (int)WIDTH, height);
    fprintf(f, "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" style=\"font-size:15px\">", (int)WIDTH / 2);
    put_text(g->o.title ? g->o.title : "", SIZE_MAX, f);
    fputs("</text>\n", f);
    if (g->o.subtitle) {
        fprintf(f, "<text x=\"%d\" y=\"38\" text-anchor=\"middle\">", (int)WIDTH / 2);
        put_text(g->o.subtitle, SIZE_MAX, f);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text id=\"reset\" class=\"b\" x=\"%g\" y=\"56\">[reset zoom]</text>\n", PAD);
    fprintf(f, "<text id=\"search\" class=\"b\" x=\"%g\" y=\"56\" text-anchor=\"end\">[search]</text>\n", WIDTH - PAD);
    fprintf(f, "<text id=\"matched\" x=\"%g\" y=\"%d\" text-anchor=\"end\"> </text>\n", WIDTH - PAD, height - 10);
    fprintf(f, "<text id=\"details\" x=\"%g\" y=\"%d\"> </text>\n", PAD, height - 10);
    for (size_t i = 0; i < g->n; i++) {
        const struct svg_node *nd = &g->nodes[i];
        double w = total ? (double)nd->cost / (double)total * span : 0.0;
        if (w < MIN_PX && i > 0) {
            /* Too narrow to see: listed after the drawn frames. */
            hidden++;
            continue;
        }
        double x = PAD + (total ? (double)nd->x / (double)total * span : 0.0);
        int y = g->o.flame ? height - BOTTOM - (int)(nd->depth + 1) * FRAME_H : TOP + (int)nd->depth * FRAME_H;
        char fill[48];
        fill_of(g, nd, max_delta, fill, sizeof fill);
        fprintf(f, "<g class=\"f\" data-d=\"%u\" data-x=\"%" PRIu64 "\" data-v=\"%" PRIu64 "\"", nd->depth, nd->x,
                nd->cost);
        if (g->o.diff) {
            fprintf(f, " data-base=\"%" PRIu64 "\"", nd->base);
        }
        fputs("><title>", f);
        put_text(nd->name, SIZE_MAX, f);
        fprintf(f, "\n%" PRIu64 " %s (%.2f%%)", nd->cost, g->o.unit ? g->o.unit : "", pct(nd->cost, total));
        if (g->o.diff) {
            int64_t d = (int64_t)(nd->cost - nd->base);
            fprintf(f, "\nbase %" PRIu64 ", change %+" PRId64 "", nd->base, d);
        }
        fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>", x, y, w,
                FRAME_H - 1, fill);
        fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FRAME_H - 4);
        size_t fits = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
        size_t chars = utf8_chars(nd->name);
        if (fits >= 2 && chars > fits) {
            put_text(nd->name, prefix_bytes(nd->name, fits - 1), f);
            fputs("\xe2\x80\xa6", f);
        } else if (fits >= 2) {
            put_text(nd->name, SIZE_MAX, f);
        }
        fputs("</text></g>\n", f);
    }
    put_narrow(g, f);
    if (hidden || g->cut_deep || g->cut_many || g->cut_narrow) {
        fprintf(f, "<text x=\"%g\" y=\"%d\" style=\"font-size:10px\">", WIDTH / 2, height - 24);
        const char *sep = "";
        if (hidden) {
            fprintf(f, "%zu frames narrower than %.1f px not drawn (the search counts them)", hidden, MIN_PX);
            sep = "; ";
        }
        if (g->cut_narrow) {
            fprintf(f, "%sthe search counts only the first %d of them", sep, SVG_MAX_NARROW);
            sep = "; ";
        }
        if (g->cut_deep) {
            fprintf(f, "%s%zu stacks cut after %d levels", sep, g->cut_deep, SVG_MAX_DEPTH);
            sep = "; ";
        }
        if (g->cut_many) {
            fprintf(f, "%s%zu frames past the limit of %d not drawn", sep, g->cut_many, SVG_MAX_FRAMES);
        }
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- from a call tree ---- */

void svg_add_tree(struct svg *g, const struct calltree *t, enum calltree_orient o, enum cost_type c,
                  const char *root_name)
{
    const struct calltree_node *root = calltree_node(t, o, 0);
    uint64_t total = root->incl.v[c];
    svg_frame(g, 0, root_name, total, 0);
    /* Depth-first with an explicit stack: stacks may be deeper than the C
     * stack should recurse. Frames too narrow to draw are walked too, for
     * the search, up to SVG_MAX_NARROW of them: past it their callers or
     * callees are not asked for (the bottom-up tree is built as it is
     * walked, and a hostile recording's tree may have millions of such
     * nodes). */
    uint32_t *stack = NULL;
    size_t cap = 0, sp = 0;
    uint32_t n;
    const uint32_t *kids = calltree_children(t, o, 0, &n);
    xgrow((void **)&stack, &cap, n, sizeof *stack);
    for (uint32_t i = n; i-- > 0;) {
        stack[sp++] = kids[i];
    }
    while (sp > 0) {
        uint32_t id = stack[--sp];
        const struct calltree_node *nd = calltree_node(t, o, id);
        uint64_t v = nd->incl.v[c];
        if (v == 0) {
            continue;
        }
        svg_frame(g, nd->depth, calltree_name(t, o, id), v, 0);
        int narrow = is_narrow(g, v);
        if (narrow && g->narrow >= SVG_MAX_NARROW) {
            if (v > nd->self.v[c]) {
                g->cut_narrow++;
            }
            continue;
        }
        if (nd->depth >= SVG_MAX_DEPTH || (!narrow && g->n - g->narrow >= SVG_MAX_FRAMES)) {
            /* Its callers or callees would not be kept: not asked for. */
            if (v > nd->self.v[c]) {
                *(nd->depth >= SVG_MAX_DEPTH ? &g->cut_deep : &g->cut_many) += 1;
            }
            continue;
        }
        kids = calltree_children(t, o, id, &n);
        xgrow((void **)&stack, &cap, sp + n, sizeof *stack);
        for (uint32_t i = n; i-- > 0;) {
            stack[sp++] = kids[i];
        }
    }
    free(stack);
}
