// SPDX-License-Identifier: MIT
// Runs the script of a memprint --svg file under node with a minimal DOM:
// enough of the elements the script touches to drive zoom and search.
// Input (argv[2]): JSON {script, unit, frames: [{attrs, title, rect, text}],
// undrawn: null or {f, names} (the hidden element of frames too narrow to
// draw), search, click, reset}. Output: JSON {matched, rects: [{x, width, display, fill, text}]}.
'use strict';
const fs = require('fs');
const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

function node(value) {
    return {nodeValue: value};
}

function element(attrs, children) {
    const e = {
        attrs: Object.assign({}, attrs),
        children: children || {},
        listeners: {},
        style: {display: ''},
        // As in a browser: an element with no text has no child node.
        firstChild: attrs._text ? node(attrs._text) : null,
        get textContent() {
            return this.firstChild ? this.firstChild.nodeValue : '';
        },
        set textContent(v) {
            this.firstChild = v === '' ? null : node(String(v));
        },
        getAttribute(n) {
            return n in this.attrs ? String(this.attrs[n]) : null;
        },
        setAttribute(n, v) {
            this.attrs[n] = String(v);
        },
        getElementsByTagName(t) {
            return this.children[t] || [];
        },
        addEventListener(ev, fn) {
            this.listeners[ev] = fn;
        },
    };
    return e;
}

const frames = input.frames.map(f => {
    const title = element({_text: f.title});
    const rect = element(f.rect);
    const text = element({x: f.rect.x, _text: f.text});
    return element(f.attrs, {title: [title], rect: [rect], text: [text]});
});
const byId = {reset: element({}), search: element({}), matched: element({_text: ' '}), details: element({_text: ' '})};
if (input.undrawn) {
    byId.undrawn = element({'data-f': input.undrawn.f}, {text: input.undrawn.names.map(n => element({_text: n}))});
}
let onload = null;
global.document = {
    documentElement: element({'data-unit': input.unit}),
    getElementsByClassName(c) {
        return c === 'f' ? frames : [];
    },
    getElementById(id) {
        return byId[id];
    },
};
global.window = {
    addEventListener(ev, fn) {
        if (ev === 'load') {
            onload = fn;
        }
    },
};
global.prompt = () => input.search;
global.alert = () => {};
eval(input.script);
onload();
byId.search.listeners.click();
const matched = byId.matched.textContent;
if (input.click !== null) {
    frames[input.click].listeners.click();
}
if (input.reset) {
    byId.reset.listeners.click();
}
const rects = frames.map(f => {
    const r = f.getElementsByTagName('rect')[0];
    return {x: +r.getAttribute('x'), width: +r.getAttribute('width'), display: f.style.display,
            fill: r.getAttribute('fill'), text: f.getElementsByTagName('text')[0].textContent};
});
process.stdout.write(JSON.stringify({matched, rects}));
